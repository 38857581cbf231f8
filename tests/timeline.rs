//! The timeline sink (src/timeline/): what the page's timeline draws, checked against the export
//! itself (SQL) and against the metrics: rows and views, the cells of a zoom onto one kernel, the
//! hover's record, range factors equal to metrics.json's sums, bounded memory, windows, ranks,
//! determinism, and the `prvsight timeline` command.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use prvsight::metrics::{self, MetricsOptions};
use prvsight::model::Sink;
use prvsight::nsys::Export;
use prvsight::options::{Chop, ReadAhead};
use prvsight::pipeline::{self, Summary};
use prvsight::timeline::{Timeline, TimelineOptions, TimelineSink};
use prvsight::Options;

fn build_with(paths: &[PathBuf], opts: &Options, topts: TimelineOptions) -> (Timeline, Summary) {
    let exports: Vec<Export> = paths
        .iter()
        .map(|p| Export::open_path(p).unwrap())
        .collect();
    let mut sink = TimelineSink::new(topts);
    let summary = {
        let mut sinks: [&mut dyn Sink; 1] = [&mut sink];
        pipeline::run(&exports, opts, &mut sinks, &mut |_| true).unwrap()
    };
    (sink.into_timeline().expect("a timeline"), summary)
}

fn build(paths: &[PathBuf]) -> (Timeline, Summary) {
    build_with(paths, &Options::default(), TimelineOptions::default())
}

fn sample() -> PathBuf {
    common::data("testcuda_report1.sqlite")
}

/// (start, end) in trace time, short name, grid, block of the export's first kernel.
fn first_kernel(path: &Path, origin: u64) -> (u64, u64, String, [u32; 3], [u32; 3]) {
    let c = rusqlite::Connection::open(path).unwrap();
    c.query_row(
        "SELECT k.start, k.end, s.value, gridX, gridY, gridZ, blockX, blockY, blockZ
         FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName
         ORDER BY k.start LIMIT 1",
        [],
        |r| {
            Ok((
                r.get::<_, i64>(0)? as u64 - origin,
                r.get::<_, i64>(1)? as u64 - origin,
                r.get(2)?,
                [r.get(3)?, r.get(4)?, r.get(5)?],
                [r.get(6)?, r.get(7)?, r.get(8)?],
            ))
        },
    )
    .unwrap()
}

fn view(t: &Timeline, id: &str) -> usize {
    t.view(id).unwrap_or_else(|| panic!("no view {id}"))
}

#[test]
fn the_sample_has_a_row_per_thread_and_stream_and_a_view_per_family() {
    let (t, summary) = build(&[sample()]);
    let ids: Vec<String> = t.views.iter().map(|v| v.id()).collect();
    assert_eq!(
        ids,
        ["states", "useful", "kernels", "memory", "cuda_api", "os"]
    );
    let hosts = t.rows.iter().filter(|r| r.kind == "host").count();
    let gpus = t.rows.iter().filter(|r| r.kind == "gpu").count();
    assert_eq!((hosts, gpus), (9, 4));
    assert!(t.rows.iter().all(|r| r.process == "pid 17068"));
    assert_eq!(t.rows[9].label, "stream 13");
    // Every record of a drawn family is kept one by one: the sample is far below the budget.
    let drawn: u64 = ["kernel", "memcpy", "memset", "cuda-api", "osrt", "nvtx"]
        .iter()
        .map(|f| summary.counts.get(*f).copied().unwrap_or(0))
        .sum();
    assert!(t.kept.complete());
    assert_eq!(t.kept.len() as u64, drawn);
    assert_eq!(t.end, summary.trace.end_time);
    // The kernels legend: one kernel name, with its total time to within a bin per launch.
    let info = t.info();
    let kernels = &info.views[view(&t, "kernels")];
    assert_eq!(kernels.legend.len(), 1);
    assert_eq!(kernels.legend[0].label, "add_parallel");
    assert_eq!(kernels.rows, [9, 10, 11, 12]);
}

#[test]
fn zoomed_onto_a_kernel_the_cells_are_that_kernel() {
    let (t, summary) = build(&[sample()]);
    let origin = summary.trace.sources[0].origin_raw_ns as u64;
    let (start, end, name, grid, block) = first_kernel(&sample(), origin);
    let dur = end - start;
    let k = view(&t, "kernels");
    let row = t.rows.iter().position(|r| r.label == "stream 13").unwrap() as u32;
    // 30 pixels: 10 before the kernel, 10 on it, 10 after.
    let frame = t
        .frame(k, start - dur, end + dur, 30, &[vec![row]])
        .unwrap();
    assert!(frame.from_spans, "zoomed in past the finest bins");
    let names = t.names();
    for (p, c) in frame.cells.iter().enumerate() {
        match p {
            0..=9 | 20..=29 => assert_eq!(c.busy, 0, "pixel {p} is outside the kernel"),
            _ => {
                assert_eq!(c.busy, 255, "pixel {p} is all kernel");
                assert_eq!(t.views[k].label(c.value, names), name);
            }
        }
    }
    // The hover over it tells the kernel and its launch, as the export has them.
    let h = t.at(k, row as usize, start + dur / 2, 0).unwrap().unwrap();
    assert!(h.exact);
    assert_eq!(
        (h.start_ns, h.end_ns, h.label.as_str()),
        (start, end, name.as_str())
    );
    let detail = |k: &str| h.details.iter().find(|(l, _)| l == k).unwrap().1.clone();
    assert_eq!(
        detail("Grid"),
        format!("{} × {} × {}", grid[0], grid[1], grid[2])
    );
    assert_eq!(
        detail("Block"),
        format!("{} × {} × {}", block[0], block[1], block[2])
    );
    // Zoomed out to the whole run, the bins say the same stream ran a kernel there.
    let whole = t.frame(k, 0, t.end, 1000, &[vec![row]]).unwrap();
    assert!(!whole.from_spans);
    let p = (u128::from(start) * 1000 / u128::from(t.end)) as usize;
    assert!(whole.cells[p].busy > 0 || whole.cells[p + 1].busy > 0);
    assert!(whole.cells.iter().filter(|c| c.busy > 0).count() <= 3);
}

/// The range factors' sums over the whole grid are metrics.json's, to the nanosecond.
fn assert_factors_match_metrics(paths: &[PathBuf]) {
    let (t, _) = build(paths);
    let exports: Vec<Export> = paths
        .iter()
        .map(|p| Export::open_path(p).unwrap())
        .collect();
    let mopts = MetricsOptions {
        elapsed: metrics::Elapsed::Trace,
        ..MetricsOptions::default()
    };
    let report = metrics::compute(&exports, &Options::default(), &mopts).unwrap();
    let f = t.range_factors(0, t.grid.end() - t.offset).efficiency;
    let m = &report.efficiency;
    assert_eq!(
        (f.gpus, f.useful_sum_ns, f.useful_max_ns, f.active_max_ns),
        (m.gpus, m.useful_sum_ns, m.useful_max_ns, m.active_max_ns),
        "{paths:?}"
    );
    // A range inside: exact where it falls on bin edges, and never above the whole run.
    let half = t.range_factors(0, t.grid.width * (t.grid.count as u64 / 2));
    assert!(half.efficiency.useful_sum_ns <= m.useful_sum_ns);
    assert_eq!(half.resolution_ns, t.grid.width);
}

#[test]
fn range_factors_add_up_to_the_metrics() {
    assert_factors_match_metrics(&[sample()]);
    let Some(dir) = common::shared_traces() else {
        return;
    };
    assert_factors_match_metrics(&[dir.join("mfu_2gpu_before.sqlite")]);
}

#[test]
fn past_its_budgets_the_timeline_keeps_the_long_spans_and_the_bins() {
    let small = TimelineOptions {
        bins: 1 << 16,
        bins_budget: 64 << 10,
        spans_budget: 40 * std::mem::size_of::<prvsight::timeline::Span>(),
        factors_budget: 1 << 10,
        ..TimelineOptions::default()
    };
    let (t, summary) = build_with(&[sample()], &Options::default(), small);
    assert_eq!(
        t.grid.count,
        1 << 10,
        "the bins were halved down to the floor"
    );
    assert!(!t.kept.complete());
    assert!(t.kept.len() <= 40);
    assert!(t
        .kept
        .rows
        .iter()
        .flat_map(|r| r.iter())
        .all(|s| s.end - s.start >= t.kept.shortest));
    // The longest call (cudaHostAlloc, 0.7 s) is still there, exact.
    let api = view(&t, "cuda_api");
    let main = t
        .rows
        .iter()
        .position(|r| r.label.starts_with("thread 17068"))
        .unwrap();
    let longest = t.kept.rows[main]
        .iter()
        .max_by_key(|s| s.end - s.start)
        .unwrap();
    let h = t
        .at(api, main, (longest.start + longest.end) / 2, 0)
        .unwrap()
        .unwrap();
    assert!(h.exact);
    assert_eq!(h.label, "cudaHostAlloc");
    // A short kernel now shows through its bin only, and the hover says so.
    let origin = summary.trace.sources[0].origin_raw_ns as u64;
    let (start, end, ..) = first_kernel(&sample(), origin);
    let k = view(&t, "kernels");
    let row = t.rows.iter().position(|r| r.label == "stream 13").unwrap();
    let h = t.at(k, row, (start + end) / 2, 0).unwrap().unwrap();
    assert!(!h.exact);
    assert_eq!(h.label, "add_parallel");
    let deep = t.frame(k, start, end, 10, &[vec![row as u32]]).unwrap();
    assert!(
        deep.cells.iter().all(|c| c.busy > 0),
        "the bin still shows the kernel"
    );
}

#[test]
fn a_kept_window_is_drawn_in_the_traces_own_time() {
    let opts = Options {
        chop: Some(Chop::parse_window("1.4s..1.6s").unwrap()),
        ..Options::default()
    };
    let (t, _) = build_with(&[sample()], &opts, TimelineOptions::default());
    let prv = common::convert(&[sample()], &opts).unwrap().prv;
    let header_end: u64 = prv
        .split("):")
        .nth(1)
        .unwrap()
        .split("_ns")
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(t.end, header_end);
    assert_eq!(t.offset, 1_400_000_000);
    // Its first kernel is where the .prv puts it.
    let (whole, summary) = build(&[sample()]);
    let origin = summary.trace.sources[0].origin_raw_ns as u64;
    let (start, ..) = first_kernel(&sample(), origin);
    let k = view(&t, "kernels");
    let row = t.rows.iter().position(|r| r.label == "stream 13").unwrap();
    let h = t.at(k, row, start - t.offset + 1, 0).unwrap().unwrap();
    assert_eq!(h.start_ns, start - t.offset);
    assert_eq!(
        whole.at(k, row, start + 1, 0).unwrap().unwrap().label,
        h.label
    );
}

#[test]
fn the_same_inputs_give_the_same_frames_whatever_the_read_path() {
    let (a, _) = build(&[sample()]);
    let opts = Options {
        read_ahead: ReadAhead::Off,
        read_order: "sql".parse().unwrap(),
        ..Options::default()
    };
    let (b, _) = build_with(&[sample()], &opts, TimelineOptions::default());
    for v in 0..a.views.len() {
        let slots: Vec<Vec<u32>> = (0..a.rows.len() as u32).map(|r| vec![r]).collect();
        let fa = a.frame(v, 0, a.end, 777, &slots).unwrap();
        let fb = b.frame(v, 0, b.end, 777, &slots).unwrap();
        assert_eq!(fa, fb, "view {}", a.views[v].id());
    }
    assert_eq!(
        serde_json::to_string(&a.info()).unwrap(),
        serde_json::to_string(&b.info()).unwrap()
    );
}

#[test]
fn mpi_ranks_group_their_rows_and_folded_rows_merge() {
    let Some(dir) = common::shared_traces() else {
        return;
    };
    let ranks: Vec<PathBuf> = (0..4)
        .map(|r| dir.join(format!("generated/mpi4/rank{r}.sqlite")))
        .collect();
    let (t, _) = build(&ranks);
    let processes: std::collections::BTreeSet<&str> =
        t.rows.iter().map(|r| r.process.as_str()).collect();
    assert_eq!(
        processes.into_iter().collect::<Vec<_>>(),
        ["rank 0", "rank 1", "rank 2", "rank 3"]
    );
    let mpi = view(&t, "mpi");
    let info = t.view_info(mpi);
    assert!(info.legend.iter().any(|l| l.label.starts_with("MPI_")));
    // MPI_Recv is white in Paraver's palette (drawn on black); on the page's white it would look
    // like "outside MPI", so no value may take the blank's colour.
    let recv = info.legend.iter().find(|l| l.label == "MPI_Recv").unwrap();
    assert_eq!(recv.colour, "#969696");
    for v in 0..t.views.len() {
        let info = t.view_info(v);
        assert!(
            info.legend.iter().all(|l| l.colour != "#ffffff"),
            "{}",
            info.id
        );
    }
    // Each rank's rows folded into one line: busy wherever any of its rows is.
    let slots: Vec<Vec<u32>> = ["rank 0", "rank 1", "rank 2", "rank 3"]
        .iter()
        .map(|p| {
            info.rows
                .iter()
                .copied()
                .filter(|&r| t.rows[r as usize].process == *p)
                .collect()
        })
        .collect();
    let f = t.frame(mpi, 0, t.end, 200, &slots).unwrap();
    for (s, slot) in slots.iter().enumerate() {
        assert!(!slot.is_empty());
        assert!(
            f.cells[s * 200..(s + 1) * 200].iter().any(|c| c.busy > 0),
            "rank {s}"
        );
    }
}

#[test]
fn bad_frames_are_refused_with_a_reason() {
    let (t, _) = build(&[sample()]);
    assert!(t.frame(0, 10, 10, 100, &[vec![0]]).is_err());
    assert!(t.frame(0, 0, 10, 0, &[vec![0]]).is_err());
    assert!(t.frame(99, 0, 10, 10, &[vec![0]]).is_err());
    let e = t.frame(0, 0, 10, 10, &[vec![999]]).unwrap_err().to_string();
    assert!(e.contains("no row 999"), "{e}");
}

fn cli() -> Command {
    Command::new(env!("CARGO_BIN_EXE_prvsight"))
}

#[test]
fn the_cli_draws_a_view_as_text_and_names_the_views_it_has() {
    let out = cli()
        .args(["timeline", "--view", "kernels", "--width", "60"])
        .arg(sample())
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("CUDA kernels · 0 ns to 1.749 s · 60 columns"),
        "{text}"
    );
    assert_eq!(
        text.lines().filter(|l| l.contains("GPU0 stream")).count(),
        4,
        "{text}"
    );
    assert!(
        text.contains("  A  ") && text.contains("add_parallel"),
        "{text}"
    );
    let out = cli()
        .args(["timeline", "--view", "mpi"])
        .arg(sample())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("no view \"mpi\"") && err.contains("states, useful, kernels"),
        "{err}"
    );
    let out = cli()
        .args([
            "timeline",
            "--json",
            "--width",
            "10",
            "--range",
            "1.45s..1.46s",
        ])
        .arg(sample())
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["frame"]["width"], 10);
    assert_eq!(v["frame"]["start_ns"], 1_450_000_000u64);
    assert_eq!(v["timeline"]["rows"].as_array().unwrap().len(), 13);
}
