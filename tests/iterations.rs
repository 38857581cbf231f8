//! Iterations and their factors (src/metrics/iterations), per rank and per iteration, on data
//! with known answers: synthetic exports with a designed straggler and a designed slow
//! iteration, a GPU-only run with a kernel once per step, an irregular one, and the real
//! exports (generated/mpi4: 20 `iteration` ranges per rank, rank 3 1.5× heavier;
//! nsightful_power_iteration: its `Step N to M` ranges), checked against SQL.

mod common;

use std::path::{Path, PathBuf};

use common::shared_traces;
use prvsight::metrics::iterations::IterationSource;
use prvsight::metrics::{MetricsOptions, MetricsReport};
use prvsight::nsys::Export;
use prvsight::synth::{names, ExportBuilder, NvtxText, Session, StreamKind};
use prvsight::{Error, Options};

const STEPS: usize = 6;
const STEP_NS: i64 = 100_000;
const STEP_LEN: i64 = 90_000;
const T0: i64 = 1_000_000;

/// Compute time of rank `r` in step `k`: 40 µs, rank 1 always 50 µs (the straggler), rank 2
/// 80 µs in step 3 (the slow iteration).
fn work(r: usize, k: usize) -> i64 {
    match (r, k) {
        (2, 3) => 80_000,
        (1, _) => 50_000,
        _ => 40_000,
    }
}

fn session() -> Session {
    Session {
        utc_epoch_ns: 1_780_000_000_000_000_000,
        system_clock_ns: 0,
        hostname: "node0".into(),
    }
}

/// Writes the export to a file of its own (tests run in parallel, some on the same export).
fn write(b: &ExportBuilder, name: &str) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let path = dir.join(format!(
        "iterations-{name}-{}-{n}.sqlite",
        std::process::id()
    ));
    b.write_path(&path).unwrap();
    path
}

/// Four ranks, one GPU each, `train_step` ranges (with `forward` inside, and one `training`
/// range around them all) and one kernel per step.
fn steps_export() -> PathBuf {
    let mut b = ExportBuilder::new("steps", session());
    for r in 0..4usize {
        let p = b.add_process(5000 + r as u32, "python3", Some(r as u32), 100);
        let t = b.main_thread(p);
        let gpu = b.add_gpu(r as u32, "NVIDIA H100 80GB HBM3");
        let s = b.add_stream(p, gpu, 7, StreamKind::Default);
        b.nvtx_push_pop(
            t,
            T0 - 500,
            T0 + STEPS as i64 * STEP_NS,
            NvtxText::Inline("training"),
            0,
            None,
        )
        .unwrap();
        for k in 0..STEPS {
            let start = T0 + k as i64 * STEP_NS;
            let text = format!("train_step {k}");
            b.nvtx_push_pop(t, start, start + STEP_LEN, NvtxText::Inline(&text), 0, None)
                .unwrap();
            b.nvtx_push_pop(
                t,
                start + 100,
                start + 3_000,
                NvtxText::Inline("forward"),
                0,
                None,
            )
            .unwrap();
            let corr = b.correlation(p.pid);
            b.runtime_call(t, start + 1_000, 1_500, "cudaLaunchKernel_v7000", corr);
            b.kernel(
                s,
                start + 5_000,
                work(r, k),
                &names::elementwise_add(),
                [1, 1, 1],
                [128, 1, 1],
                corr,
                None,
            )
            .unwrap();
        }
    }
    write(&b, "steps")
}

fn metrics(paths: &[PathBuf], source: IterationSource) -> Result<MetricsReport, Error> {
    let exports: Vec<Export> = paths
        .iter()
        .map(|p| Export::open_path(p).unwrap())
        .collect();
    let o = MetricsOptions {
        iterations: source,
        ..MetricsOptions::default()
    };
    prvsight::metrics::compute(&exports, &Options::default(), &o)
}

#[test]
fn designed_straggler_and_slow_iteration_are_found() {
    let r = metrics(&[steps_export()], IterationSource::Auto).unwrap();
    let it = &r.iterations;
    assert_eq!(it.detected_by, "nvtx");
    assert_eq!(it.name.as_deref(), Some("train_step N"), "{}", it.note);
    assert_eq!(it.items.len(), STEPS);
    for x in &it.items {
        let k = x.index;
        let d: Vec<u64> = (0..4).map(|r| work(r, k) as u64).collect();
        let e = x.efficiency.as_ref().expect("GPUs");
        assert_eq!(e.elapsed_ns, STEP_LEN as u64);
        assert_eq!(e.gpus, 4);
        assert_eq!(e.useful_sum_ns, d.iter().sum::<u64>());
        let max = *d.iter().max().unwrap();
        assert_eq!(e.useful_max_ns, max);
        assert_eq!(
            e.load_balance,
            Some(d.iter().sum::<u64>() as f64 / (4 * max) as f64)
        );
        assert_eq!(e.communication_efficiency, Some(1.0));
        assert_eq!(
            e.orchestration_efficiency,
            Some(max as f64 / STEP_LEN as f64)
        );
        let slow = x.slowest.as_ref().unwrap();
        let want = if k == 3 { 2 } else { 1 };
        assert_eq!(
            (slow.rank, slow.process, slow.gpu),
            (Some(want), want as usize, Some(want as usize))
        );
        assert_eq!((x.start_ns, x.duration_ns), (x.start_ns, STEP_LEN as u64));
        assert_eq!(x.time.useful_ns, d.iter().sum::<u64>());
        assert_eq!(x.time.idle_ns, 4 * STEP_LEN as u64 - d.iter().sum::<u64>());
        assert!(x.host.is_none() && x.last_to_arrive.is_none());
        assert!(!x.outlier && !x.warmup);
    }
    let s = it.summary.as_ref().unwrap();
    assert_eq!(s.count, STEPS);
    assert_eq!(s.duration_ns.cv, Some(0.0));
    assert_eq!(s.load_balance.as_ref().unwrap().min, 210.0 / 320.0);
    assert_eq!(s.load_balance.as_ref().unwrap().max, 170.0 / 200.0);
    assert_eq!(
        s.slowest
            .iter()
            .map(|c| (c.rank, c.iterations))
            .collect::<Vec<_>>(),
        [(Some(1), 5), (Some(2), 1)]
    );
    // The straggler table: rank 1 slowest 5 times, its GPU's useful time the sum of its work.
    let row = r.ranks.iter().find(|k| k.rank == Some(1)).unwrap();
    assert_eq!(row.slowest_iterations, Some(5));
    assert_eq!(
        row.device.as_ref().unwrap().useful_ns,
        50_000 * STEPS as u64
    );
    assert_eq!(row.gpus, [1]);
}

#[test]
fn a_range_asked_for_by_name_is_taken_and_an_unknown_one_is_an_error() {
    let path = steps_export();
    let r = metrics(
        std::slice::from_ref(&path),
        IterationSource::Range("forward".into()),
    )
    .unwrap();
    assert_eq!(r.iterations.name.as_deref(), Some("forward"));
    assert_eq!(r.iterations.items.len(), STEPS);
    // The one `training` range is taken when asked for: one iteration.
    let r = metrics(
        std::slice::from_ref(&path),
        IterationSource::Range("training".into()),
    )
    .unwrap();
    assert_eq!(r.iterations.items.len(), 1);
    let r = metrics(std::slice::from_ref(&path), IterationSource::Off).unwrap();
    assert_eq!(r.iterations.detected_by, "none");
    assert!(r.iterations.items.is_empty() && r.iterations.summary.is_none());
    match metrics(
        std::slice::from_ref(&path),
        IterationSource::Range("backward".into()),
    ) {
        Err(Error::Usage(m)) => {
            assert!(m.contains("'backward' is not in the trace"), "{m}");
            assert!(m.contains("train_step N") && m.contains("forward"), "{m}");
        }
        other => panic!("{:?}", other.map(|r| r.iterations.note)),
    }
}

/// One GPU, no NVTX: `fused_adam` once per 100 µs step at its start, then elementwise kernels
/// at irregular places (`irregular` alone: only those).
fn gpu_only_export(with_marker: bool) -> PathBuf {
    let mut b = ExportBuilder::new("gpu-only", session());
    let p = b.add_process(6000, "python3", None, 100);
    let t = b.main_thread(p);
    let gpu = b.add_gpu(0, "NVIDIA H100 80GB HBM3");
    let s = b.add_stream(p, gpu, 7, StreamKind::Default);
    let offsets = [
        [10_000, 31_000, 47_000],
        [22_000, 25_000, 61_000],
        [12_000, 70_000, 71_000],
    ];
    for k in 0..12i64 {
        let start = T0 + k * STEP_NS;
        let corr = b.correlation(p.pid);
        b.runtime_call(t, start - 2_000, 1_000, "cudaLaunchKernel_v7000", corr);
        if with_marker {
            b.kernel(
                s,
                start,
                5_000,
                &names::fused_adam(),
                [1, 1, 1],
                [128, 1, 1],
                corr,
                None,
            )
            .unwrap();
        }
        for &o in &offsets[k as usize % 3] {
            b.kernel(
                s,
                start + o,
                1_000 + (k * 37 % 5) * 100,
                &names::elementwise_add(),
                [1, 1, 1],
                [128, 1, 1],
                corr,
                None,
            )
            .unwrap();
        }
    }
    write(&b, if with_marker { "marker" } else { "irregular" })
}

#[test]
fn a_kernel_once_per_step_marks_the_iterations_and_irregular_kernels_mark_none() {
    let r = metrics(&[gpu_only_export(true)], IterationSource::Auto).unwrap();
    let it = &r.iterations;
    assert_eq!(it.detected_by, "gpu", "{}", it.note);
    assert_eq!(
        it.name.as_deref(),
        Some(names::fused_adam().demangled.as_str())
    );
    assert!(it.note.contains("every 0.100 ms"), "{}", it.note);
    // 12 starts: 11 iterations, each from one start of the marker to the next.
    assert_eq!(it.items.len(), 11);
    let offsets = [
        [10_000, 31_000, 47_000],
        [22_000, 25_000, 61_000],
        [12_000, 70_000, 71_000],
    ];
    for x in &it.items {
        let k = x.index as i64;
        assert_eq!(x.duration_ns, STEP_NS as u64);
        // Useful: the marker and the elementwise kernels of the step (the 70/71 µs pair overlaps).
        let mut intervals: Vec<(i64, i64)> = vec![(0, 5_000)];
        intervals.extend(
            offsets[k as usize % 3]
                .iter()
                .map(|&o| (o, o + 1_000 + (k * 37 % 5) * 100)),
        );
        assert_eq!(
            x.efficiency.as_ref().unwrap().useful_sum_ns as i64,
            union_length(&mut intervals),
            "iteration {k}"
        );
    }
    let r = metrics(&[gpu_only_export(false)], IterationSource::Auto).unwrap();
    assert_eq!(r.iterations.detected_by, "none", "{}", r.iterations.note);
    assert!(r
        .iterations
        .note
        .contains("no kernel recurs at a regular period"));
}

fn union_length(v: &mut [(i64, i64)]) -> i64 {
    v.sort();
    let mut total = 0;
    let mut cur: Option<(i64, i64)> = None;
    for &(a, b) in v.iter() {
        match &mut cur {
            Some((_, e)) if a <= *e => *e = (*e).max(b),
            _ => {
                if let Some((s, e)) = cur {
                    total += e - s;
                }
                cur = Some((a, b));
            }
        }
    }
    total + cur.map_or(0, |(s, e)| e - s)
}

/// (start, end) rows of `sql` on `path`.
fn rows(path: &Path, sql: &str) -> Vec<(i64, i64)> {
    let c = rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .unwrap();
    let mut st = c.prepare(sql).unwrap();
    let v = st
        .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)))
        .unwrap()
        .map(|x| x.unwrap())
        .collect();
    v
}

/// Length of the union of `v` inside [a, b).
fn union_inside(v: &[(i64, i64)], a: i64, b: i64) -> i64 {
    let mut clipped: Vec<(i64, i64)> = v
        .iter()
        .map(|&(s, e)| (s.max(a), e.min(b)))
        .filter(|(s, e)| s < e)
        .collect();
    union_length(&mut clipped)
}

#[test]
fn mpi4_iterations_match_sql_and_rank_3_is_the_straggler() {
    let Some(dir) = shared_traces() else { return };
    let files: Vec<PathBuf> = (0..4)
        .map(|i| dir.join(format!("generated/mpi4/rank{i}.sqlite")))
        .collect();
    let r = metrics(&files, IterationSource::Auto).unwrap();
    let it = &r.iterations;
    assert_eq!(
        (it.detected_by, it.name.as_deref()),
        ("nvtx", Some("iteration"))
    );
    assert_eq!(it.items.len(), 20);
    let iters: Vec<Vec<(i64, i64)>> = files
        .iter()
        .map(|f| {
            rows(f, "SELECT e.start, e.end FROM NVTX_EVENTS e LEFT JOIN StringIds s ON s.id = e.textId \
                      WHERE e.eventType = 59 AND coalesce(e.text, s.value) = 'iteration' ORDER BY e.start")
        })
        .collect();
    let mpi: Vec<Vec<(i64, i64)>> = files
        .iter()
        .map(|f| {
            rows(
                f,
                "SELECT start, end FROM (SELECT start, end, globalTid FROM MPI_P2P_EVENTS \
                     UNION ALL SELECT start, end, globalTid FROM MPI_COLLECTIVES_EVENTS \
                     UNION ALL SELECT start, end, globalTid FROM MPI_START_WAIT_EVENTS \
                     UNION ALL SELECT start, end, globalTid FROM MPI_OTHER_EVENTS) \
                     WHERE globalTid = (SELECT globalTid FROM MPI_RANKS) ORDER BY start",
            )
        })
        .collect();
    for x in &it.items {
        let k = x.index;
        let h = x.host.as_ref().expect("MPI ranks");
        let durations: Vec<i64> = iters.iter().map(|v| v[k].1 - v[k].0).collect();
        let t = *durations.iter().max().unwrap();
        assert_eq!(h.elapsed_ns as i64, t, "iteration {k}");
        let mut useful = Vec::new();
        for rank in &h.ranks {
            let i = rank.rank.unwrap() as usize;
            let (a, b) = iters[i][k];
            let want = union_inside(&mpi[i], a, b);
            assert_eq!(rank.mpi_ns as i64, want, "iteration {k} rank {i}");
            assert_eq!(rank.useful_ns as i64, (b - a) - want);
            // Calls starting inside the instance (MPI_Init and _Finalize lie outside).
            let calls = mpi[i].iter().filter(|c| c.0 >= a && c.0 < b).count();
            assert_eq!(rank.mpi_calls as usize, calls);
            useful.push(rank.useful_ns as f64);
        }
        let max = useful.iter().cloned().fold(0.0, f64::max);
        assert_eq!(
            h.load_balance,
            Some(useful.iter().sum::<f64>() / (4.0 * max))
        );
        assert_eq!(h.communication_efficiency, Some(max / t as f64));
        // The rank arriving last at its first MPI call of the iteration (clocks aligned).
        let starts: Vec<i64> = (0..4)
            .map(|i| {
                let offset = session_offset(&files, i);
                let (a, b) = iters[i][k];
                mpi[i].iter().find(|c| c.0 >= a && c.0 < b).unwrap().0 + offset
            })
            .collect();
        let last = (0..4).max_by_key(|&i| starts[i]).unwrap();
        assert_eq!(
            x.last_to_arrive.as_ref().unwrap().rank,
            Some(last as u32),
            "iteration {k}"
        );
    }
    let s = it.summary.as_ref().unwrap();
    assert_eq!(
        s.slowest[0].rank,
        Some(3),
        "the heavy rank is the slowest most often"
    );
    assert!(s.slowest[0].iterations > 10);
    let row = r.ranks.iter().find(|k| k.rank == Some(3)).unwrap();
    assert_eq!(row.slowest_iterations, Some(s.slowest[0].iterations));
}

/// Session start of input `i` minus the earliest one's (the clock alignment).
fn session_offset(files: &[PathBuf], i: usize) -> i64 {
    let start = |f: &PathBuf| {
        rows(
            f,
            "SELECT utcEpochNs, 0 FROM TARGET_INFO_SESSION_START_TIME",
        )[0]
        .0
    };
    start(&files[i]) - files.iter().map(start).min().unwrap()
}

#[test]
fn nsightful_steps_are_the_iterations_with_their_kernel_time_from_sql() {
    let Some(dir) = shared_traces() else { return };
    let path = dir.join("nsightful_power_iteration.sqlite");
    let r = metrics(std::slice::from_ref(&path), IterationSource::Auto).unwrap();
    let it = &r.iterations;
    assert_eq!(it.name.as_deref(), Some("Step N to N"), "{}", it.note);
    assert!(it.note.contains("nesting level 2"), "{}", it.note);
    let steps = rows(&path, "SELECT e.start, e.end FROM NVTX_EVENTS e LEFT JOIN StringIds s ON s.id = e.textId \
                             WHERE e.eventType = 59 AND coalesce(e.text, s.value) LIKE 'Step % to %' ORDER BY e.start");
    assert_eq!(it.items.len(), steps.len());
    let kernels = rows(&path, "SELECT start, end FROM CUPTI_ACTIVITY_KIND_KERNEL");
    for (x, &(a, b)) in it.items.iter().zip(&steps) {
        assert_eq!(x.duration_ns as i64, b - a);
        let e = x.efficiency.as_ref().unwrap();
        assert_eq!(
            e.useful_sum_ns as i64,
            union_inside(&kernels, a, b),
            "step {}",
            x.index
        );
        assert_eq!(e.elapsed_ns as i64, b - a);
    }
}

#[test]
fn the_cli_shows_the_tables_and_refuses_bad_options() {
    let path = steps_export();
    let bin = env!("CARGO_BIN_EXE_prvsight");
    let out = std::process::Command::new(bin)
        .args(["metrics", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("Iterations: 6 (NVTX range 'train_step N' repeats 6 times per rank"),
        "{text}"
    );
    assert!(text.contains("Ranks: who to blame"), "{text}");
    assert!(text.contains("GPU 2 (rank 2)"), "{text}");
    for (args, want) in [
        (vec!["--iterations", ""], "--iterations takes auto, none"),
        (vec!["--iterations", "nope"], "'nope' is not in the trace"),
        (
            vec!["--elapsed", "wall"],
            "--elapsed takes 'mpi' or 'trace'",
        ),
    ] {
        let out = std::process::Command::new(bin)
            .arg("metrics")
            .arg(&path)
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

#[test]
fn a_time_window_is_the_measured_time_instead_of_the_mpi_window() {
    let Some(dir) = shared_traces() else { return };
    let files: Vec<PathBuf> = (0..4)
        .map(|i| dir.join(format!("generated/mpi4/rank{i}.sqlite")))
        .collect();
    let whole = metrics(&files, IterationSource::Auto).unwrap();
    let x = &whole.iterations.items[5];
    let exports: Vec<Export> = files
        .iter()
        .map(|p| Export::open_path(p).unwrap())
        .collect();
    let o = MetricsOptions {
        time_window: Some((x.start_ns, x.end_ns)),
        iterations: IterationSource::Off,
        ..MetricsOptions::default()
    };
    let r = prvsight::metrics::compute(&exports, &Options::default(), &o).unwrap();
    assert_eq!(r.window.elapsed_ns, x.end_ns - x.start_ns);
    assert_eq!((r.window.mpi_start_ns, r.window.mpi_end_ns), (None, None));
    let h = r.host.as_ref().unwrap();
    // Every rank's time in MPI plus outside it is the window.
    assert!(h
        .ranks
        .iter()
        .all(|k| k.mpi_ns + k.useful_ns == x.end_ns - x.start_ns));
    assert!(h.ranks.iter().any(|k| k.mpi_ns > 0));
    assert!(r
        .definitions
        .iter()
        .any(|d| d.term == "T" && d.meaning.starts_with("the time window")));
}
