//! The families that annotate calls (issue 43, nsys2prv 0.6 parity): `cuda-event`
//! (CUPTI_ACTIVITY_KIND_CUDA_EVENT on the call that made each event) and `pthread` (the OS
//! runtime's pthread calls). Counts equal SQL on the shipped sample and on every real export;
//! adding them only adds their own lines to a trace; each converts alone; the JSON has them.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use common::{convert, count_prv, data, shared_inputs, sql_count, Converted};
use prvsight::options::Family;
use prvsight::Options;

/// CUDA events with their call, as the family joins them.
const CUDA_EVENTS_SQL: &str = "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r \
     JOIN CUPTI_ACTIVITY_KIND_CUDA_EVENT e ON e.correlationId = r.correlationId \
     AND e.globalPid = (r.globalTid >> 24) << 24";
/// pthread calls among the OS runtime calls the osrt family converts.
const PTHREAD_SQL: &str = "SELECT count(*) FROM OSRT_API o JOIN StringIds s ON s.id = o.nameId \
     WHERE s.value LIKE 'pthread%' AND (o.eventClass IS NULL OR o.eventClass NOT IN (31, 32))";

fn with(families: &[Family]) -> Options {
    Options {
        families: Some(families.iter().copied().collect()),
        ..Options::default()
    }
}

/// Every family but `left_out`.
fn all_but(left_out: &[Family]) -> Options {
    let all: BTreeSet<Family> = Family::ALL.into_iter().collect();
    Options {
        families: Some(all.into_iter().filter(|f| !left_out.contains(f)).collect()),
        ..Options::default()
    }
}

fn count(c: &Converted, family: &str) -> u64 {
    c.summary.counts.get(family).copied().unwrap_or(0)
}

/// The counts of both families in the summary and in the .prv equal SQL's for `inputs`.
fn check_counts(inputs: &[PathBuf]) -> (u64, u64) {
    let sql = |q: &str| inputs.iter().map(|p| sql_count(p, q)).sum::<u64>();
    let (events, pthreads) = (sql(CUDA_EVENTS_SQL), sql(PTHREAD_SQL));
    let what = format!("{inputs:?}");
    let c = convert(inputs, &Options::default()).unwrap();
    assert_eq!(count(&c, "cuda-event"), events, "{what}: cuda-event");
    assert_eq!(count(&c, "pthread"), pthreads, "{what}: pthread");
    let prv = count_prv(&c.prv);
    // One begin line per record: the event id's type for CUDA events (ids start at 1), the
    // call's name for pthread calls.
    assert_eq!(
        prv.begins.get(&9302).copied().unwrap_or(0),
        events,
        "{what}"
    );
    assert_eq!(
        prv.begins.get(&61_000_000).copied().unwrap_or(0),
        pthreads,
        "{what}"
    );
    for ty in [9301, 9302, 9303, 9304, 61_000_000] {
        let declared = c.pcf.contains(&format!("    {ty}    "));
        assert_eq!(
            declared,
            prv.values.keys().any(|(t, _)| *t == ty),
            "{what}: {ty} in the pcf"
        );
    }
    (events, pthreads)
}

/// `with` less the lines of the types only the families `new` write equals `without`: adding
/// them changes nothing else (states, values of names, other events).
fn only_adds_its_lines(with: &Converted, without: &Converted, types: &[u64], what: &str) {
    let own = |line: &str| {
        let f: Vec<&str> = line.split(':').collect();
        f[0] == "2"
            && f[6..]
                .chunks(2)
                .all(|p| types.iter().any(|t| p[0] == t.to_string()))
    };
    let kept: Vec<&str> = with.prv.lines().filter(|l| !own(l)).collect();
    let before: Vec<&str> = without.prv.lines().collect();
    assert!(
        kept == before,
        "{what}: lines besides the new families' changed"
    );
    assert_eq!(with.row, without.row, "{what}: .row");
    for line in without.pcf.lines() {
        assert!(with.pcf.contains(line), "{what}: pcf line {line:?} went");
    }
}

#[test]
fn the_sample_counts_its_cuda_events_and_pthread_calls() {
    let sample = data("testcuda_report1.sqlite");
    // The export's facts: 2 cudaEventRecord calls, 3 pthread_create and 1 pthread_join.
    assert_eq!(check_counts(std::slice::from_ref(&sample)), (2, 4));
    let c = convert(std::slice::from_ref(&sample), &Options::default()).unwrap();
    // Both events on stream 7, context 1 of GPU 0 (device + 1 = 1), ids 1 and 2.
    let prv = count_prv(&c.prv);
    assert_eq!(prv.values.get(&(9301, 1)), Some(&1));
    assert_eq!(prv.values.get(&(9301, 2)), Some(&1));
    assert_eq!(prv.values.get(&(9303, 7)), Some(&2));
    assert!(c.pcf.contains("pthread_create"));
    let without = convert(
        std::slice::from_ref(&sample),
        &all_but(&[Family::CudaEvent, Family::Pthread]),
    )
    .unwrap();
    only_adds_its_lines(
        &c,
        &without,
        &[9301, 9302, 9303, 9304, 61_000_000],
        "sample",
    );
}

#[test]
fn each_family_converts_alone_on_the_threads_of_its_calls() {
    let sample = [data("testcuda_report1.sqlite")];
    for (family, name, n) in [
        (Family::CudaEvent, "cuda-event", 2),
        (Family::Pthread, "pthread", 4),
    ] {
        let c = convert(&sample, &with(&[family])).unwrap();
        assert_eq!(c.summary.counts.len(), 1, "{name}: {:?}", c.summary.counts);
        assert_eq!(count(&c, name), n, "{name}");
        // Only the process's threads that made such calls: one, the main thread.
        assert_eq!(c.summary.trace.objects.threads.len(), 1, "{name}");
        assert!(count_prv(&c.prv).sorted, "{name}");
    }
}

#[test]
fn the_json_has_them_under_their_family() {
    let exports = [prvsight::nsys::Export::open_path(&data("testcuda_report1.sqlite")).unwrap()];
    let mut buf = Vec::new();
    {
        let mut w = prvsight::chrome::ChromeWriter::new(Box::new(&mut buf));
        prvsight::pipeline::run(&exports, &Options::default(), &mut [&mut w], &mut |_| true)
            .unwrap();
        let stats = w.stats();
        assert_eq!(stats.complete.get("cuda-event"), Some(&2));
        assert_eq!(stats.complete.get("pthread"), Some(&4));
    }
    let v: serde_json::Value = serde_json::from_slice(&buf).unwrap();
    let events = v["traceEvents"].as_array().unwrap();
    let of = |cat: &'static str| events.iter().filter(move |e| e["cat"] == cat);
    let first = of("cuda-event").next().unwrap();
    assert_eq!(first["name"], "cudaEventRecord");
    assert_eq!(first["args"]["event_id"], 1);
    assert_eq!(first["args"]["stream"], 7);
    let calls: Vec<&str> = of("pthread").map(|e| e["name"].as_str().unwrap()).collect();
    assert_eq!(
        calls,
        [
            "pthread_create",
            "pthread_create",
            "pthread_join",
            "pthread_create"
        ]
    );
}

#[test]
fn every_real_export_counts_them_as_sql_does() {
    let Some(inputs) = shared_inputs() else {
        return;
    };
    let mut seen = (0, 0);
    for set in inputs {
        let paths: Vec<&Path> = set.iter().map(PathBuf::as_path).collect();
        let Ok(c) = convert(&set, &Options::default()) else {
            continue; // an export with nothing to convert: refused, as before
        };
        let (e, p) = check_counts(&set);
        seen = (seen.0 + e, seen.1 + p);
        if e + p > 0 {
            let without = convert(&set, &all_but(&[Family::CudaEvent, Family::Pthread])).unwrap();
            let what = format!("{paths:?}");
            only_adds_its_lines(&c, &without, &[9301, 9302, 9303, 9304, 61_000_000], &what);
        }
    }
    assert!(
        seen.0 > 0 && seen.1 > 0,
        "the real exports hold both: {seen:?}"
    );
}
