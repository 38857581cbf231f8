//! Turns the accumulated state of a finished pass into the [`MetricsReport`]: totals over the GPUs
//! in N, factors, tables sorted and cut to `top`, histograms of the top kernels.

use super::accum::{GpuAcc, OVERLAP_BUCKETS};
use super::category::NCAT;
use super::efficiency::{Efficiency, GpuTimes};
use super::report::*;
use super::sink::State;
use super::MetricsOptions;
use crate::model::{Names, Ns, TraceInfo};

/// The report of a finished pass. Long: one field of the report after another.
pub(super) fn build(
    opts: &MetricsOptions,
    trace: &TraceInfo,
    names: &Names,
    st: &State,
    end: Ns,
) -> crate::Result<MetricsReport> {
    let sel = &st.pieces.sel;
    let t = if sel.narrows() { sel.total } else { end };
    let devices = &trace.objects.devices;
    let active: Vec<usize> = (0..devices.len()).filter(|&g| st.has_activity[g]).collect();
    let accs = &st.pieces.gpus;

    let times: Vec<GpuTimes> = active
        .iter()
        .map(|&g| GpuTimes {
            useful: accs[g].useful,
            active: accs[g].active(),
        })
        .collect();
    let efficiency = Efficiency::compute(&times, t);

    let gpus = gpu_reports(trace, st, t);

    let pick =
        |f: &dyn Fn(&GpuAcc) -> Ns| -> Vec<Ns> { active.iter().map(|&g| f(&accs[g])).collect() };
    let load_balance = LoadBalance {
        useful: avg_max(&pick(&|a| a.useful)),
        communication: avg_max(&pick(&|a| a.comm)),
        idle: avg_max(&pick(&|a| t.saturating_sub(a.active()))),
    };

    let mut exclusive = [0; NCAT];
    let mut overlap = [0; OVERLAP_BUCKETS];
    for &g in &active {
        for (x, y) in exclusive.iter_mut().zip(&accs[g].exclusive) {
            *x += y;
        }
        for (x, y) in overlap.iter_mut().zip(&accs[g].overlap) {
            *x += y;
        }
    }
    let (kernels, histograms) = kernels_report(opts, names, st, &active);

    // The bounds are TALP's window unless a time window was asked for.
    let mpi = sel.bounds.filter(|_| opts.time_window.is_none());
    let host = st.host.report(&trace.objects, t);
    let ranks = st.host.ranks();
    let iterations = super::iterations::build(&super::iterations::report::Inputs {
        source: &opts.iterations,
        ranges: &st.iterations.ranges,
        markers: &st.iterations.markers,
        objects: &trace.objects,
        names,
        window: sel.bounds.unwrap_or((0, end)),
        process_gpus: &st.iterations.process_gpus,
        active: &st.has_activity,
        ranks: &ranks,
    })?;
    let rank_rows = super::ranks::rows(
        &trace.objects,
        &st.iterations.process_gpus,
        accs,
        &st.has_activity,
        t,
        host.as_ref(),
        &iterations,
    );
    Ok(MetricsReport {
        schema_version: SCHEMA_VERSION,
        generator: format!("prvsight {}", env!("CARGO_PKG_VERSION")),
        inputs: trace.sources.iter().map(|s| s.label.clone()).collect(),
        // The sink does not see the conversion's summary: its caller fills them in.
        warnings: Vec::new(),
        options: opts.clone(),
        trace_end_ns: end,
        window: WindowReport {
            nvtx_range: sel.spec.clone(),
            instances: sel.instances,
            first_start_ns: sel.first_start,
            last_end_ns: sel.spec.as_ref().map(|_| sel.last_end),
            elapsed_ns: t,
            mpi_start_ns: mpi.map(|b| b.0),
            mpi_end_ns: mpi.map(|b| b.1),
        },
        definitions: definitions(opts, mpi),
        efficiency,
        gpus,
        load_balance,
        breakdown: breakdown(&exclusive, t * active.len() as Ns),
        overlap: overlap_profile(&overlap),
        kernels,
        histograms,
        nvtx: NvtxReport {
            distinct: st.pieces.nvtx.distinct(),
            ranges: st.pieces.nvtx.rows(&active, &trace.domains, opts.top),
        },
        series: st.pieces.series.report(),
        host,
        transfers: st.transfers.rows(&trace.objects),
        iterations,
        ranks: rank_rows,
        gemm_activity: st.gemm_activity.rows(names),
    })
}

/// The per-GPU rows, over the measured time `t`.
fn gpu_reports(trace: &TraceInfo, st: &State, t: Ns) -> Vec<GpuReport> {
    let accs = &st.pieces.gpus;
    trace
        .objects
        .devices
        .iter()
        .enumerate()
        .map(|(g, d)| {
            let a = &accs[g];
            let idle = t.saturating_sub(a.active());
            GpuReport {
                index: g,
                label: d.label(),
                host: trace.objects.hosts[d.host].name.clone(),
                cuda_id: d.cuda_id,
                has_activity: st.has_activity[g],
                counts: st.counts[g].clone(),
                useful_ns: a.useful,
                communication_ns: a.comm,
                active_ns: a.active(),
                idle_ns: idle,
                useful_fraction: fraction(a.useful, t),
                communication_fraction: fraction(a.comm, t),
                idle_fraction: fraction(idle, t),
                breakdown: breakdown(&a.exclusive, t),
                overlap: overlap_profile(&a.overlap),
            }
        })
        .collect()
}

/// The top kernels overall and per GPU in N, and the histograms of the top ones.
fn kernels_report(
    opts: &MetricsOptions,
    names: &Names,
    st: &State,
    active: &[usize],
) -> (KernelsReport, Vec<KernelHistogram>) {
    let accs = &st.pieces.gpus;
    let busy_all: Ns = active.iter().map(|&g| accs[g].active()).sum();
    let top = st.kernels.overall_rows(busy_all, opts.top, names);
    let histograms = top
        .iter()
        .filter_map(|row| {
            let id = names.lookup(&row.name)?;
            let h = st.histograms.get(&id)?;
            Some(KernelHistogram {
                name: row.name.clone(),
                short_name: row.short_name.clone(),
                count: h.total(),
                bins: h.bins(),
                modes_ns: h
                    .modes()
                    .into_iter()
                    .map(|k| super::histogram::bin_range(k).0)
                    .collect(),
            })
        })
        .collect();
    let kernels = KernelsReport {
        distinct: st.kernels.distinct(),
        per_gpu: active
            .iter()
            .map(|&g| GpuKernels {
                gpu: g,
                distinct: st.kernels.distinct_on(g),
                top: st.kernels.gpu_rows(g, accs[g].active(), opts.top, names),
            })
            .collect(),
        top,
    };
    (kernels, histograms)
}
