//! The benchmark inflater (src/bin/prvsight-inflate.rs): copies are exact and links stay one-to-one.

mod common;

use std::process::Command;

use prvsight::Options;

fn inflate(args: &[&str], out: &std::path::Path) {
    let st = Command::new(env!("CARGO_BIN_EXE_prvsight-inflate"))
        .arg(common::data("testcuda_report1.sqlite"))
        .arg("-o")
        .arg(out)
        .args(args)
        .status()
        .unwrap();
    assert!(st.success());
}

fn tmp(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("prvsight-inflate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn three_time_copies_on_two_ranks_convert_to_six_times_every_family() {
    let base = common::convert(
        &[common::data("testcuda_report1.sqlite")],
        &Options::default(),
    )
    .unwrap();
    let out = tmp("x3r2.sqlite");
    inflate(&["--factor", "3", "--ranks", "2"], &out);

    // The schema is the original's, statement for statement.
    let ddl = |p: &std::path::Path| {
        let c = rusqlite::Connection::open(p).unwrap();
        let mut st = c
            .prepare("SELECT type, name, sql FROM sqlite_master ORDER BY name")
            .unwrap();
        let rows: Vec<(String, String, Option<String>)> = st
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        rows
    };
    assert_eq!(ddl(&out), ddl(&common::data("testcuda_report1.sqlite")));

    let big = common::convert(std::slice::from_ref(&out), &Options::default()).unwrap();
    let six: std::collections::BTreeMap<String, u64> = base
        .summary
        .counts
        .iter()
        .map(|(k, v)| (k.clone(), 6 * v))
        .collect();
    // Every family, links to kernels and copies included, six times over: ids stayed one-to-one.
    assert_eq!(big.summary.counts, six);
    assert_eq!(
        big.summary.trace.objects.processes.len(),
        2 * base.summary.trace.objects.processes.len()
    );
    assert_eq!(
        big.summary.trace.objects.devices.len(),
        2 * base.summary.trace.objects.devices.len()
    );
    let pids: Vec<u32> = big
        .summary
        .trace
        .objects
        .processes
        .iter()
        .map(|p| p.pid)
        .collect();
    assert_eq!(pids[0], 17068, "{pids:?}");
    assert!(
        pids[1] > 17095,
        "the clone's pid is past every original pid and tid: {pids:?}"
    );
    let report = prvsight::paraver::check::check_readers(
        big.prv.as_bytes(),
        &big.pcf,
        &big.row,
        &prvsight::paraver::check::CheckOptions::default(),
    );
    assert!(report.is_ok(), "{report}");
    // Correlation ids: three disjoint copies per process, so no id repeats in the API table.
    let dup = common::sql_count(
        &out,
        "SELECT count(*) FROM (SELECT correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME GROUP BY correlationId HAVING count(*) > 1)",
    );
    assert_eq!(dup, 0);
}

#[test]
fn a_target_size_adds_copies_until_it_is_reached() {
    let out = tmp("2mb.sqlite");
    inflate(&["--target-mb", "2"], &out);
    let len = std::fs::metadata(&out).unwrap().len();
    assert!(len >= 2 << 20, "{len}");
    let kernels = common::sql_count(&out, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL");
    assert!(
        kernels > 4 && kernels % 4 == 0,
        "{kernels} kernels: whole copies of the original 4"
    );
}
