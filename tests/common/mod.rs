//! Helpers shared by the integration tests: where the real exports are, converting in memory, and
//! a small independent reader of the produced .prv that counts what tests assert.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::PathBuf;

use prvsight::nsys::Export;
use prvsight::paraver::ParaverWriter;
use prvsight::pipeline::{self, Summary};
use prvsight::Options;

/// `../shared/traces` beside the repository, if this checkout has it.
pub fn shared_traces() -> Option<PathBuf> {
    let p = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/traces"));
    if p.is_dir() {
        Some(p)
    } else {
        eprintln!(
            "SKIP: ../shared/traces is not present; tests on the shared real exports are skipped"
        );
        None
    }
}

/// Every conversion input of ../shared/traces: each export alone, and each multi-rank folder of
/// `generated/` as one input set.
pub fn shared_inputs() -> Option<Vec<Vec<PathBuf>>> {
    let root = shared_traces()?;
    let sqlite_files = |dir: PathBuf| {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "sqlite"))
            .collect();
        files.sort();
        files
    };
    let mut inputs: Vec<Vec<PathBuf>> = Vec::new();
    for dir in [root.clone(), root.join("generated")] {
        inputs.extend(sqlite_files(dir).into_iter().map(|f| vec![f]));
    }
    for ranks in ["generated/mpi4", "generated/mpi4_nsys2022.4"] {
        inputs.push(sqlite_files(root.join(ranks)));
    }
    Some(inputs)
}

pub fn data(name: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data")).join(name)
}

pub struct Converted {
    pub summary: Summary,
    pub prv: String,
    pub pcf: String,
    pub row: String,
}

pub fn convert(paths: &[PathBuf], opts: &Options) -> prvsight::Result<Converted> {
    let exports: Vec<Export> = paths
        .iter()
        .map(|p| Export::open_path(p))
        .collect::<prvsight::Result<_>>()?;
    let (mut prv, mut pcf, mut row) = (Vec::new(), Vec::new(), Vec::new());
    let summary = {
        let mut w = ParaverWriter::new(Box::new(&mut prv), Box::new(&mut pcf), Box::new(&mut row));
        pipeline::run(&exports, opts, &mut [&mut w], &mut |_| true)?
    };
    Ok(Converted {
        summary,
        prv: String::from_utf8(prv).expect("prv is UTF-8"),
        pcf: String::from_utf8(pcf).expect("pcf is UTF-8"),
        row: String::from_utf8(row).expect("row is UTF-8"),
    })
}

/// Two conversions of the same inputs wrote the same files and counted the same records.
pub fn assert_same_output(a: &Converted, b: &Converted, what: &str) {
    assert!(a.prv == b.prv, "{what}: .prv differs");
    assert_eq!(a.pcf, b.pcf, "{what}: .pcf");
    assert_eq!(a.row, b.row, "{what}: .row");
    assert_eq!(a.summary.counts, b.summary.counts, "{what}: counts");
}

/// What a .prv body holds, counted independently of the writer.
#[derive(Default, Debug)]
pub struct PrvCounts {
    pub header: String,
    pub states: u64,
    pub events: u64,
    pub comms: u64,
    /// type → number of occurrences with a nonzero value (= interval begins for region types).
    pub begins: BTreeMap<u64, u64>,
    /// (type, value) → occurrences.
    pub values: BTreeMap<(u64, u64), u64>,
    /// comm tag → count.
    pub tags: BTreeMap<u64, u64>,
    /// first time field of every body line is non-decreasing.
    pub sorted: bool,
}

pub fn count_prv(prv: &str) -> PrvCounts {
    let mut c = PrvCounts {
        sorted: true,
        ..Default::default()
    };
    let mut last = 0u64;
    for (i, line) in prv.lines().enumerate() {
        if i == 0 {
            c.header = line.to_owned();
            continue;
        }
        let f: Vec<u64> = line
            .split(':')
            .map(|x| x.parse().expect("integer field"))
            .collect();
        let t = f[5];
        if t < last {
            c.sorted = false;
        }
        last = t;
        match f[0] {
            1 => c.states += 1,
            2 => {
                c.events += 1;
                for p in f[6..].chunks(2) {
                    if p[1] != 0 {
                        *c.begins.entry(p[0]).or_insert(0) += 1;
                    }
                    *c.values.entry((p[0], p[1])).or_insert(0) += 1;
                }
            }
            3 => {
                c.comms += 1;
                *c.tags.entry(f[14]).or_insert(0) += 1;
            }
            other => panic!("unexpected record type {other}"),
        }
    }
    c
}

/// One scalar from SQL (`SELECT count(*) ...`); 0 if the table does not exist.
pub fn sql_count(path: &std::path::Path, sql: &str) -> u64 {
    let conn =
        rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    conn.query_row(sql, [], |r| r.get::<_, i64>(0))
        .map(|n| n as u64)
        .unwrap_or(0)
}

/// The export `bytes` after `sql` (run on an in-memory copy), as bytes again.
pub fn mutated(bytes: &[u8], sql: &str) -> Vec<u8> {
    use rusqlite::{Connection, MAIN_DB};
    let mut c = Connection::open_in_memory().unwrap();
    c.deserialize_read_exact(MAIN_DB, bytes, bytes.len(), false)
        .unwrap();
    c.execute_batch(sql)
        .unwrap_or_else(|e| panic!("test setup `{sql}`: {e}"));
    let out = c.serialize(MAIN_DB).unwrap().to_vec();
    out
}
