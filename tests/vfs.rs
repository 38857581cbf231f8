//! The read-only VFS (the browser's way of reading a user's file) run natively over
//! `std::fs::File`: every export must give exactly what a normal SQLite open gives, with small
//! and default block caches, and bad files must give the same clear errors.

#![cfg(not(target_family = "wasm"))]

mod common;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use prvsight::nsys::Export;
use prvsight::paraver::ParaverWriter;
use prvsight::pipeline;
use prvsight::vfs::{self, source::FileSource, CacheConfig};
use prvsight::{Error, Options};

fn sample() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/www/samples/testcuda_report1.sqlite"
    ))
}

/// Every real export we can reach: the shipped sample, then ../shared/traces when present.
fn exports() -> Vec<PathBuf> {
    let mut v = vec![sample()];
    let Some(shared) = common::shared_traces() else {
        return v;
    };
    let mut dirs = vec![shared];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "sqlite") {
                v.push(p);
            }
        }
    }
    v.sort();
    v
}

fn open_vfs(p: &Path, config: CacheConfig) -> prvsight::Result<Export> {
    let label = p.display().to_string();
    let src = FileSource::open(p).map_err(|e| Error::Unreadable {
        file: label.clone(),
        detail: e.to_string(),
    })?;
    Export::open_source(&label, Box::new(src), config)
}

type Outputs = (Vec<u8>, Vec<u8>, Vec<u8>);

fn convert(exports: &[Export]) -> prvsight::Result<Outputs> {
    let (mut prv, mut pcf, mut row) = (Vec::new(), Vec::new(), Vec::new());
    {
        let mut w = ParaverWriter::new(Box::new(&mut prv), Box::new(&mut pcf), Box::new(&mut row));
        pipeline::run(exports, &Options::default(), &mut [&mut w], &mut |_| true)?;
    }
    Ok((prv, pcf, row))
}

/// Result of converting, as bytes or as the error message (some real exports have nothing to
/// convert, which must then fail the same way on both paths).
fn outcome(r: prvsight::Result<Outputs>) -> Result<Outputs, String> {
    r.map_err(|e| e.to_string())
}

const TINY: CacheConfig = CacheConfig {
    block_bytes: 4096,
    blocks: 2,
};

#[test]
fn every_export_converts_to_the_same_bytes_as_a_normal_open() {
    for p in exports() {
        let direct = outcome(Export::open_path(&p).and_then(|e| convert(&[e])));
        for config in [CacheConfig::default(), TINY] {
            let via = outcome(open_vfs(&p, config).and_then(|e| convert(&[e])));
            match (&direct, &via) {
                (Ok(a), Ok(b)) => {
                    assert!(
                        a.0 == b.0,
                        "{}: .prv differs through the VFS ({config:?})",
                        p.display()
                    );
                    assert!(
                        a.1 == b.1 && a.2 == b.2,
                        "{}: .pcf/.row differ ({config:?})",
                        p.display()
                    );
                    assert!(!a.0.is_empty());
                }
                (Err(a), Err(b)) => assert_eq!(a, b, "{}", p.display()),
                _ => panic!(
                    "{}: direct {:?} but VFS {:?}",
                    p.display(),
                    direct.is_ok(),
                    via.is_ok()
                ),
            }
        }
    }
}

#[test]
fn multi_rank_inputs_merge_the_same_way() {
    let Some(traces) = common::shared_traces() else {
        return;
    };
    let dir = traces.join("generated/mpi4");
    let paths: Vec<PathBuf> = (0..4)
        .map(|r| dir.join(format!("rank{r}.sqlite")))
        .collect();
    let direct: Vec<Export> = paths
        .iter()
        .map(|p| Export::open_path(p).unwrap())
        .collect();
    let via: Vec<Export> = paths
        .iter()
        .map(|p| open_vfs(p, CacheConfig::default()).unwrap())
        .collect();
    let (a, b) = (convert(&direct).unwrap(), convert(&via).unwrap());
    assert!(a == b, "4-rank trace differs through the VFS");
    // 4 processes (one per rank) in the .row's APPL level.
    let row = String::from_utf8(b.2).unwrap();
    assert!(row.contains("LEVEL TASK SIZE 4"), "{row}");
}

#[test]
fn queries_answer_the_same_and_the_cache_saves_reads() {
    let p = sample();
    let sql = "SELECT count(*), sum(length(value)) FROM StringIds";
    let direct =
        rusqlite::Connection::open_with_flags(&p, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let expect: (i64, i64) = direct
        .query_row(sql, [], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap();
    let label = "stats-probe.sqlite";
    let conn = vfs::open_connection(
        label,
        Box::new(FileSource::open(&p).unwrap()),
        CacheConfig::default(),
    )
    .unwrap();
    let got: (i64, i64) = conn
        .query_row(sql, [], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap();
    assert_eq!(got, expect);
    drop(conn);
    let st = vfs::closed_stats(label).expect("stats recorded at close");
    // The 577,536-byte file fits in one 1 MiB block: one source read serves every page.
    assert_eq!(st.source_reads, 1);
    assert_eq!(st.source_bytes, 577_536);
    assert!(st.reads > 10, "SQLite read many pages: {st:?}");
}

#[test]
fn temporary_tables_go_to_the_default_vfs() {
    // A read-only export still lets SQLite make temp files (sorts, temp tables); our VFS hands
    // them to the default one.
    let conn = vfs::open_connection(
        "temp-probe",
        Box::new(FileSource::open(&sample()).unwrap()),
        TINY,
    )
    .unwrap();
    conn.execute_batch("PRAGMA temp_store = FILE; CREATE TEMP TABLE t AS SELECT id, value FROM StringIds ORDER BY value DESC;")
        .unwrap();
    let n: i64 = conn
        .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
        .unwrap();
    let m: i64 = conn
        .query_row("SELECT count(*) FROM StringIds", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, m);
    assert!(n > 100);
    // Writing to the export itself is refused.
    let e = conn.execute("DELETE FROM StringIds", []).unwrap_err();
    assert!(e.to_string().contains("readonly"), "{e}");
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("prvsight-vfs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn bad_files_give_the_clear_errors() {
    let p = tmp("notes.sqlite");
    std::fs::write(
        &p,
        "plain text, long enough to pass for a file of some sort at first sight".repeat(3),
    )
    .unwrap();
    let e = open_vfs(&p, TINY).err().unwrap();
    assert!(
        matches!(e, Error::NotSqlite { .. }) && e.to_string().contains("SQLite header"),
        "{e}"
    );

    std::fs::write(&p, b"").unwrap();
    assert!(open_vfs(&p, TINY)
        .err()
        .unwrap()
        .to_string()
        .contains("empty (0 bytes)"));

    std::fs::write(
        &p,
        [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 1, 2, 3, 4, 5, 6, 7],
    )
    .unwrap();
    assert!(open_vfs(&p, TINY)
        .err()
        .unwrap()
        .to_string()
        .contains("gzip"));
}

#[test]
fn truncated_exports_fail_like_a_normal_open() {
    let bytes = std::fs::read(sample()).unwrap();
    let p = tmp("cut.sqlite");
    for cut in [100, 4096, 40_000, bytes.len() / 2, bytes.len() - 4096] {
        std::fs::write(&p, &bytes[..cut]).unwrap();
        let direct = outcome(Export::open_path(&p).and_then(|e| convert(&[e])));
        let via = outcome(open_vfs(&p, TINY).and_then(|e| convert(&[e])));
        match (&direct, &via) {
            (Err(a), Err(b)) => {
                assert_eq!(a, b, "cut {cut}");
                assert!(b.contains("cut.sqlite"), "{b}");
            }
            (Ok(a), Ok(b)) => assert!(a == b, "cut {cut}: different outputs"),
            _ => panic!(
                "cut {cut}: direct {direct:?} vs VFS {via:?}",
                direct = direct.is_ok(),
                via = via.is_ok()
            ),
        }
    }
}

/// A database whose three tables' pages interleave through the file, as nsys writes them: rows
/// inserted in turns, 600 bytes each, so that every table spans the whole ~6 MiB file.
fn interleaved_tables(path: &Path) {
    let _ = std::fs::remove_file(path);
    let mut c = rusqlite::Connection::open(path).unwrap();
    let tx = c.transaction().unwrap();
    for t in ["a", "b", "c"] {
        tx.execute_batch(&format!(
            "CREATE TABLE {t} (id INTEGER PRIMARY KEY, v INTEGER, pad TEXT)"
        ))
        .unwrap();
    }
    for i in 0..3_000i64 {
        for t in ["a", "b", "c"] {
            tx.execute(
                &format!("INSERT INTO {t} (v, pad) VALUES (?1, ?2)"),
                rusqlite::params![i, "x".repeat(600)],
            )
            .unwrap();
        }
    }
    tx.commit().unwrap();
}

#[test]
fn scans_side_by_side_read_the_file_once_between_them() {
    use prvsight::engine::prepass::{Prepass, Sql};
    use prvsight::engine::select::{Select, Val};
    let path =
        std::env::temp_dir().join(format!("prvsight-interleave-{}.sqlite", std::process::id()));
    interleaved_tables(&path);
    let blocks = std::fs::metadata(&path).unwrap().len().div_ceil(64 << 10);
    // Loads of 64 KiB blocks (4 held) for the three scans, and the sums they computed; the scans
    // through SQLite, or by the direct reader of the file format (its pages come through the
    // same VFS, whose position the side-by-side scans follow).
    let run = |together: bool, direct: bool| -> (u64, Vec<i64>) {
        let label = format!("together-{together}-direct-{direct}.sqlite");
        let config = CacheConfig {
            block_bytes: 64 << 10,
            blocks: 4,
        };
        let conn = vfs::open_connection(&label, Box::new(FileSource::open(&path).unwrap()), config)
            .unwrap();
        // SQLite's own page cache kept small as well (it would otherwise hold the whole file).
        conn.execute_batch("PRAGMA cache_size = -64").unwrap();
        let mut sums = vec![0i64; 3];
        let mut sets = vec![Prepass::new(&conn, direct)];
        for (i, (sum, t)) in sums.iter_mut().zip(["a", "b", "c"]).enumerate() {
            if !together && i > 0 {
                sets.push(Prepass::new(&conn, direct));
            }
            let query = Select::new(t).output("v", Val::col("v"));
            sets.last_mut().unwrap().add(
                Some(&query),
                Sql::Query,
                Box::new(move |r| {
                    let rusqlite::types::ValueRef::Integer(v) =
                        r.expect("a sound file").value(0)?
                    else {
                        panic!("v is an integer")
                    };
                    *sum += v;
                    Ok(true)
                }),
            );
        }
        for set in sets {
            assert!(set.run().iter().all(|r| r.is_ok()));
        }
        drop(conn);
        (vfs::closed_stats(&label).unwrap().source_reads, sums)
    };
    for direct in [false, true] {
        let (apart, sums_apart) = run(false, direct);
        let (together, sums_together) = run(true, direct);
        let expect = (0..3_000i64).sum::<i64>();
        assert_eq!(sums_apart, [expect; 3]);
        assert_eq!(sums_together, [expect; 3]);
        // One after the other: the file three times over. Side by side: about once.
        assert!(
            apart >= 3 * blocks - 3,
            "{apart} loads of {blocks} blocks (direct: {direct})"
        );
        assert!(
            together <= blocks + blocks / 4,
            "{together} loads of {blocks} blocks (direct: {direct})"
        );
    }
    let _ = std::fs::remove_file(&path);
}

/// A source that counts the reads made of it.
struct Counted {
    file: FileSource,
    reads: Arc<AtomicUsize>,
}

impl vfs::ReadAt for Counted {
    fn size(&self) -> u64 {
        self.file.size()
    }
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        self.reads.fetch_add(1, Ordering::Relaxed);
        self.file.read_exact_at(offset, buf)
    }
}

#[test]
fn opening_reads_the_header_as_the_first_block_which_the_cache_then_takes() {
    // In the browser each read of the user's file costs milliseconds whatever its size: the
    // header check and the cache's first block are one read, not two.
    let expected = convert(&[Export::open_path(&sample()).unwrap()]).unwrap();
    let reads = Arc::new(AtomicUsize::new(0));
    for (config, blocks) in [
        // The whole sample in one block; then blocks of 64 KiB, enough to hold all of them.
        (CacheConfig::default(), 1),
        (
            CacheConfig {
                block_bytes: 64 << 10,
                blocks: 16,
            },
            577_536usize.div_ceil(64 << 10),
        ),
    ] {
        reads.store(0, Ordering::Relaxed);
        let src = Counted {
            file: FileSource::open(&sample()).unwrap(),
            reads: reads.clone(),
        };
        let ex = Export::open_source("testcuda_report1.sqlite", Box::new(src), config).unwrap();
        assert_eq!(convert(&[ex]).unwrap(), expected, "{config:?}");
        // Every block read once (the cache holds them all), the first with the header check.
        assert_eq!(reads.load(Ordering::Relaxed), blocks, "{config:?}");
    }
}
