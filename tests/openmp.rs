//! The `openmp` family (issue 43, nsys2prv 0.6 parity) on the synthetic `openmp` export (no
//! public export holds OMPT tables): parallel regions, implicit tasks and barriers on the threads
//! that ran them, 60000001–60000003 as nsys2prv 0.6 numbers them; counts equal SQL; a barrier's
//! end ends with its region; each thread's barrier time is the scenario's; the JSON has them.

mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;

use common::{convert, sql_count};
use prvsight::options::Family;
use prvsight::synth::scenarios::openmp::barrier_ns_per_thread;
use prvsight::Options;

const SQL: &str = "SELECT (SELECT count(*) FROM OPENMP_EVENT_KIND_PARALLEL) \
     + (SELECT count(*) FROM OPENMP_EVENT_KIND_TASK WHERE kind & 2 != 0) \
     + (SELECT count(*) FROM OPENMP_EVENT_KIND_SYNC_REGION WHERE kind IN (1, 2, 3, 4))";

/// The scenario's export, in a file of its own (tests run in parallel).
fn export() -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let dir =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("openmp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = dir.join(format!("openmp-{n}.sqlite"));
    let built = prvsight::synth::build("openmp", 1).unwrap();
    built.export.write_path(&path).unwrap();
    path
}

/// Per thread (Paraver thread number), the time inside regions of `ty`, from begin/end pairs.
fn time_in(prv: &str, ty: u64) -> BTreeMap<u64, u64> {
    let mut open: BTreeMap<u64, u64> = BTreeMap::new();
    let mut total: BTreeMap<u64, u64> = BTreeMap::new();
    for line in prv.lines().filter(|l| l.starts_with("2:")) {
        let f: Vec<u64> = line.split(':').map(|x| x.parse().unwrap()).collect();
        for p in f[6..].chunks(2).filter(|p| p[0] == ty) {
            match p[1] {
                0 => *total.entry(f[4]).or_default() += f[5] - open.remove(&f[4]).unwrap(),
                _ => assert!(open.insert(f[4], f[5]).is_none(), "nested {ty}"),
            }
        }
    }
    assert!(open.is_empty(), "{ty} left open");
    total
}

#[test]
fn regions_tasks_and_barriers_convert_as_sql_counts_them() {
    let path = export();
    let c = convert(std::slice::from_ref(&path), &Options::default()).unwrap();
    let rows = sql_count(&path, SQL);
    assert_eq!(
        rows, 27,
        "3 regions, 12 implicit tasks, 12 implicit barriers"
    );
    assert_eq!(c.summary.counts.get("openmp"), Some(&rows));
    // The barrier recorded 10 s past its region ends with it: the trace is ~5 ms long.
    assert!(
        c.summary.trace.end_time < 10_000_000,
        "{}",
        c.summary.trace.end_time
    );
    let barriers: Vec<u64> = time_in(&c.prv, 60_000_003).into_values().collect();
    let expected: Vec<u64> = barrier_ns_per_thread().iter().map(|&n| n as u64).collect();
    assert_eq!(barriers, expected, "barrier time per thread");
    let parallel = time_in(&c.prv, 60_000_001);
    assert_eq!(parallel.len(), 1, "regions on the thread that forked them");
    assert_eq!(parallel.values().sum::<u64>(), 3_000_000);
    assert_eq!(
        time_in(&c.prv, 60_000_002).len(),
        4,
        "an implicit task on every thread"
    );
    for label in [
        "60000001    OpenMP parallel region",
        "28      Parallel",
        "60000002    OpenMP implicit task",
        "2      Implicit task",
        "60000003    OpenMP barrier",
        "2      Implicit barrier",
    ] {
        assert!(c.pcf.contains(label), "pcf: {label}");
    }
}

#[test]
fn alone_it_converts_its_threads() {
    let path = export();
    let opts = Options {
        families: Some([Family::OpenMp].into_iter().collect()),
        ..Options::default()
    };
    let c = convert(std::slice::from_ref(&path), &opts).unwrap();
    assert_eq!(c.summary.counts.len(), 1);
    assert_eq!(c.summary.counts.get("openmp"), Some(&27));
    assert_eq!(c.summary.trace.objects.threads.len(), 4);
}

#[test]
fn the_json_names_them() {
    let exports = [prvsight::nsys::Export::open_path(&export()).unwrap()];
    let mut buf = Vec::new();
    {
        let mut w = prvsight::chrome::ChromeWriter::new(Box::new(&mut buf));
        prvsight::pipeline::run(&exports, &Options::default(), &mut [&mut w], &mut |_| true)
            .unwrap();
        assert_eq!(w.stats().complete.get("openmp"), Some(&27));
    }
    let v: serde_json::Value = serde_json::from_slice(&buf).unwrap();
    let mut names: BTreeMap<String, u64> = BTreeMap::new();
    for e in v["traceEvents"].as_array().unwrap() {
        if e["cat"] == "openmp" {
            *names
                .entry(e["name"].as_str().unwrap().to_owned())
                .or_default() += 1;
        }
    }
    let expected = [
        ("Implicit barrier", 12),
        ("Implicit task", 12),
        ("Parallel", 3),
    ];
    assert_eq!(
        names,
        expected
            .map(|(n, k)| (n.to_owned(), k))
            .into_iter()
            .collect()
    );
}

/// The page offers the families by their serialized names and sends back those it keeps: each
/// must parse (`openmp`; `open-acc` too, OpenACC's).
#[test]
fn every_family_parses_from_the_name_the_page_shows() {
    for f in Family::ALL {
        let shown = serde_json::to_value(f).unwrap();
        let shown = shown.as_str().unwrap();
        assert_eq!(shown.parse::<Family>(), Ok(f), "{shown}");
    }
    assert_eq!(serde_json::to_value(Family::OpenMp).unwrap(), "openmp");
}
