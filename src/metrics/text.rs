//! The readable form of a [`MetricsReport`] (the default output of `prvsight metrics`): the factors
//! first, then the tables that explain them, then the definitions of every term used.

use std::fmt::Write;

mod structure;

use super::histogram::{bin_of, NBINS};
use super::report::{Breakdown, MetricsReport, OverlapProfile};

/// `1.234 s`, `12.345 ms`, `3.210 µs`, `999 ns`.
pub fn fmt_ns(ns: f64) -> String {
    let a = ns.abs();
    if a >= 1e9 {
        format!("{:.3} s", ns / 1e9)
    } else if a >= 1e6 {
        format!("{:.3} ms", ns / 1e6)
    } else if a >= 1e3 {
        format!("{:.3} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

fn pct(p: Option<f64>) -> String {
    p.map_or_else(|| "n/a".into(), |v| format!("{v:.2}%"))
}

fn frac(f: Option<f64>) -> String {
    pct(f.map(|v| 100.0 * v))
}

fn clip(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        s.to_owned()
    } else {
        let mut t: String = s.chars().take(width.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

fn group_cells(b: &Breakdown) -> String {
    b.groups
        .iter()
        .map(|g| format!("{:>14}", pct(g.percent)))
        .collect()
}

fn overlap_cells(o: &OverlapProfile) -> String {
    let mut s = format!("{:>14}", fmt_ns(o.communication_ns as f64));
    for b in &o.buckets {
        let _ = write!(s, "{:>9}", pct(b.percent));
    }
    s
}

/// Renders the whole report as text.
pub fn render(r: &MetricsReport) -> String {
    let mut o = String::new();
    // Writing to a String cannot fail.
    let mut line = |s: String| {
        o.push_str(&s);
        o.push('\n');
    };
    let e = &r.efficiency;
    header(r, &mut line);
    line(String::new());

    if e.gpus == 0 {
        line(
            "Device efficiency: no GPU activity in the trace (the device model does not apply)"
                .into(),
        );
        line(String::new());
    } else {
        device_sections(r, &mut line);
    }

    gemm_activity(r, &mut line);
    nvtx_ranges(r, &mut line);

    match &r.host {
        None => line("Host-side POP model (MPI): no MPI calls in the trace".into()),
        Some(h) => structure::host(h, &mut line),
    }
    line(String::new());
    structure::iterations(r, &mut line);
    structure::ranks(r, &mut line);
    line(String::new());
    line("Definitions".into());
    for d in &r.definitions {
        line(format!("  {}: {}", d.term, d.meaning));
    }
    o
}

/// What was measured: inputs, the measured time T and the GPUs counted.
fn header(r: &MetricsReport, line: &mut dyn FnMut(String)) {
    line(format!("prvsight metrics ({})", r.generator));
    line(format!("  inputs: {}", r.inputs.join(", ")));
    match &r.window.nvtx_range {
        None if r.options.time_window.is_some() => {
            let (a, b) = r.options.time_window.unwrap_or_default();
            line(format!(
                "  measured time T = {}: the time window {} .. {} of the trace",
                fmt_ns(r.window.elapsed_ns as f64),
                fmt_ns(a as f64),
                fmt_ns(b as f64)
            ))
        }
        None if r.window.mpi_start_ns.is_some() => line(format!(
            "  measured time T = {} from the end of MPI_Init ({}) to the start of MPI_Finalize ({}) (TALP's window; --elapsed trace for the whole trace)",
            fmt_ns(r.window.elapsed_ns as f64),
            fmt_ns(r.window.mpi_start_ns.unwrap_or(0) as f64),
            fmt_ns(r.window.mpi_end_ns.unwrap_or(0) as f64),
        )),
        None => line(format!(
            "  measured time T = {} (whole trace)",
            fmt_ns(r.window.elapsed_ns as f64)
        )),
        Some(w) => line(format!(
            "  measured time T = {} = union of {} instance(s) of NVTX range '{}'{} between {} and {}",
            fmt_ns(r.window.elapsed_ns as f64),
            r.window.instances,
            w.name,
            w.instance
                .map(|k| format!(" (instance {k} of each thread)"))
                .unwrap_or_default(),
            fmt_ns(r.window.first_start_ns.unwrap_or(0) as f64),
            fmt_ns(r.window.last_end_ns.unwrap_or(0) as f64),
        )),
    }
    line(format!(
        "  GPUs: N = {} with activity, of {}; NCCL kernels count as {}",
        r.efficiency.gpus,
        r.gpus.len(),
        r.options.nccl_as.name()
    ));
}

/// Tensor-core and SM activity of the GEMM kernels, where sampled.
fn gemm_activity(r: &MetricsReport, line: &mut dyn FnMut(String)) {
    if !r.gemm_activity.is_empty() {
        line(
            "GEMM kernels: tensor-core and SM activity while they ran (sampled GPU metrics)".into(),
        );
        line(format!(
            "  {:>8} {:>8} {:>8}  kernel",
            "tensor%", "SM%", "samples"
        ));
        let pct = |v: Option<f64>| v.map_or("-".to_owned(), |x| format!("{x:.1}"));
        for g in r.gemm_activity.iter().take(r.options.top.max(1)) {
            line(format!(
                "  {:>8} {:>8} {:>8}  {}",
                pct(g.tensor_active_pct),
                pct(g.sm_active_pct),
                g.samples,
                g.kernel
            ));
        }
        line(String::new());
    }
}

/// The NVTX ranges with the most time, and the factors inside them.
fn nvtx_ranges(r: &MetricsReport, line: &mut dyn FnMut(String)) {
    if !r.nvtx.ranges.is_empty() {
        line(format!(
            "NVTX ranges ({} of {} distinct, by total time; factors inside the instances)",
            r.nvtx.ranges.len(),
            r.nvtx.distinct
        ));
        line(format!(
            "  {:<40}{:>8}{:>13}{:>13}{:>9}{:>9}{:>9}{:>9}",
            "range", "count", "total", "mean", "PE", "LB", "CommE", "OrchE"
        ));
        for n in &r.nvtx.ranges {
            let name = if n.domain.is_empty() {
                n.name.clone()
            } else {
                format!("{}:{}", n.domain, n.name)
            };
            let f = &n.efficiency;
            line(format!(
                "  {:<40}{:>8}{:>13}{:>13}{:>9}{:>9}{:>9}{:>9}",
                clip(&name, 39),
                n.count,
                fmt_ns(n.total_ns as f64),
                fmt_ns(n.mean_ns),
                frac(f.parallel_efficiency),
                frac(f.load_balance),
                frac(f.communication_efficiency),
                frac(f.orchestration_efficiency)
            ));
        }
        line(String::new());
    }
}

/// Everything about the GPUs: factors, per-GPU table, breakdown, overlap, kernels, histograms.
fn device_sections(r: &MetricsReport, line: &mut dyn FnMut(String)) {
    factors_and_gpus(r, line);
    breakdown_and_overlap(r, line);
    structure::transfers(r, line);
    top_kernels(r, line);
    histograms(r, line);
}

/// A GPU's name in the tables (its host's too where the run spans several).
fn gpu_name(r: &MetricsReport, i: usize) -> String {
    let multi_host = r.gpus.iter().any(|g| g.host != r.gpus[0].host);
    let g = &r.gpus[i];
    let n = if multi_host {
        format!("{}:{}", g.host, g.label)
    } else {
        g.label.clone()
    };
    clip(&n, 28)
}

/// The efficiency factors and the per-GPU table.
fn factors_and_gpus(r: &MetricsReport, line: &mut dyn FnMut(String)) {
    let e = &r.efficiency;
    line("Device efficiency (POP/TALP model; PE = LB × CommE × OrchE)".into());
    line(format!(
        "  Parallel efficiency       PE    {:>9}",
        frac(e.parallel_efficiency)
    ));
    line(format!(
        "  Load balance              LB    {:>9}",
        frac(e.load_balance)
    ));
    line(format!(
        "  Communication efficiency  CommE {:>9}",
        frac(e.communication_efficiency)
    ));
    line(format!(
        "  Orchestration efficiency  OrchE {:>9}",
        frac(e.orchestration_efficiency)
    ));
    line(String::new());

    line("Per GPU (load balance of useful time)".into());
    line(format!(
        "  {:<28}{:>14}{:>14}{:>14}{:>9}{:>9}{:>9}{:>9}{:>7}{:>8}{:>7}",
        "GPU",
        "useful",
        "comm",
        "idle",
        "useful",
        "comm",
        "idle",
        "kernels",
        "nccl",
        "memcpy",
        "memset"
    ));
    for (i, g) in r.gpus.iter().enumerate() {
        line(format!(
            "  {:<28}{:>14}{:>14}{:>14}{:>9}{:>9}{:>9}{:>9}{:>7}{:>8}{:>7}{}",
            gpu_name(r, i),
            fmt_ns(g.useful_ns as f64),
            fmt_ns(g.communication_ns as f64),
            fmt_ns(g.idle_ns as f64),
            frac(g.useful_fraction),
            frac(g.communication_fraction),
            frac(g.idle_fraction),
            g.counts.kernels,
            g.counts.nccl_kernels,
            g.counts.memcpy,
            g.counts.memset,
            if g.has_activity {
                ""
            } else {
                "  (no activity: not in N)"
            }
        ));
    }
    let lb = &r.load_balance;
    for (label, pick) in [("Avg", 0), ("Max", 1)] {
        let v = |a: &super::report::AvgMax| {
            if pick == 0 {
                a.avg_ns.map_or_else(|| "n/a".into(), fmt_ns)
            } else {
                fmt_ns(a.max_ns as f64)
            }
        };
        line(format!(
            "  {:<28}{:>14}{:>14}{:>14}",
            label,
            v(&lb.useful),
            v(&lb.communication),
            v(&lb.idle)
        ));
    }
    line(String::new());
}

/// The GPU time breakdown and the communication/computation overlap.
fn breakdown_and_overlap(r: &MetricsReport, line: &mut dyn FnMut(String)) {
    line(
        "GPU time breakdown (% of T; total: % of N·T; overlapped time counted once, by priority)"
            .into(),
    );
    let heads: String = r
        .breakdown
        .groups
        .iter()
        .map(|g| format!("{:>14}", g.group.name()))
        .collect();
    line(format!("  {:<28}{heads}", "GPU"));
    for (i, g) in r.gpus.iter().enumerate().filter(|(_, g)| g.has_activity) {
        line(format!(
            "  {:<28}{}",
            gpu_name(r, i),
            group_cells(&g.breakdown)
        ));
    }
    line(format!("  {:<28}{}", "Total", group_cells(&r.breakdown)));
    if !r.breakdown.categories.is_empty() {
        let cats: Vec<String> = r
            .breakdown
            .categories
            .iter()
            .map(|c| format!("{} {}", c.category.name(), pct(c.percent)))
            .collect();
        line(format!("  by category (total): {}", cats.join(", ")));
    }
    line(String::new());

    line(
        "Communication/computation overlap (% of communication time with k useful kernels running)"
            .into(),
    );
    line(format!(
        "  {:<28}{:>14}{:>9}{:>9}{:>9}{:>9}",
        "GPU", "comm running", "0", "1", "2", "3+"
    ));
    for (i, g) in r.gpus.iter().enumerate().filter(|(_, g)| g.has_activity) {
        line(format!(
            "  {:<28}{}",
            gpu_name(r, i),
            overlap_cells(&g.overlap)
        ));
    }
    line(format!("  {:<28}{}", "Total", overlap_cells(&r.overlap)));
    line(String::new());
}

/// The kernels with the most time, over all GPUs and per GPU.
fn top_kernels(r: &MetricsReport, line: &mut dyn FnMut(String)) {
    line(format!(
        "Top kernels, all GPUs ({} of {} distinct names, by total time)",
        r.kernels.top.len(),
        r.kernels.distinct
    ));
    line(format!(
        "  {:>12}{:>8}{:>8}{:>12}{:>12}{:>12}{:>12}  {:<14}name",
        "total", "%busy", "count", "mean", "min", "max", "stddev", "category"
    ));
    for k in &r.kernels.top {
        line(format!(
            "  {:>12}{:>8}{:>8}{:>12}{:>12}{:>12}{:>12}  {:<14}{}",
            fmt_ns(k.total_ns as f64),
            pct(k.percent_of_busy),
            k.count,
            fmt_ns(k.mean_ns),
            fmt_ns(k.min_ns as f64),
            fmt_ns(k.max_ns as f64),
            fmt_ns(k.stddev_ns),
            k.category.name(),
            clip(&k.name, 90)
        ));
    }
    for gk in &r.kernels.per_gpu {
        if r.kernels.per_gpu.len() < 2 {
            break;
        }
        line(format!(
            "  on {} ({} distinct):",
            gpu_name(r, gk.gpu),
            gk.distinct
        ));
        for k in gk.top.iter().take(5) {
            line(format!(
                "  {:>12}{:>8}{:>8}{:>12}  {}",
                fmt_ns(k.total_ns as f64),
                pct(k.percent_of_busy),
                k.count,
                fmt_ns(k.mean_ns),
                clip(&k.short_name, 60)
            ));
        }
    }
    line(String::new());
}

/// Kernel duration histograms, where there are any.
fn histograms(r: &MetricsReport, line: &mut dyn FnMut(String)) {
    if !r.histograms.is_empty() {
        line("Kernel duration histograms (log bins, 4 per octave; ▁…█ = count)".into());
        for h in &r.histograms {
            line(format!(
                "  {:<40} {}{}",
                clip(&h.short_name, 40),
                sparkline(&h.bins),
                if h.modes_ns.len() > 1 {
                    let m: Vec<String> = h.modes_ns.iter().map(|&n| fmt_ns(n as f64)).collect();
                    format!("  {} modes, from {}", h.modes_ns.len(), m.join(" / "))
                } else {
                    String::new()
                }
            ));
        }
        line(String::new());
    }
}

/// One character per bin from the shortest to the longest non-empty bin, with both ends labelled.
fn sparkline(bins: &[super::histogram::HistBin]) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let (Some(first), Some(last)) = (bins.first(), bins.last()) else {
        return String::new();
    };
    let (k0, k1) = (bin_of(first.lo_ns), bin_of(last.lo_ns));
    let mut counts = vec![0u64; NBINS];
    for b in bins {
        counts[bin_of(b.lo_ns)] = b.count;
    }
    let max = bins.iter().map(|b| b.count).max().unwrap_or(1).max(1);
    let bars: String = counts[k0..=k1]
        .iter()
        .map(|&c| {
            if c == 0 {
                ' '
            } else {
                BARS[((c * 7 + max / 2) / max) as usize]
            }
        })
        .collect();
    let hi = last.hi_ns.map_or_else(|| "∞".into(), |h| fmt_ns(h as f64));
    format!("{} [{bars}] {}", fmt_ns(first.lo_ns as f64), hi)
}
