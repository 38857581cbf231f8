//! The `cpu-counters` family (issue 43, nsys2prv 0.6 parity) on the synthetic `cpu_counters`
//! export (no public export holds the sample tables): each sample's count goes to the thread last
//! scheduled in on its component's CPU at the sample's midpoint, as 66600000 + event id. Counts
//! equal an independent SQL attribution; per thread and event, the samples and their sums are the
//! scenario's design; threads no other family has get none; the JSON has a counter per thread.

mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;

use common::{convert, sql_count};
use prvsight::options::Family;
use prvsight::synth::scenarios::cpu_counters::expected;
use prvsight::Options;

/// The samples whose CPU had a sched-in at or before their midpoint (a component's CPU: its own
/// instance if a core, else its parent core's, the scenario's depth).
const SQL: &str = "SELECT count(*) FROM PERF_EVENT_CPU_RAW_EVENT AS r \
     JOIN TARGET_INFO_COMPONENT AS c ON c.componentId = r.componentId \
     LEFT JOIN TARGET_INFO_COMPONENT AS p ON p.componentId = c.parentComponentId \
     WHERE (SELECT s.globalTid FROM SCHED_EVENTS AS s WHERE s.isSchedIn = 1 \
       AND s.cpu = CASE WHEN c.name = 'Core' THEN c.instance ELSE p.instance END \
       AND s.start <= r.start + (r.end - r.start) / 2 ORDER BY s.start DESC LIMIT 1) \
     IS NOT NULL";

/// The scenario's export, in a file of its own (tests run in parallel).
fn export() -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("cpu-counters-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = dir.join(format!("cpu-counters-{n}.sqlite"));
    let built = prvsight::synth::build("cpu_counters", 1).unwrap();
    built.export.write_path(&path).unwrap();
    path
}

/// The scenario's plan thread (0 main, 1 worker, 2 daemon) of each tid.
fn plan_thread(tid: u64) -> usize {
    match tid {
        60_051 => 0,
        60_052 => 1,
        900 => 2,
        _ => panic!("unexpected tid {tid}"),
    }
}

/// Per (plan thread, event id): samples and summed counts in the .prv, threads told apart by the
/// .row's names (`... (pid P, tid T)`, in Paraver's order: task by task).
fn per_thread(prv: &str, row: &str) -> BTreeMap<(usize, i64), (u64, i64)> {
    let tids: Vec<(u64, u64)> = (row.lines())
        .skip_while(|l| !l.starts_with("LEVEL THREAD"))
        .skip(1)
        .filter_map(|l| {
            let inner = l.rsplit_once('(')?.1.trim_end_matches(')');
            let (pid, tid) = inner.split_once(", ")?;
            let num = |s: &str| s.split(' ').nth(1)?.parse::<u64>().ok();
            Some((num(pid)?, num(tid)?))
        })
        .collect();
    let mut task_first = BTreeMap::new();
    let mut pids: Vec<u64> = Vec::new();
    for (i, &(pid, _)) in tids.iter().enumerate() {
        if !pids.contains(&pid) {
            pids.push(pid);
            task_first.insert(pids.len() as u64, i);
        }
    }
    let mut out = BTreeMap::new();
    for line in prv.lines().filter(|l| l.starts_with("2:")) {
        let f: Vec<i64> = line.split(':').map(|x| x.parse().unwrap()).collect();
        let index = task_first[&(f[3] as u64)] + f[4] as usize - 1;
        for p in f[6..]
            .chunks(2)
            .filter(|p| (66_600_000..66_700_000).contains(&p[0]))
        {
            let e = out
                .entry((plan_thread(tids[index].1), p[0] - 66_600_000))
                .or_insert((0, 0));
            e.0 += 1;
            e.1 += p[1];
        }
    }
    out
}

#[test]
fn samples_go_to_the_thread_that_ran_as_sql_counts_them() {
    let path = export();
    let c = convert(std::slice::from_ref(&path), &Options::default()).unwrap();
    let rows = sql_count(&path, SQL);
    assert_eq!(rows, 50, "30 samples of core 0 and its cache, 20 of core 1");
    assert_eq!(c.summary.counts.get("cpu-counters"), Some(&rows));
    // With the sched family, the daemon is a thread of the trace: it gets its samples too.
    assert_eq!(per_thread(&c.prv, &c.row), expected());
    for label in [
        "66600001    cpu-cycles [cycles]",
        "66600002    instructions [instructions]",
        "66600003    l1d-misses [misses]",
    ] {
        assert!(c.pcf.contains(label), "pcf: {label}");
    }
}

#[test]
fn threads_no_other_family_has_get_none() {
    let path = export();
    let opts = Options {
        families: Some([Family::CudaApi, Family::CpuCounters].into_iter().collect()),
        ..Options::default()
    };
    let c = convert(std::slice::from_ref(&path), &opts).unwrap();
    let mut want = expected();
    want.retain(|(thread, _), _| *thread != 2);
    assert_eq!(want.values().map(|v| v.0).sum::<u64>(), 44);
    assert_eq!(c.summary.counts.get("cpu-counters"), Some(&44));
    assert_eq!(c.summary.trace.objects.threads.len(), 2);
    assert_eq!(per_thread(&c.prv, &c.row), want);
    // The worker keeps core 1's sample after its sched-out until the main thread comes in.
    assert_eq!(
        want[&(1, 1)].0,
        8,
        "worker: 4 cycle samples per core, one after its sched-out"
    );
}

#[test]
fn alone_it_has_no_threads_to_go_to() {
    let path = export();
    let opts = Options {
        families: Some([Family::CpuCounters].into_iter().collect()),
        ..Options::default()
    };
    let err = convert(std::slice::from_ref(&path), &opts).err().unwrap();
    let msg = err.to_string();
    assert!(
        msg.contains("CPU counters (on the threads of other families)"),
        "{msg}"
    );
}

#[test]
fn the_json_has_a_counter_per_thread() {
    let exports = [prvsight::nsys::Export::open_path(&export()).unwrap()];
    let mut buf = Vec::new();
    {
        let mut w = prvsight::chrome::ChromeWriter::new(Box::new(&mut buf));
        prvsight::pipeline::run(&exports, &Options::default(), &mut [&mut w], &mut |_| true)
            .unwrap();
    }
    let v: serde_json::Value = serde_json::from_slice(&buf).unwrap();
    let mut names: BTreeMap<String, u64> = BTreeMap::new();
    for e in v["traceEvents"].as_array().unwrap() {
        if e["cat"] == "cpu-counters" {
            assert_eq!(e["ph"], "C");
            *names
                .entry(e["name"].as_str().unwrap().to_owned())
                .or_default() += 1;
        }
    }
    assert_eq!(names.len(), 9, "3 counters on each of 3 threads: {names:?}");
    assert_eq!(names.values().sum::<u64>(), 50);
}
