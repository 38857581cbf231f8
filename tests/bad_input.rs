//! Bad input gets one clear error naming the file and the cause — never a panic.

mod common;

use std::path::{Path, PathBuf};

use common::{convert, data};
use prvsight::{Error, Options};

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("prvsight-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn err_of(p: &Path) -> Error {
    match convert(&[p.to_path_buf()], &Options::default()) {
        Ok(_) => panic!("{} converted but should not", p.display()),
        Err(e) => e,
    }
}

#[test]
fn a_text_file_is_not_sqlite() {
    let p = tmp("notes.sqlite");
    std::fs::write(
        &p,
        "this is not a database, just some text that is long enough to look like a file ".repeat(4),
    )
    .unwrap();
    let e = err_of(&p);
    assert!(matches!(e, Error::NotSqlite { .. }), "{e}");
    assert!(
        e.to_string().contains("notes.sqlite") && e.to_string().contains("SQLite header"),
        "{e}"
    );
}

#[test]
fn an_empty_file_says_it_is_empty() {
    let p = tmp("empty.sqlite");
    std::fs::write(&p, b"").unwrap();
    let e = err_of(&p);
    assert!(e.to_string().contains("empty (0 bytes)"), "{e}");
}

#[test]
fn a_gzipped_export_says_to_decompress() {
    let p = tmp("export.sqlite.gz");
    std::fs::write(
        &p,
        [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 1, 2, 3, 4, 5, 6, 7],
    )
    .unwrap();
    assert!(err_of(&p).to_string().contains("gzip"));
}

#[test]
fn a_missing_file_is_named() {
    let e = err_of(Path::new("/nonexistent/dir/report.sqlite"));
    assert!(
        matches!(e, Error::Unreadable { .. })
            && e.to_string().contains("/nonexistent/dir/report.sqlite"),
        "{e}"
    );
}

#[test]
fn a_sqlite_file_that_is_not_an_nsys_export() {
    let p = tmp("other.sqlite");
    let _ = std::fs::remove_file(&p);
    let c = rusqlite::Connection::open(&p).unwrap();
    c.execute_batch(
        "CREATE TABLE customers(id INTEGER, name TEXT); INSERT INTO customers VALUES (1, 'a');",
    )
    .unwrap();
    drop(c);
    let e = err_of(&p);
    assert!(matches!(e, Error::NotNsysExport { .. }), "{e}");
    assert!(
        e.to_string().contains("StringIds") && e.to_string().contains("customers"),
        "{e}"
    );
}

#[test]
fn every_truncated_prefix_gives_an_error_or_a_valid_trace() {
    let bytes = std::fs::read(data("testcuda_report1.sqlite")).unwrap();
    let p = tmp("truncated.sqlite");
    // Prefixes at page-ish granularity (the file has 4 KiB pages) plus odd cuts.
    let mut cuts: Vec<usize> = (0..bytes.len()).step_by(bytes.len() / 40).collect();
    cuts.extend([1, 15, 16, 100, 4095, 4097, bytes.len() - 1]);
    for cut in cuts {
        std::fs::write(&p, &bytes[..cut]).unwrap();
        match convert(std::slice::from_ref(&p), &Options::default()) {
            Ok(out) => {
                // Whatever survived must still be a consistent trace.
                let c = common::count_prv(&out.prv);
                assert!(c.sorted, "cut {cut}: unsorted");
            }
            Err(e) => {
                let msg = e.to_string();
                assert!(
                    msg.contains("truncated.sqlite"),
                    "cut {cut}: message must name the file: {msg}"
                );
            }
        }
    }
}

#[test]
fn a_damaged_file_that_answers_two_reads_differently_is_refused() {
    // Found by the fuzz target: discovery sees an OS runtime call on a thread of its own that the
    // time-ordered read then never gives (SQLite on a damaged record), so the trace would leave
    // that thread without states after the call's start. Natively and from bytes (the page's
    // path) alike: an error naming the file and the thread, never that trace.
    let p = data("fuzz/reads-differ.sqlite");
    let e = err_of(&p);
    let msg = e.to_string();
    assert!(matches!(e, Error::BadData { .. }), "{msg}");
    for part in [
        "reads-differ.sqlite",
        "thread (pid 65602, tid 11272258)",
        "integrity_check",
    ] {
        assert!(msg.contains(part), "{part:?} in {msg}");
    }
    let bytes = std::fs::read(&p).unwrap();
    let ex = prvsight::nsys::Export::from_bytes(&bytes, "reads-differ.sqlite").unwrap();
    let mut out = (Vec::new(), Vec::new(), Vec::new());
    let mut w = prvsight::paraver::ParaverWriter::new(
        Box::new(&mut out.0),
        Box::new(&mut out.1),
        Box::new(&mut out.2),
    );
    let e = prvsight::pipeline::run(&[ex], &Options::default(), &mut [&mut w], &mut |_| true)
        .expect_err("a damaged file that reads differently twice");
    // The same message, the file named as given.
    let path = p.display().to_string();
    assert_eq!(e.to_string(), msg.replace(&path, "reads-differ.sqlite"));
}

#[test]
fn a_missing_required_column_names_table_and_column() {
    let p = tmp("renamed.sqlite");
    std::fs::copy(data("testcuda_report1.sqlite"), &p).unwrap();
    let c = rusqlite::Connection::open(&p).unwrap();
    c.execute_batch("ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL RENAME COLUMN streamId TO stream_id;")
        .unwrap();
    drop(c);
    let e = err_of(&p);
    assert!(matches!(e, Error::Schema { .. }), "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains("CUPTI_ACTIVITY_KIND_KERNEL") && msg.contains("streamId"),
        "{msg}"
    );
}

#[test]
fn absurd_values_are_repaired_with_a_warning_or_refused() {
    let p = tmp("absurd.sqlite");
    std::fs::copy(data("testcuda_report1.sqlite"), &p).unwrap();
    let c = rusqlite::Connection::open(&p).unwrap();
    // One kernel and one memcpy end before they start (the columns are NOT NULL, so no NULL ends here).
    c.execute_batch(
        "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = start - 5 WHERE rowid = (SELECT min(rowid) FROM CUPTI_ACTIVITY_KIND_KERNEL);
         UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET end = start - 1000 WHERE rowid = (SELECT min(rowid) FROM CUPTI_ACTIVITY_KIND_MEMCPY);",
    )
    .unwrap();
    drop(c);
    let out = convert(std::slice::from_ref(&p), &Options::default()).unwrap();
    assert!(common::count_prv(&out.prv).sorted);
    let w = out.summary.warnings.join("\n");
    assert!(
        w.contains("CUPTI_ACTIVITY_KIND_KERNEL: rows whose end is before their start"),
        "{w}"
    );
    assert!(
        w.contains("CUPTI_ACTIVITY_KIND_MEMCPY: rows whose end is before their start"),
        "{w}"
    );

    // A timestamp near 2^63 makes the trace span absurd: refused with a clear message.
    let c = rusqlite::Connection::open(&p).unwrap();
    c.execute_batch(
        "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET end = 9223372036854775000 WHERE rowid = 5;",
    )
    .unwrap();
    drop(c);
    let e = err_of(&p);
    assert!(e.to_string().contains("104 days"), "{e}");
}
