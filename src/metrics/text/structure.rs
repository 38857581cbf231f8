//! The readable tables of the run's structure: memory transfers, the host (MPI) model, the
//! iterations with their factors, and the per-rank straggler table.

use super::{clip, fmt_ns, frac};
use crate::metrics::host::HostPop;
use crate::metrics::iterations::Spread;
use crate::metrics::report::MetricsReport;

/// `rank 3 (pid 7679, vm)` or `pid 7679 (vm)`.
fn who(rank: Option<u32>, pid: u32, host: &str) -> String {
    match rank {
        Some(r) => format!("rank {r} ({pid}, {host})"),
        None => format!("pid {pid} ({host})"),
    }
}

pub(super) fn host(h: &HostPop, line: &mut dyn FnMut(String)) {
    line(format!(
        "Host-side POP model (MPI ranks, main thread; PE = LB × CommE), N = {}",
        h.ranks.len()
    ));
    line(format!(
        "  MPI parallel efficiency   PE    {:>9}",
        frac(h.parallel_efficiency)
    ));
    line(format!(
        "  Load balance              LB    {:>9}",
        frac(h.load_balance)
    ));
    line(format!(
        "  Communication efficiency  CommE {:>9}",
        frac(h.communication_efficiency)
    ));
    if h.device_offload_efficiency.is_some() {
        line(format!(
            "  Device offload efficiency       {:>9}   (time outside MPI not spent waiting for the GPU)",
            frac(h.device_offload_efficiency)
        ));
        line(format!(
            "  Host parallel efficiency        {:>9}   (= PE × device offload)",
            frac(h.host_parallel_efficiency)
        ));
    }
    let waits = h.device_offload_efficiency.is_some();
    let wait_cell = |v: String| {
        if waits {
            format!("{v:>14}")
        } else {
            String::new()
        }
    };
    line(format!(
        "  {:<36}{:>14}{:>14}{}{:>9}{:>10}",
        "rank (pid, host)",
        "outside MPI",
        "MPI",
        wait_cell("GPU wait".into()),
        "outside",
        "MPI calls"
    ));
    for k in &h.ranks {
        line(format!(
            "  {:<36}{:>14}{:>14}{}{:>9}{:>10}{}",
            clip(&who(k.rank, k.pid, &k.host), 35),
            fmt_ns(k.useful_ns as f64),
            fmt_ns(k.mpi_ns as f64),
            wait_cell(fmt_ns(k.device_wait_ns as f64)),
            frac((h.elapsed_ns > 0).then(|| k.useful_ns as f64 / h.elapsed_ns as f64)),
            k.mpi_calls,
            if k.other_thread_calls > 0 {
                format!(
                    "  (+{} on other threads, not counted)",
                    k.other_thread_calls
                )
            } else {
                String::new()
            }
        ));
    }
}

fn spread_cells(s: Option<&Spread>) -> String {
    match s {
        Some(s) => format!(
            "{:>9}{:>9}{:>9}",
            frac(Some(s.mean)),
            frac(Some(s.min)),
            frac(Some(s.max))
        ),
        None => format!("{:>9}{:>9}{:>9}", "n/a", "n/a", "n/a"),
    }
}

/// Rows of the iteration table kept when there are many: the first, the last, and the outliers.
const ITERATION_ROWS: usize = 40;

/// The iterations table. Long: one section read top to bottom as it prints.
pub(super) fn iterations(r: &MetricsReport, line: &mut dyn FnMut(String)) {
    let it = &r.iterations;
    let Some(s) = &it.summary else {
        line(format!("Iterations: none ({})", it.note));
        line(String::new());
        return;
    };
    line(format!("Iterations: {} ({})", s.count, it.note));
    let d = &s.duration_ns;
    line(format!(
        "  duration: mean {}, median {}, min {}, max {}, variation {}",
        fmt_ns(d.mean),
        fmt_ns(d.median),
        fmt_ns(d.min),
        fmt_ns(d.max),
        frac(d.cv)
    ));
    line(format!(
        "  {:<28}{:>9}{:>9}{:>9}",
        "factor over iterations", "mean", "min", "max"
    ));
    for (name, v) in [
        ("device PE", &s.parallel_efficiency),
        ("device LB", &s.load_balance),
        ("device CommE", &s.communication_efficiency),
        ("device OrchE", &s.orchestration_efficiency),
        ("host (MPI) PE", &s.host_parallel_efficiency),
        ("host (MPI) LB", &s.host_load_balance),
        ("host (MPI) CommE", &s.host_communication_efficiency),
    ] {
        if v.is_some() {
            line(format!("  {:<28}{}", name, spread_cells(v.as_ref())));
        }
    }
    if !s.outliers.is_empty() {
        let list: Vec<String> = s.outliers.iter().map(|k| k.to_string()).collect();
        line(format!(
            "  outliers (> 1.5 × median duration): {}{}",
            list.join(", "),
            if s.warmup.is_some() {
                " (0: warm-up)"
            } else {
                ""
            }
        ));
    }
    let device = it.items.iter().any(|x| x.efficiency.is_some());
    let mpi = it.items.iter().any(|x| x.host.is_some());
    let cells = |v: [Option<f64>; 4], shown: bool| -> String {
        if shown {
            v.iter().map(|f| format!("{:>8}", frac(*f))).collect()
        } else {
            String::new()
        }
    };
    let head = |v: [&str; 4], shown: bool| -> String {
        if shown {
            v.iter().map(|h| format!("{h:>8}")).collect()
        } else {
            String::new()
        }
    };
    line(format!(
        "  {:>5}{:>13}{:>13}{}{}  {:<24}{}",
        "#",
        "start",
        "duration",
        head(["PE", "LB", "CommE", "OrchE"], device),
        head(["MPI PE", "MPI LB", "MPI CE", ""], mpi).trim_end(),
        "slowest",
        if mpi { "last to arrive" } else { "" }
    ));
    let n = it.items.len();
    for x in &it.items {
        let keep = n <= ITERATION_ROWS || x.index < 5 || x.index + 5 >= n || x.outlier;
        if !keep {
            continue;
        }
        let e = x.efficiency.as_ref();
        let h = x.host.as_ref();
        let rank =
            |r: Option<u32>, p: usize| r.map_or(format!("process {p}"), |r| format!("rank {r}"));
        let slowest = x.slowest.as_ref().map_or(String::new(), |s| match s.gpu {
            Some(g) => format!("GPU {g} ({})", rank(s.rank, s.process)),
            None => rank(s.rank, s.process),
        });
        let last = x
            .last_to_arrive
            .as_ref()
            .map_or(String::new(), |a| rank(a.rank, a.process));
        let host_cells = cells(
            [
                h.and_then(|h| h.parallel_efficiency),
                h.and_then(|h| h.load_balance),
                h.and_then(|h| h.communication_efficiency),
                None,
            ],
            mpi,
        );
        line(format!(
            "  {:>5}{:>13}{:>13}{}{}  {:<24}{}{}",
            x.index,
            fmt_ns(x.start_ns as f64),
            fmt_ns(x.duration_ns as f64),
            cells(
                [
                    e.and_then(|e| e.parallel_efficiency),
                    e.and_then(|e| e.load_balance),
                    e.and_then(|e| e.communication_efficiency),
                    e.and_then(|e| e.orchestration_efficiency),
                ],
                device
            ),
            host_cells
                .strip_suffix(&format!("{:>8}", "n/a"))
                .unwrap_or(&host_cells),
            slowest,
            last,
            if x.warmup {
                "  warm-up"
            } else if x.outlier {
                "  outlier"
            } else {
                ""
            }
        ));
    }
    if n > ITERATION_ROWS {
        line(format!(
            "  ({n} iterations: the first and last 5 and the outliers shown; all in --json)"
        ));
    }
    line(String::new());
}

pub(super) fn ranks(r: &MetricsReport, line: &mut dyn FnMut(String)) {
    if r.ranks.is_empty() {
        return;
    }
    line("Ranks: who to blame (over T; slowest = most useful time in an iteration)".into());
    line(format!(
        "  {:<36}{:>13}{:>13}{:>13}{:>13}{:>13}{:>10}",
        "rank (pid, host)", "GPU useful", "GPU comm", "GPU idle", "outside MPI", "MPI", "slowest"
    ));
    let cell = |v: Option<u64>| v.map_or("-".to_owned(), |v| fmt_ns(v as f64));
    for k in &r.ranks {
        line(format!(
            "  {:<36}{:>13}{:>13}{:>13}{:>13}{:>13}{:>10}",
            clip(&who(k.rank, k.pid, &k.host), 35),
            cell(k.device.as_ref().map(|d| d.useful_ns)),
            cell(k.device.as_ref().map(|d| d.communication_ns)),
            cell(k.device.as_ref().map(|d| d.idle_ns)),
            cell(k.host_useful_ns),
            cell(k.mpi_ns),
            k.slowest_iterations
                .map_or("-".to_owned(), |n| format!("{n}×"))
        ));
    }
    line(String::new());
}

/// `12.3 GB/s`.
fn rate(bytes_per_s: f64) -> String {
    format!("{:.1} GB/s", bytes_per_s / 1e9)
}

pub(super) fn transfers(r: &MetricsReport, line: &mut dyn FnMut(String)) {
    if r.transfers.is_empty() {
        return;
    }
    line(
        "Memory transfers (operations starting inside T; bandwidth = bytes / time while they ran)"
            .into(),
    );
    line(format!(
        "  {:<28}{:<16}{:>9}{:>14}{:>13}{:>13}{:>15}",
        "GPU", "direction", "count", "bytes", "time", "achieved", "device memory"
    ));
    for t in &r.transfers {
        line(format!(
            "  {:<28}{:<16}{:>9}{:>14}{:>13}{:>13}{:>15}",
            clip(&r.gpus[t.gpu].label, 27),
            t.direction.name(),
            t.count,
            t.bytes,
            fmt_ns(t.time_ns as f64),
            t.bandwidth_bytes_per_s.map_or("-".into(), rate),
            t.device_bandwidth_bytes_per_s
                .map_or("-".into(), |b| rate(b as f64)),
        ));
    }
    line(
        "  (host copies are bound by the host link, PCIe or NVLink-C2C, not by the device memory)"
            .into(),
    );
    line(String::new());
}
