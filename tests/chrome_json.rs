//! The Chrome/Perfetto JSON output (src/chrome): it parses, its times are µs with every
//! nanosecond, and it holds what the export holds — complete events per category equal to SQL
//! row counts, kernel times equal to SQL's, processes and threads named as in the .row, arrows in
//! pairs bound to the slices they join — cut the way the Paraver trace is cut.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{convert, count_prv, data, mutated, shared_inputs, sql_count};
use prvsight::chrome::{ChromeStats, ChromeWriter};
use prvsight::model::{Names, OutputCut, Record, Sink, TraceInfo};
use prvsight::nsys::Export;
use prvsight::options::Chop;
use prvsight::pipeline::{self, Summary};
use prvsight::{Family, Options};
use serde_json::Value;

struct Json {
    text: String,
    summary: Summary,
    stats: ChromeStats,
    events: Vec<Ev>,
}

/// One event, its times in ns read from the text (`"ts":1234.567` → 1234567).
#[derive(Clone, Debug)]
struct Ev {
    ph: String,
    cat: String,
    name: String,
    pid: u64,
    tid: u64,
    ts: u64,
    dur: Option<u64>,
    id: Option<u64>,
    bp: Option<String>,
    args: Value,
}

fn open(paths: &[PathBuf]) -> Vec<Export> {
    paths
        .iter()
        .map(|p| Export::open_path(p).unwrap())
        .collect()
}

fn to_json(paths: &[PathBuf], opts: &Options) -> Json {
    let exports = open(paths);
    let mut buf = Vec::new();
    let (summary, stats) = {
        let mut w = ChromeWriter::new(Box::new(&mut buf));
        let s = pipeline::run(&exports, opts, &mut [&mut w], &mut |_| true)
            .unwrap_or_else(|e| panic!("{paths:?}: {e}"));
        (s, w.stats())
    };
    let text = String::from_utf8(buf).expect("UTF-8");
    let events = parse(&text);
    assert_eq!(events.len() as u64, stats.events);
    Json {
        text,
        summary,
        stats,
        events,
    }
}

/// A time field of an event line in ns: microseconds with exactly three decimals.
fn us_field(line: &str, key: &str) -> Option<u64> {
    let at = line.find(key)? + key.len();
    let rest = &line[at..];
    let num = &rest[..rest.find([',', '}']).unwrap()];
    let (us, frac) = num
        .split_once('.')
        .unwrap_or_else(|| panic!("{key} {num}: µs with a decimal point"));
    assert_eq!(frac.len(), 3, "{key} {num}: three decimals, down to the ns");
    Some(us.parse::<u64>().unwrap() * 1000 + frac.parse::<u64>().unwrap())
}

/// The whole file as JSON, then each event line (one per line) with its exact times.
fn parse(text: &str) -> Vec<Ev> {
    let doc: Value = serde_json::from_str(text).expect("the file parses as JSON");
    assert_eq!(doc["displayTimeUnit"], "ns");
    let all = doc["traceEvents"].as_array().expect("traceEvents").len();
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("{\"ph\"")).collect();
    assert_eq!(lines.len(), all, "one event a line");
    let s = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    lines
        .iter()
        .map(|line| {
            let line = line.strip_suffix(',').unwrap_or(line);
            let v: Value = serde_json::from_str(line).unwrap();
            let ev = Ev {
                ph: s(&v["ph"]),
                cat: s(&v["cat"]),
                name: s(&v["name"]),
                pid: v["pid"].as_u64().unwrap(),
                tid: v["tid"].as_u64().unwrap(),
                ts: us_field(line, "\"ts\":").expect("every event has a ts"),
                dur: us_field(line, "\"dur\":"),
                id: v["id"].as_u64(),
                bp: v.get("bp").map(s),
                args: v["args"].clone(),
            };
            // The number a JSON reader sees is the same time in µs.
            let read = v["ts"].as_f64().unwrap() * 1000.0;
            assert!((read - ev.ts as f64).abs() < 1.0, "{line}");
            ev
        })
        .collect()
}

fn complete_counts(events: &[Ev]) -> BTreeMap<String, u64> {
    let mut m = BTreeMap::new();
    for e in events.iter().filter(|e| e.ph == "X") {
        *m.entry(e.cat.clone()).or_insert(0) += 1;
    }
    m
}

fn table_exists(p: &Path, t: &str) -> bool {
    sql_count(
        p,
        &format!("SELECT count(*) FROM sqlite_master WHERE name = '{t}'"),
    ) > 0
}

/// `SELECT count(*) FROM table filter`, summed over the inputs (0 where the table is absent).
fn rows(paths: &[PathBuf], table: &str, filter: &str) -> u64 {
    let count = |p: &PathBuf| {
        if table_exists(p, table) {
            sql_count(p, &format!("SELECT count(*) FROM {table} {filter}"))
        } else {
            0
        }
    };
    paths.iter().map(count).sum()
}

/// Every arrow is one `"s"` and one `"f"` with the same id, category and name, and each binds
/// to a complete event that starts where it does on its track.
fn check_flows(events: &[Ev], what: &str) -> u64 {
    let starts: BTreeSet<(u64, u64, u64)> = events
        .iter()
        .filter(|e| e.ph == "X")
        .map(|e| (e.pid, e.tid, e.ts))
        .collect();
    let mut ends: BTreeMap<u64, [Option<&Ev>; 2]> = BTreeMap::new();
    for e in events.iter().filter(|e| e.ph == "s" || e.ph == "f") {
        let slot = &mut ends.entry(e.id.expect("a flow id")).or_default()[usize::from(e.ph == "f")];
        assert!(slot.is_none(), "{what}: flow id {:?} used twice", e.id);
        *slot = Some(e);
        assert_eq!(e.cat, "flow");
        assert!(
            starts.contains(&(e.pid, e.tid, e.ts)),
            "{what}: {} of flow {:?} at {} ns on tid {} binds no slice",
            e.ph,
            e.id,
            e.ts,
            e.tid
        );
    }
    for (id, pair) in &ends {
        let (Some(s), Some(f)) = (pair[0], pair[1]) else {
            panic!("{what}: flow {id} lacks its s or its f");
        };
        assert_eq!(s.name, f.name, "{what}: flow {id}");
        assert_eq!(
            f.bp.as_deref(),
            Some("e"),
            "{what}: flow {id} binds its enclosing slice"
        );
    }
    ends.len() as u64
}

/// The inputs: the shipped sample, and every real export (set) of ../shared.
fn inputs() -> Vec<Vec<PathBuf>> {
    let mut v = vec![vec![data("testcuda_report1.sqlite")]];
    v.extend(shared_inputs().unwrap_or_default());
    v
}

#[test]
fn every_real_export_gives_json_with_the_sql_row_counts() {
    for paths in inputs() {
        let name = format!(
            "{:?}",
            paths
                .iter()
                .map(|p| p.file_name().unwrap())
                .collect::<Vec<_>>()
        );
        let j = to_json(&paths, &Options::default());
        let c = &j.summary.counts;
        let n = |k: &str| c.get(k).copied().unwrap_or(0);
        let mut want: BTreeMap<String, u64> = [
            ("kernel", rows(&paths, "CUPTI_ACTIVITY_KIND_KERNEL", "")),
            ("memcpy", rows(&paths, "CUPTI_ACTIVITY_KIND_MEMCPY", "")),
            ("memset", rows(&paths, "CUPTI_ACTIVITY_KIND_MEMSET", "")),
            ("cuda-api", rows(&paths, "CUPTI_ACTIVITY_KIND_RUNTIME", "")),
            (
                "nvtx",
                rows(&paths, "NVTX_EVENTS", "WHERE eventType IN (59, 70, 60, 71)"),
            ),
            // eventClass 31/32 rows are the OS runtime tracer's start/stop markers, not calls.
            (
                "osrt",
                rows(&paths, "OSRT_API", "WHERE eventClass NOT IN (31, 32)"),
            ),
            ("sched", rows(&paths, "SCHED_EVENTS", "WHERE isSchedIn = 1")),
            (
                "graphs",
                rows(&paths, "CUPTI_ACTIVITY_KIND_GRAPH_TRACE", ""),
            ),
            // MPI calls: one per wait call, not per request, as convert_real.rs ties to SQL.
            ("mpi", n("mpi")),
            ("openacc", n("openacc")),
            // The families of nsys2prv 0.6 the real exports hold (tests/annotations.rs ties
            // their counts to SQL).
            ("cuda-event", n("cuda-event")),
            ("pthread", n("pthread")),
        ]
        .into_iter()
        .filter(|&(_, v)| v > 0)
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        if table_exists(&paths[0], "MPI_P2P_EVENTS") {
            let p2p =
                rows(&paths, "MPI_P2P_EVENTS", "") + rows(&paths, "MPI_COLLECTIVES_EVENTS", "");
            assert!(n("mpi") >= p2p && p2p > 0, "{name}: MPI calls");
        }
        want.retain(|_, v| *v > 0);
        assert_eq!(
            complete_counts(&j.events),
            want,
            "{name}: complete events per category"
        );
        let marks = rows(&paths, "NVTX_EVENTS", "WHERE eventType = 34");
        assert_eq!(j.stats.instants, marks, "{name}: NVTX marks");
        assert_eq!(j.stats.counters, n("gpu-metric"), "{name}: metric samples");
        let arrows = n("link-launch") + n("link-memory") + n("mpi-message");
        assert_eq!(check_flows(&j.events, &name), arrows, "{name}: arrows");
        assert_eq!(j.stats.flows_dropped, 0, "{name}");
        let end = j.summary.trace.end_time;
        for e in &j.events {
            assert!(
                e.ts + e.dur.unwrap_or(0) <= end,
                "{name}: {e:?} past the end {end}"
            );
        }
        if paths.len() == 1 {
            kernels_at_sql_times(&paths[0], &j, &name);
        }
    }
}

/// Every kernel's ts and dur are its SQL start and duration in µs, name for name.
fn kernels_at_sql_times(path: &Path, j: &Json, name: &str) {
    if !table_exists(path, "CUPTI_ACTIVITY_KIND_KERNEL") {
        return;
    }
    let origin = j.summary.trace.sources[0].origin_raw_ns;
    let conn = rusqlite::Connection::open(path).unwrap();
    let mut st = conn
        .prepare(
            "SELECT k.start, k.end, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k \
             JOIN StringIds s ON s.id = k.demangledName",
        )
        .unwrap();
    let mut want: Vec<(u64, u64, String)> = st
        .query_map([], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?, r.get(2)?))
        })
        .unwrap()
        .map(|r| {
            let (s, e, n) = r.unwrap();
            ((s - origin) as u64, (e - s) as u64, n)
        })
        .collect();
    let mut got: Vec<(u64, u64, String)> = (j.events.iter())
        .filter(|e| e.ph == "X" && e.cat == "kernel")
        .map(|e| (e.ts, e.dur.unwrap(), e.name.clone()))
        .collect();
    want.sort();
    got.sort();
    assert_eq!(got, want, "{name}: kernel times and names");
}

#[test]
fn a_kernel_is_written_at_its_sql_start_in_microseconds() {
    let path = data("testcuda_report1.sqlite");
    let j = to_json(std::slice::from_ref(&path), &Options::default());
    let (start, end) = {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.query_row(
            "SELECT start, end FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start LIMIT 1",
            [],
            |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)),
        )
        .unwrap()
    };
    let ns = (start - j.summary.trace.sources[0].origin_raw_ns) as u64;
    let us = |ns: u64| format!("{}.{:03}", ns / 1000, ns % 1000);
    let text = format!("\"ts\":{},\"dur\":{}", us(ns), us((end - start) as u64));
    assert_eq!(text, "\"ts\":1453478.819,\"dur\":134.200");
    let line = j
        .text
        .lines()
        .find(|l| l.contains("\"cat\":\"kernel\""))
        .unwrap();
    assert!(line.contains(&text), "{line}");
    assert!(
        line.contains("\"grid\":[97657,1,1],\"block\":[256,1,1]"),
        "{line}"
    );
}

#[test]
fn processes_and_threads_are_named_as_in_the_row() {
    let mut sets = vec![vec![data("testcuda_report1.sqlite")]];
    if let Some(all) = shared_inputs() {
        sets.extend(all.into_iter().filter(|s| s.len() > 1));
    }
    for paths in sets {
        let j = to_json(&paths, &Options::default());
        let row = convert(&paths, &Options::default()).unwrap().row;
        let level = |name: &str| -> Vec<String> {
            let block = row.split(&format!("LEVEL {name} SIZE ")).nth(1).unwrap();
            let mut lines = block.lines();
            let n: usize = lines.next().unwrap().parse().unwrap();
            lines.take(n).map(str::to_owned).collect()
        };
        let meta = |what: &str| -> BTreeMap<(u64, u64), String> {
            (j.events.iter())
                .filter(|e| e.ph == "M" && e.name == what)
                .map(|e| ((e.pid, e.tid), e.args["name"].as_str().unwrap().to_owned()))
                .collect()
        };
        let processes: Vec<String> = meta("process_name").into_values().collect();
        assert_eq!(processes, level("TASK"), "{paths:?}: process names");
        let o = &j.summary.trace.objects;
        let threads: Vec<String> = (1..=o.threads.len() as u64)
            .map(|tid| {
                let pid = u64::from(o.threads[tid as usize - 1].process as u32 + 1);
                meta("thread_name")[&(pid, tid)].clone()
            })
            .collect();
        assert_eq!(threads, level("THREAD"), "{paths:?}: thread names");
    }
}

/// Writes scenario `name` to a file of its own (tests run in parallel).
fn synth(name: &str) -> PathBuf {
    let sc = prvsight::synth::build(name, 1).unwrap_or_else(|e| panic!("{name}: {e}"));
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("chrome-json-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.sqlite"));
    sc.export.write_path(&path).unwrap();
    path
}

#[test]
fn synthetic_scenarios_hold_graphs_nccl_payloads_and_metrics() {
    let scenarios = [
        "ddp4",
        "zero3",
        "pipeline4",
        "graphs",
        "graph_nodes",
        "gpu_metrics",
    ];
    for sc in scenarios {
        let spec = prvsight::synth::build(sc, 1).unwrap().spec;
        let path = synth(sc);
        let paths = std::slice::from_ref(&path);
        let j = to_json(paths, &Options::default());
        let x = complete_counts(&j.events);
        let n = |k: &str| x.get(k).copied().unwrap_or(0);
        let s = |k: &str| spec.counts.get(k).copied().unwrap_or(0);
        assert_eq!(n("kernel"), s("kernel"), "{sc}: kernels");
        assert_eq!(n("memcpy"), s("memcpy"), "{sc}: memcpy");
        assert_eq!(n("cuda-api"), s("cuda-api"), "{sc}: CUDA API calls");
        assert_eq!(
            n("nvtx"),
            s("nvtx-push-pop") + s("nvtx-start-end"),
            "{sc}: NVTX"
        );
        assert_eq!(
            n("graphs"),
            rows(paths, "CUPTI_ACTIVITY_KIND_GRAPH_TRACE", ""),
            "{sc}"
        );
        let arrows = s("link-launch") + s("link-memory");
        assert_eq!(check_flows(&j.events, sc), arrows, "{sc}: arrows");
        let with = |key: &str| {
            (j.events.iter())
                .filter(|e| e.ph == "X" && e.args.get(key).is_some())
                .count() as u64
        };
        assert_eq!(
            with("nccl_collective"),
            spec.nccl_kernels,
            "{sc}: NCCL kernels"
        );
        assert_eq!(
            with("graph_node_id"),
            spec.graph_node_kernels,
            "{sc}: graph nodes"
        );
        // The NCCL message size the .prv writes (type 9501, on NVTX ranges and on kernels).
        let prv = count_prv(&convert(paths, &Options::default()).unwrap().prv);
        let sizes = prv.begins.get(&9501).copied().unwrap_or(0);
        assert_eq!(with("message_bytes"), sizes, "{sc}: NCCL payloads");
        for m in &spec.metrics {
            let samples: Vec<i64> = (j.events.iter())
                .filter(|e| e.ph == "C" && e.name.ends_with(m.name))
                .filter(|e| e.name.starts_with(&format!("GPU{} ", m.gpu)))
                .map(|e| e.args["value"].as_i64().unwrap())
                .collect();
            assert_eq!(samples.len() as u64, m.samples, "{sc}: {} samples", m.name);
            assert_eq!(samples.iter().sum::<i64>(), m.sum, "{sc}: {} sum", m.name);
        }
    }
}

#[test]
fn a_family_selection_keeps_only_those_events() {
    let path = data("testcuda_report1.sqlite");
    let opts = Options {
        families: Some([Family::Kernel].into()),
        ..Options::default()
    };
    let j = to_json(std::slice::from_ref(&path), &opts);
    let kernels = rows(
        std::slice::from_ref(&path),
        "CUPTI_ACTIVITY_KIND_KERNEL",
        "",
    );
    assert_eq!(kernels, 4);
    assert_eq!(
        complete_counts(&j.events),
        [("kernel".to_owned(), 4)].into()
    );
    assert!(j.events.iter().all(|e| e.ph == "X" || e.ph == "M"));
}

#[test]
fn min_duration_leaves_short_kernels_and_their_arrows_out() {
    let path = data("testcuda_report1.sqlite");
    let paths = std::slice::from_ref(&path);
    let min = 134_250;
    let opts = Options {
        min_duration: [(Family::Kernel, min)].into(),
        ..Options::default()
    };
    let j = to_json(paths, &opts);
    let filter = format!("WHERE end - start >= {min}");
    let kept = rows(paths, "CUPTI_ACTIVITY_KIND_KERNEL", &filter);
    assert_eq!((kept, complete_counts(&j.events)["kernel"]), (2, 2));
    // Each left-out kernel's launch arrow waited for it and was dropped; the others are written.
    assert_eq!(j.stats.flows_dropped, 2);
    let links = j.summary.counts["link-launch"] + j.summary.counts["link-memory"];
    assert_eq!(check_flows(&j.events, "min-duration"), links - 2);
}

#[test]
fn a_window_keeps_what_it_holds_rebased_to_its_start() {
    let path = data("testcuda_report1.sqlite");
    let paths = std::slice::from_ref(&path);
    let full = to_json(paths, &Options::default());
    let first_kernel = full.events.iter().find(|e| e.cat == "kernel").unwrap().ts;
    let (lo, hi) = (first_kernel - 5_000_000, first_kernel + 30_000_000);
    let opts = Options {
        chop: Some(Chop::Window { start: lo, end: hi }),
        ..Options::default()
    };
    let cut = to_json(paths, &opts);
    // Events begun inside, and those open at the window start, clipped to it and rebased.
    let key = |e: &Ev, ts: u64, dur: u64| {
        (
            e.cat.clone(),
            e.name.clone(),
            e.pid,
            ts,
            dur,
            e.args.to_string(),
        )
    };
    let (mut opened, mut closed) = (0, 0);
    let mut want: Vec<_> = (full.events.iter())
        .filter(|e| e.ph == "X")
        .filter_map(|e| {
            let end = e.ts + e.dur.unwrap();
            let kept = e.ts <= hi && (e.ts >= lo || end > lo);
            opened += u32::from(kept && e.ts < lo);
            closed += u32::from(kept && end > hi);
            let b = e.ts.max(lo);
            kept.then(|| key(e, b - lo, end.min(hi) - b))
        })
        .collect();
    let mut got: Vec<_> = (cut.events.iter())
        .filter(|e| e.ph == "X")
        .map(|e| key(e, e.ts, e.dur.unwrap()))
        .collect();
    want.sort();
    got.sort();
    let kernels = got.iter().filter(|k| k.0 == "kernel").count();
    assert_eq!(
        (kernels, opened, closed),
        (2, 2, 4),
        "kernels, cut at the start, at the end"
    );
    assert_eq!(got, want);
    // Arrows with both ends inside, rebased.
    let arrows: Vec<(u64, u64)> = (full.events.iter())
        .filter(|e| e.ph == "s")
        .map(|s| {
            let f = full
                .events
                .iter()
                .find(|f| f.ph == "f" && f.id == s.id)
                .unwrap();
            (s.ts, f.ts)
        })
        .filter(|&(s, f)| s >= lo && f >= lo && f <= hi)
        .collect();
    assert_eq!(check_flows(&cut.events, "window"), arrows.len() as u64);
    assert_eq!(arrows.len(), 5);
    let end: Value = serde_json::from_str(&cut.text).unwrap();
    assert_eq!(end["otherData"]["end_ns"], hi - lo);
}

/// A sink that forwards to the JSON writer and notes the most it held at once.
struct Probe<'a> {
    w: ChromeWriter<'a>,
    most_held: usize,
    records: u64,
}

impl Sink for Probe<'_> {
    fn set_output_cut(&mut self, cut: &OutputCut) {
        self.w.set_output_cut(cut);
    }
    fn begin(&mut self, trace: &TraceInfo, names: &Names) -> prvsight::Result<()> {
        self.w.begin(trace, names)
    }
    fn record(&mut self, rec: &Record, names: &Names) -> prvsight::Result<()> {
        self.records += 1;
        self.w.record(rec, names)?;
        self.most_held = self.most_held.max(self.w.held());
        Ok(())
    }
    fn finish(&mut self, trace: &TraceInfo, names: &Names) -> prvsight::Result<()> {
        self.w.finish(trace, names)
    }
}

/// The most the JSON writer held at once converting `path`, and the records it took.
fn most_held(path: &Path) -> (usize, u64) {
    let exports = open(&[path.to_owned()]);
    let mut sink = Probe {
        w: ChromeWriter::new(Box::new(std::io::sink())),
        most_held: 0,
        records: 0,
    };
    pipeline::run(&exports, &Options::default(), &mut [&mut sink], &mut |_| {
        true
    })
    .unwrap();
    assert_eq!(sink.w.held(), 0, "nothing left at the end");
    assert_eq!(sink.w.stats().flows_dropped, 0);
    (sink.most_held, sink.records)
}

#[test]
fn the_writer_holds_the_same_for_a_run_forty_times_longer() {
    let dir = scratch("flat");
    let small = data("testcuda_report1.sqlite");
    let big = dir.join("big.sqlite");
    let r = Command::new(env!("CARGO_BIN_EXE_prvsight-inflate"))
        .args([
            small.to_str().unwrap(),
            "-o",
            big.to_str().unwrap(),
            "--factor",
            "40",
        ])
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let (held, records) = most_held(&small);
    let (held_big, records_big) = most_held(&big);
    assert_eq!((records, records_big), (2198, 40 * 2198));
    // Open events, arrows in flight and NCCL payloads: as many at the peak, not 40 times more
    // (a CUDA event or pthread call open inside the call it annotates counts as one more).
    assert_eq!((held, held_big), (18, 18));
}

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("chrome-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn prvsight(args: &[&str]) -> std::process::Output {
    let out = Command::new(env!("CARGO_BIN_EXE_prvsight"))
        .args(args)
        .arg("-q")
        .output()
        .unwrap();
    out
}

#[test]
fn the_cli_writes_json_and_gzip_of_the_same_bytes() {
    let dir = scratch("gz");
    let input = data("testcuda_report1.sqlite");
    let (json, gz) = (dir.join("t.json"), dir.join("t.json.gz"));
    for out in [&json, &gz] {
        let r = prvsight(&[
            "convert",
            input.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ]);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    }
    let plain = std::fs::read(&json).unwrap();
    let mut inflated = Vec::new();
    std::io::Read::read_to_end(
        &mut flate2::read::GzDecoder::new(std::fs::File::open(&gz).unwrap()),
        &mut inflated,
    )
    .unwrap();
    assert!(inflated == plain, ".json.gz inflates to the .json");
    let lib = to_json(std::slice::from_ref(&input), &Options::default());
    assert!(
        plain == lib.text.as_bytes(),
        "the CLI writes the library's bytes"
    );
    let mut names: Vec<String> = (std::fs::read_dir(&dir).unwrap())
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["t.json", "t.json.gz"],
        "no .pcf or .row beside a JSON trace"
    );
}

#[test]
fn bad_outputs_give_a_clear_error_and_leave_no_file() {
    let dir = scratch("bad");
    let input = data("testcuda_report1.sqlite");
    let missing = dir.join("no-such-folder/t.json");
    let r = prvsight(&[
        "convert",
        input.to_str().unwrap(),
        "-o",
        missing.to_str().unwrap(),
    ]);
    assert_eq!(r.status.code(), Some(1));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(
        err.contains("writing") && err.contains("no-such-folder/t.json"),
        "{err}"
    );
    let r = prvsight(&[
        "convert",
        input.to_str().unwrap(),
        "-o",
        dir.join("t.txt").to_str().unwrap(),
    ]);
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr).contains(".json or .json.gz"));
    // A conversion failing part way (records already written) leaves no JSON, partial or not.
    let bytes = std::fs::read(&input).unwrap();
    let bad = dir.join("bad.sqlite");
    let sql = "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET gridX = 'wide'
               WHERE rowid = (SELECT max(rowid) FROM CUPTI_ACTIVITY_KIND_KERNEL);";
    std::fs::write(&bad, mutated(&bytes, sql)).unwrap();
    for out in ["t.json", "t.json.gz"] {
        let r = prvsight(&[
            "convert",
            bad.to_str().unwrap(),
            "-o",
            dir.join(out).to_str().unwrap(),
        ]);
        assert_eq!(r.status.code(), Some(1), "{out}");
    }
    let left: Vec<String> = (std::fs::read_dir(&dir).unwrap())
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["bad.sqlite"]);
}
