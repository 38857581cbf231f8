//! How often the browser's block cache loads each block of an export over one conversion: the
//! same VFS and cache as the page, run natively over the file
//! (docs/PERFORMANCE.md, "How to reproduce").
//!
//!   cargo run --release --example block_loads -- EXPORT.sqlite [BLOCKS]
//!
//! BLOCKS: 1 MiB blocks the cache holds (default: what the page gives this one file).

use std::path::Path;
use std::process::ExitCode;

use prvsight::nsys::Export;
use prvsight::paraver::ParaverWriter;
use prvsight::vfs::{self, source::FileSource, CacheConfig};
use prvsight::{pipeline, Options};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: block_loads EXPORT.sqlite [BLOCKS]");
        return ExitCode::from(2);
    };
    match run(Path::new(path), args.get(1)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("block_loads: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(path: &Path, blocks: Option<&String>) -> Result<(), Box<dyn std::error::Error>> {
    let size = std::fs::metadata(path)?.len();
    let mut config = CacheConfig::for_files(&[size])[0];
    if let Some(b) = blocks {
        config.blocks = b.parse()?;
    }
    let label = "block-loads.sqlite";
    let export = Export::open_source(label, Box::new(FileSource::open(path)?), config)?;
    let exports = [export];
    let mut sink = std::io::sink();
    let (mut pcf, mut row) = (Vec::new(), Vec::new());
    {
        let mut w = ParaverWriter::new(Box::new(&mut sink), Box::new(&mut pcf), Box::new(&mut row));
        pipeline::run(&exports, &Options::default(), &mut [&mut w], &mut |_| true)?;
    }
    drop(exports); // closes the file: its cache's statistics are recorded
    let st = vfs::closed_stats(label).ok_or("no statistics recorded")?;
    let file_blocks = size.div_ceil(config.block_bytes as u64);
    println!(
        "{}: {file_blocks} blocks of {} KiB, cache of {}: {} loads ({:.1} per block, {} MiB), {} page reads",
        path.display(),
        config.block_bytes >> 10,
        config.blocks,
        st.source_reads,
        st.source_reads as f64 / file_blocks as f64,
        st.source_bytes >> 20,
        st.reads
    );
    Ok(())
}
