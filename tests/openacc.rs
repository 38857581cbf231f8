//! OpenACC: no public export has OpenACC tables, so this test adds them to the shipped real
//! export with NVIDIA's documented DDL (src/synth/ddl) and rows of a small OpenACC program on its
//! main thread, then checks every event the converter writes for them.

mod common;

use std::path::PathBuf;

use common::{convert, count_prv, data};
use prvsight::Options;

/// One OpenACC event: (table suffix, eventKind, name, start offset, duration, line, bytes, kernel).
type Row = (
    &'static str,
    i64,
    &'static str,
    i64,
    i64,
    i64,
    Option<i64>,
    Option<&'static str>,
);

/// A Jacobi step: compute construct with an upload, a launch and an implicit wait, then a download.
const EVENTS: &[Row] = &[
    (
        "OTHER",
        9,
        "acc_compute_construct",
        0,
        90_000,
        42,
        None,
        None,
    ),
    (
        "DATA",
        5,
        "acc_enqueue_upload",
        1_000,
        20_000,
        42,
        Some(8_388_608),
        None,
    ),
    (
        "LAUNCH",
        4,
        "acc_enqueue_launch",
        22_000,
        5_000,
        43,
        None,
        Some("jacobi_43_gpu"),
    ),
    (
        "OTHER",
        8,
        "acc_implicit_wait",
        30_000,
        50_000,
        43,
        None,
        None,
    ),
    (
        "DATA",
        6,
        "acc_enqueue_download",
        100_000,
        15_000,
        48,
        Some(8_388_608),
        None,
    ),
    ("OTHER", 7, "acc_wait", 120_000, 30_000, 50, None, None),
];

fn with_openacc() -> PathBuf {
    let dir =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("openacc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("openacc.sqlite");
    std::fs::copy(data("testcuda_report1.sqlite"), &path).unwrap();
    let c = rusqlite::Connection::open(&path).unwrap();
    for t in [
        "CUPTI_ACTIVITY_KIND_OPENACC_DATA",
        "CUPTI_ACTIVITY_KIND_OPENACC_LAUNCH",
        "CUPTI_ACTIVITY_KIND_OPENACC_OTHER",
    ] {
        c.execute_batch(prvsight::synth::ddl::table(t).unwrap().script)
            .unwrap();
    }
    let gtid: i64 = c
        .query_row(
            "SELECT globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    // After the last CUDA call, so the OpenACC events set the thread state themselves.
    let t0: i64 = c
        .query_row(
            "SELECT MAX(end) FROM CUPTI_ACTIVITY_KIND_RUNTIME",
            [],
            |r| r.get::<_, i64>(0),
        )
        .unwrap()
        + 1_000_000;
    let mut next_id: i64 = c
        .query_row("SELECT MAX(id) + 1 FROM StringIds", [], |r| {
            r.get::<_, i64>(0)
        })
        .unwrap();
    let mut sid = |s: &str| -> i64 {
        next_id += 1;
        c.execute(
            "INSERT INTO StringIds VALUES (?1, ?2)",
            rusqlite::params![next_id, s],
        )
        .unwrap();
        next_id
    };
    let (file, func) = (sid("jacobi.c"), sid("main"));
    for (table, kind, name, off, dur, line, bytes, kernel) in EVENTS {
        let name_id = sid(name);
        let t = format!("CUPTI_ACTIVITY_KIND_OPENACC_{table}");
        let (start, end) = (t0 + off, t0 + off + dur);
        let common = "start, end, nameId, globalTid, eventKind, DeviceType, lineNo, cuDeviceId, cuContextId, cuStreamId, srcFile, funcName";
        match *table {
            "DATA" => c.execute(
                &format!("INSERT INTO {t} ({common}, bytes) VALUES (?1, ?2, ?3, ?4, ?5, 4, ?6, 0, 1, 13, ?7, ?8, ?9)"),
                rusqlite::params![start, end, name_id, gtid, kind, line, file, func, bytes],
            ),
            "LAUNCH" => {
                let k = sid(kernel.unwrap());
                c.execute(
                    &format!("INSERT INTO {t} ({common}, numGangs, numWorkers, vectorLength, kernelName) VALUES (?1, ?2, ?3, ?4, ?5, 4, ?6, 0, 1, 13, ?7, ?8, 256, 1, 128, ?9)"),
                    rusqlite::params![start, end, name_id, gtid, kind, line, file, func, k],
                )
            }
            _ => c.execute(
                &format!("INSERT INTO {t} ({common}) VALUES (?1, ?2, ?3, ?4, ?5, 4, ?6, 0, 1, 13, ?7, ?8)"),
                rusqlite::params![start, end, name_id, gtid, kind, line, file, func],
            ),
        }
        .unwrap();
    }
    path
}

#[test]
fn openacc_events_are_typed_per_table_with_constructs_bytes_and_kernels() {
    let path = with_openacc();
    let out = convert(&[path], &Options::default()).unwrap();
    assert_eq!(
        out.summary.counts.get("openacc"),
        Some(&(EVENTS.len() as u64))
    );
    let c = count_prv(&out.prv);
    let b = |t: u64| c.begins.get(&t).copied().unwrap_or(0);
    // Event kinds (id + 1) by table: other 66000000, data 66000001, launch 66000002. The
    // implicit wait runs inside the compute construct: when it ends, the construct shows again.
    assert_eq!(b(66_000_000), 4);
    assert_eq!(b(66_000_001), 2);
    assert_eq!(b(66_000_002), 1);
    assert_eq!(
        c.values.get(&(66_000_000, 10)).copied(),
        Some(2),
        "compute construct = kind 9, from its start and again after the wait inside it"
    );
    assert_eq!(
        c.values.get(&(66_000_001, 6)).copied(),
        Some(1),
        "upload = kind 5"
    );
    assert_eq!(
        c.values.get(&(66_300_001, 8_388_608)).copied(),
        Some(2),
        "bytes of the two transfers"
    );
    assert_eq!(b(66_400_002), 1, "the launched kernel");
    for label in [
        "acc_enqueue_upload@jacobi.c:42",
        "jacobi_43_gpu",
        "Enqueue upload",
        "Implicit wait",
    ] {
        assert!(out.pcf.contains(label), "{label} labelled in the pcf");
    }
    // Waits block the thread (5); the rest is time inside the OpenACC runtime (26).
    assert!(out
        .prv
        .lines()
        .any(|l| l.starts_with("1:") && l.ends_with(":26")));
    let waits = out
        .prv
        .lines()
        .filter(|l| l.starts_with("1:0:1:1:1:") && l.ends_with(":5"))
        .count();
    assert!(
        waits >= 1,
        "the explicit acc_wait, outside the construct, is a Synchronization state"
    );
    let report = prvsight::paraver::check::check_readers(
        out.prv.as_bytes(),
        &out.pcf,
        &out.row,
        &Default::default(),
    );
    assert!(report.is_ok(), "{report}");
}
