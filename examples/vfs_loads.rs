//! How many reads of the file a conversion makes through the browser's block cache, run natively
//! over the same VFS (src/vfs) with a given block size and count: what the page's reader pays per
//! `FileReaderSync` call (docs/PERFORMANCE.md, "How to reproduce").
//!
//!   cargo run --release --example vfs_loads -- EXPORT.sqlite BLOCK_MIB BLOCKS
use prvsight::nsys::Export;
use prvsight::options::ReadAhead;
use prvsight::paraver::ParaverWriter;
use prvsight::vfs::{self, source::FileSource, CacheConfig};
use prvsight::{pipeline, Options};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, path, block_mib, blocks] = &args[..] else {
        return Err("usage: vfs_loads EXPORT.sqlite BLOCK_MIB BLOCKS".into());
    };
    let (block_mib, blocks): (usize, usize) = (block_mib.parse()?, blocks.parse()?);
    let label = format!("{path} ({block_mib} MiB x {blocks})");
    let started = std::time::Instant::now();
    {
        let config = CacheConfig {
            block_bytes: block_mib << 20,
            blocks,
        };
        let ex = Export::open_source(&label, Box::new(FileSource::open(path.as_ref())?), config)?;
        let sink = || Box::new(std::io::sink());
        let mut w = ParaverWriter::new(sink(), sink(), sink());
        // One thread, as the page's reader: the second thread would open the file again.
        let opts = Options {
            read_ahead: ReadAhead::Off,
            ..Options::default()
        };
        pipeline::run(&[ex], &opts, &mut [&mut w], &mut |_| true)?;
    }
    let st = vfs::closed_stats(&label).ok_or("no statistics recorded")?;
    println!(
        "{label}: {} loads, {} MiB loaded, {:.1} s",
        st.source_reads,
        st.source_bytes >> 20,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
