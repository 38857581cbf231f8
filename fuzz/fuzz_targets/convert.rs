//! Fuzz target: any bytes as an export → the whole pipeline with the Paraver writer into memory
//! → the trace checker. Half the inputs (by length) are opened as the browser opens a file:
//! through the read-only VFS with a block cache far smaller than the input, so that its loads,
//! short reads and the table scans made side by side (engine/prepass/lockstep.rs) are fuzzed too; the
//! others with `Export::from_bytes`.
//!
//! A finding is a panic (integer overflows included when built with debug assertions, as
//! scripts/fuzz.sh does), a hang or out-of-memory (libFuzzer's -timeout / -rss_limit_mb), an error
//! whose message does not name the input, or a successful conversion whose trace the checker
//! rejects.

#![no_main]

use libfuzzer_sys::fuzz_target;
use prvsight::nsys::Export;
use prvsight::paraver::check::{check_readers, CheckOptions};
use prvsight::paraver::ParaverWriter;
use prvsight::vfs::{self, CacheConfig};
use prvsight::{pipeline, Options};

const LABEL: &str = "fuzz-input.sqlite";

/// Two blocks of 4 KiB: most page reads of a scan load a block, and scans side by side matter.
const SMALL_CACHE: CacheConfig = CacheConfig {
    block_bytes: 4096,
    blocks: 2,
};

fn open(data: &[u8]) -> prvsight::Result<Export> {
    if data.len() % 2 == 0 {
        Export::open_source(LABEL, Box::new(data.to_vec()), SMALL_CACHE)
    } else {
        Export::from_bytes(data, LABEL)
    }
}

fuzz_target!(|data: &[u8]| {
    let converted = open(data).and_then(|ex| {
        let (mut prv, mut pcf, mut row) = (Vec::new(), Vec::new(), Vec::new());
        {
            let mut w =
                ParaverWriter::new(Box::new(&mut prv), Box::new(&mut pcf), Box::new(&mut row));
            pipeline::run(
                std::slice::from_ref(&ex),
                &Options::default(),
                &mut [&mut w],
                &mut |_| true,
            )?;
        }
        Ok((prv, pcf, row))
    });
    match converted {
        Err(e) => {
            let msg = e.to_string();
            assert!(msg.contains(LABEL), "error does not name the input: {msg}");
        }
        Ok((prv, pcf, row)) => {
            let pcf = String::from_utf8(pcf).expect(".pcf is UTF-8");
            let row = String::from_utf8(row).expect(".row is UTF-8");
            let report = check_readers(&prv[..], &pcf, &row, &CheckOptions::default());
            assert!(report.is_ok(), "invalid trace:\n{report}");
        }
    }
});
