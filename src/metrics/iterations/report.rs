//! The iterations found, each with its factors, and their spread: the `iterations` object of
//! the metrics report (docs/METRICS.md).

use serde::{Deserialize, Serialize};

use super::markers::{Markers, Track, REGULAR_CV};
use super::ranges::{Candidate, Ranges};
use super::{IterationSource, MAX_DURATION_CV, MIN_COVERAGE, MIN_PER_RANK, OUTLIER_FACTOR};
use crate::error::{Error, Result};
use crate::metrics::accum::GpuTotals;
use crate::metrics::efficiency::{Efficiency, GpuTimes};
use crate::metrics::host::{HostPop, HostRank};
use crate::model::{Names, Ns, ObjectModel};

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IterationsReport {
    /// `nvtx` (repeating NVTX ranges), `gpu` (a kernel recurring at a regular period) or
    /// `none`.
    pub detected_by: &'static str,
    /// The normalised NVTX range name, or the marker kernel's name.
    pub name: Option<String>,
    /// How they were found, or why there are none.
    pub note: String,
    pub items: Vec<Iteration>,
    pub summary: Option<IterationSummary>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Iteration {
    pub index: usize,
    /// Earliest start and latest end over the ranks (GPUs for `gpu`).
    pub start_ns: Ns,
    pub end_ns: Ns,
    pub duration_ns: Ns,
    /// Device factors with T = the longest rank's (GPU's) own iteration; null without GPUs.
    pub efficiency: Option<Efficiency>,
    /// Host (MPI) factors with the same T; null without MPI.
    pub host: Option<HostPop>,
    /// The GPU with the most useful time (else the rank with the most time outside MPI).
    pub slowest: Option<Slowest>,
    /// The rank whose first MPI call inside the iteration came last.
    pub last_to_arrive: Option<Arrival>,
    pub time: IterationTime,
    /// Longer than 1.5 × the median duration.
    pub outlier: bool,
    /// The first iteration, and an outlier.
    pub warmup: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Slowest {
    pub rank: Option<u32>,
    pub process: usize,
    pub gpu: Option<usize>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Arrival {
    pub rank: Option<u32>,
    pub process: usize,
    /// Start of that rank's first MPI call in the iteration.
    pub at_ns: Ns,
}

/// Where the iteration's time went, summed over GPUs (N·T in all) and ranks.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct IterationTime {
    pub useful_ns: Ns,
    pub communication_ns: Ns,
    pub idle_ns: Ns,
    pub mpi_ns: Ns,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub mean: f64,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// Coefficient of variation: standard deviation / mean (null for a zero mean).
    pub cv: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SlowestCount {
    pub rank: Option<u32>,
    pub process: usize,
    pub gpu: Option<usize>,
    /// Iterations in which it was the slowest.
    pub iterations: usize,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IterationSummary {
    pub count: usize,
    pub duration_ns: Spread,
    pub parallel_efficiency: Option<Spread>,
    pub load_balance: Option<Spread>,
    pub communication_efficiency: Option<Spread>,
    pub orchestration_efficiency: Option<Spread>,
    pub host_parallel_efficiency: Option<Spread>,
    pub host_load_balance: Option<Spread>,
    pub host_communication_efficiency: Option<Spread>,
    /// Indices of the outliers; the warm-up iteration, if the first one is one.
    pub outliers: Vec<usize>,
    pub warmup: Option<usize>,
    /// Who was the slowest how often, most often first.
    pub slowest: Vec<SlowestCount>,
}

/// What the report is built from.
pub struct Inputs<'a> {
    pub source: &'a IterationSource,
    pub ranges: &'a Ranges,
    pub markers: &'a Markers,
    pub objects: &'a ObjectModel,
    pub names: &'a Names,
    /// The measured interval (TALP's window, else the trace).
    pub window: (Ns, Ns),
    /// GPU lanes of each process, in the order of its snapshots.
    pub process_gpus: &'a [Vec<usize>],
    /// GPUs with any activity.
    pub active: &'a [bool],
    /// Processes that are MPI ranks.
    pub ranks: &'a [usize],
}

/// One rank's (or GPU's) share of one iteration.
struct Part {
    process: usize,
    start: Ns,
    end: Ns,
    mpi: Ns,
    mpi_calls: u64,
    first_mpi: Option<Ns>,
    gpus: Vec<(usize, GpuTotals)>,
}

/// The iterations, or why there are none; an unknown `--iterations NAME` is an error.
pub fn build(i: &Inputs) -> Result<IterationsReport> {
    let none = |note: String| IterationsReport {
        detected_by: "none",
        name: None,
        note,
        items: Vec::new(),
        summary: None,
    };
    let (detected_by, name, note, parts) = match i.source {
        IterationSource::Off => return Ok(none("not looked for (--iterations none)".into())),
        IterationSource::Range(want) => {
            let c = named(i.ranges, want)?;
            let note = format!("NVTX range '{}' (--iterations)", c.name);
            ("nvtx", c.name.clone(), note, range_parts(c, i.process_gpus))
        }
        IterationSource::Auto => match auto_range(i) {
            Some(c) => {
                let note = format!(
                    "NVTX range '{}' repeats {} times per rank at nesting level {} and covers most of the measured time",
                    c.name,
                    c.processes.values().map(|p| p.instances.len()).min().unwrap_or(0),
                    c.depth
                );
                ("nvtx", c.name.clone(), note, range_parts(c, i.process_gpus))
            }
            None => match marker(i) {
                Some(Marker {
                    name,
                    short,
                    tracks,
                }) => {
                    let period = tracks.iter().map(|(_, t)| t.mean_gap()).sum::<f64>() / tracks.len() as f64;
                    let note = format!(
                        "no NVTX range repeats over the run; kernel {short} recurs every {:.3} ms on every GPU that runs it",
                        period / 1e6
                    );
                    ("gpu", name, note, marker_parts(&tracks))
                }
                None => {
                    return Ok(none(
                        "no NVTX range repeats over most of the run, and no kernel recurs at a regular period".into(),
                    ))
                }
            },
        },
    };
    if parts.is_empty() {
        return Ok(none(format!("{note}, but it has no complete instance")));
    }
    let mut items: Vec<Iteration> = parts
        .iter()
        .enumerate()
        .map(|(k, p)| iteration(k, p, i))
        .collect();
    let summary = summarise(&mut items);
    Ok(IterationsReport {
        detected_by,
        name: Some(name),
        note,
        items,
        summary: Some(summary),
    })
}

/// The candidate `--iterations NAME` names.
fn named<'a>(ranges: &'a Ranges, want: &str) -> Result<&'a Candidate> {
    let norm = super::normalise(want);
    ranges
        .candidates
        .iter()
        .filter(|c| !c.dropped && (c.name == norm || c.example == want))
        .max_by_key(|c| c.processes.values().map(|p| p.instances.len()).sum::<usize>())
        .ok_or_else(|| {
            let mut known: Vec<&str> = ranges
                .candidates
                .iter()
                .filter(|c| !c.dropped && c.processes.values().any(|p| p.instances.len() >= MIN_PER_RANK))
                .map(|c| c.name.as_str())
                .collect();
            known.truncate(15);
            Error::Usage(if known.is_empty() {
                format!("--iterations: NVTX range '{want}' is not in the trace, which has no repeating NVTX ranges near the top of a thread")
            } else {
                format!(
                    "--iterations: NVTX range '{want}' is not in the trace; ranges that repeat: {}",
                    known.join(", ")
                )
            })
        })
}

/// The outermost NVTX candidate that repeats on every rank and covers most of the window.
fn auto_range<'a>(i: &Inputs<'a>) -> Option<&'a Candidate> {
    let (w0, w1) = i.window;
    let span = w1.saturating_sub(w0).max(1) as f64;
    let coverage = |c: &Candidate| {
        c.processes
            .values()
            .map(|p| {
                let covered: Ns = (p.instances.iter())
                    .map(|x| x.end.min(w1).saturating_sub(x.start.max(w0)))
                    .sum();
                covered as f64 / span
            })
            .fold(f64::INFINITY, f64::min)
    };
    // Iterations of one loop take about as long as each other, the first (warm-up) aside.
    let regular = |c: &Candidate| {
        c.processes.values().all(|p| {
            let d: Vec<f64> = (p.instances.iter().skip(1))
                .map(|x| (x.end - x.start) as f64)
                .collect();
            spread(&d)
                .and_then(|s| s.cv)
                .is_some_and(|cv| cv <= MAX_DURATION_CV)
        })
    };
    i.ranges
        .candidates
        .iter()
        .filter(|c| {
            !c.dropped
                && !c.processes.is_empty()
                && c.processes
                    .values()
                    .all(|p| p.instances.len() >= MIN_PER_RANK)
                && coverage(c) >= MIN_COVERAGE
                && regular(c)
        })
        .min_by(|a, b| {
            a.depth
                .cmp(&b.depth)
                .then(coverage(b).total_cmp(&coverage(a)))
        })
}

/// A regular kernel on every GPU that runs it: the one with the longest period.
/// The kernel chosen as the iterations' marker: its name, function name, and its track on
/// each GPU (by GPU index).
struct Marker<'a> {
    name: String,
    short: String,
    tracks: Vec<(usize, &'a Track)>,
}

fn marker<'a>(i: &Inputs<'a>) -> Option<Marker<'a>> {
    let (w0, w1) = i.window;
    let span = w1.saturating_sub(w0).max(1) as f64;
    let mut by_name: std::collections::BTreeMap<u32, Vec<(usize, &Track)>> = Default::default();
    let mut ruled_out = std::collections::BTreeSet::new();
    for (&(name, gpu), t) in &i.markers.tracks {
        let regular = !t.dropped
            && t.starts.len() > MIN_PER_RANK
            && t.cv().is_some_and(|cv| cv <= REGULAR_CV)
            && (t.starts.last()?.at - t.starts[0].at) as f64 / span >= MIN_COVERAGE;
        if regular {
            by_name.entry(name.0).or_default().push((gpu, t));
        } else {
            ruled_out.insert(name.0);
        }
    }
    let best = by_name
        .into_iter()
        .filter(|(n, _)| !ruled_out.contains(n))
        .map(|(n, mut ts)| {
            ts.sort_by_key(|(g, _)| *g);
            let period = ts.iter().map(|(_, t)| t.mean_gap()).sum::<f64>() / ts.len() as f64;
            let cv = ts.iter().filter_map(|(_, t)| t.cv()).fold(0.0, f64::max);
            let first = ts.iter().map(|(_, t)| t.starts[0].at).min().unwrap_or(0);
            (n, ts, period, cv, first)
        })
        .max_by(|a, b| {
            // Longest period (1 % apart counts as equal), then most regular, then earliest.
            let same = (a.2 - b.2).abs() <= 0.01 * a.2.max(b.2);
            (if same {
                std::cmp::Ordering::Equal
            } else {
                a.2.total_cmp(&b.2)
            })
            .then(b.3.total_cmp(&a.3))
            .then(b.4.cmp(&a.4))
        })?;
    let name = i.names.get(crate::model::NameId(best.0)).to_owned();
    let short = i.names.get(best.1[0].1.short).to_owned();
    Some(Marker {
        name,
        short,
        tracks: best.1,
    })
}

/// Iteration k of an NVTX candidate: the k-th instance of every process, as far as all have one.
fn range_parts(c: &Candidate, process_gpus: &[Vec<usize>]) -> Vec<Vec<Part>> {
    let k = c
        .processes
        .values()
        .map(|p| p.instances.iter().take_while(|x| x.done).count())
        .min()
        .unwrap_or(0);
    (0..k)
        .map(|k| {
            c.processes
                .iter()
                .map(|(&process, on)| {
                    let x = &on.instances[k];
                    Part {
                        process,
                        start: x.start,
                        end: x.end,
                        mpi: x.inside.mpi,
                        mpi_calls: x.mpi_calls,
                        first_mpi: x.first_mpi,
                        gpus: process_gpus[process]
                            .iter()
                            .copied()
                            .zip(x.inside.gpus.iter().copied())
                            .collect(),
                    }
                })
                .collect()
        })
        .collect()
}

/// Iteration k of a marker kernel: from its k-th start to the next on every GPU.
fn marker_parts(tracks: &[(usize, &Track)]) -> Vec<Vec<Part>> {
    let k = tracks
        .iter()
        .map(|(_, t)| t.starts.len() - 1)
        .min()
        .unwrap_or(0);
    (0..k)
        .map(|k| {
            tracks
                .iter()
                .map(|&(gpu, t)| {
                    let (a, b) = (&t.starts[k], &t.starts[k + 1]);
                    let d = b.totals.since(&a.totals);
                    Part {
                        process: a.process,
                        start: a.at,
                        end: b.at,
                        mpi: if a.process == b.process { d.mpi } else { 0 },
                        mpi_calls: 0,
                        first_mpi: None,
                        gpus: vec![(gpu, d.gpus.first().copied().unwrap_or_default())],
                    }
                })
                .collect()
        })
        .collect()
}

fn iteration(index: usize, parts: &[Part], i: &Inputs) -> Iteration {
    let start = parts.iter().map(|p| p.start).min().unwrap_or(0);
    let end = parts.iter().map(|p| p.end).max().unwrap_or(start);
    let elapsed = parts.iter().map(|p| p.end - p.start).max().unwrap_or(0);
    let rank_of = |p: usize| i.objects.processes[p].rank;
    // Each active GPU once, from the first part that measured it.
    let mut gpus: Vec<(usize, usize, GpuTotals)> = Vec::new();
    for p in parts {
        for &(g, t) in &p.gpus {
            if i.active.get(g).copied().unwrap_or(false) && !gpus.iter().any(|x| x.0 == g) {
                gpus.push((g, p.process, t));
            }
        }
    }
    let times: Vec<GpuTimes> = gpus
        .iter()
        .map(|(_, _, t)| GpuTimes {
            useful: t.useful,
            active: t.useful + t.comm,
        })
        .collect();
    let efficiency = (!gpus.is_empty()).then(|| Efficiency::compute(&times, elapsed));
    let host_ranks: Vec<HostRank> = parts
        .iter()
        .filter(|p| i.ranks.contains(&p.process))
        .map(|p| {
            let proc_ = &i.objects.processes[p.process];
            HostRank {
                process: p.process,
                rank: proc_.rank,
                pid: proc_.pid,
                host: i.objects.hosts[proc_.host].name.clone(),
                mpi_calls: p.mpi_calls,
                other_thread_calls: 0,
                useful_ns: (p.end - p.start).saturating_sub(p.mpi),
                mpi_ns: p.mpi,
                device_wait_ns: 0,
            }
        })
        .collect();
    let host = HostPop::of_ranks(host_ranks, elapsed, false);
    let slowest = match gpus.iter().max_by_key(|(_, _, t)| t.useful) {
        Some(&(g, process, _)) => Some(Slowest {
            rank: rank_of(process),
            process,
            gpu: Some(g),
        }),
        None => host.as_ref().and_then(|h| {
            let r = h.ranks.iter().max_by_key(|r| r.useful_ns)?;
            Some(Slowest {
                rank: r.rank,
                process: r.process,
                gpu: None,
            })
        }),
    };
    let last_to_arrive = parts
        .iter()
        .filter_map(|p| Some((p.first_mpi?, p.process)))
        .max()
        .map(|(at_ns, process)| Arrival {
            rank: rank_of(process),
            process,
            at_ns,
        });
    let useful: Ns = times.iter().map(|t| t.useful).sum();
    let active: Ns = times.iter().map(|t| t.active).sum();
    Iteration {
        index,
        start_ns: start,
        end_ns: end,
        duration_ns: end - start,
        efficiency,
        time: IterationTime {
            useful_ns: useful,
            communication_ns: active - useful,
            idle_ns: (elapsed * times.len() as Ns).saturating_sub(active),
            mpi_ns: host
                .as_ref()
                .map_or(0, |h| h.ranks.iter().map(|r| r.mpi_ns).sum()),
        },
        host,
        slowest,
        last_to_arrive,
        outlier: false,
        warmup: false,
    }
}

/// Mean, median, extremes and coefficient of variation of `v` (not empty).
pub fn spread(v: &[f64]) -> Option<Spread> {
    if v.is_empty() {
        return None;
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = if v.len() > 1 {
        v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let median = if s.len() % 2 == 1 {
        s[s.len() / 2]
    } else {
        (s[s.len() / 2 - 1] + s[s.len() / 2]) / 2.0
    };
    Some(Spread {
        mean,
        median,
        min: s[0],
        max: s[s.len() - 1],
        cv: (mean != 0.0).then(|| var.sqrt() / mean),
    })
}

/// Marks outliers and the warm-up, and summarises.
fn summarise(items: &mut [Iteration]) -> IterationSummary {
    let durations: Vec<f64> = items.iter().map(|x| x.duration_ns as f64).collect();
    let duration = spread(&durations).expect("at least one iteration");
    let mut outliers = Vec::new();
    for x in items.iter_mut() {
        x.outlier = x.duration_ns as f64 > OUTLIER_FACTOR * duration.median;
        x.warmup = x.index == 0 && x.outlier;
        if x.outlier {
            outliers.push(x.index);
        }
    }
    let of = |f: &dyn Fn(&Iteration) -> Option<f64>| {
        spread(&items.iter().filter_map(f).collect::<Vec<_>>())
    };
    let mut slowest: Vec<SlowestCount> = Vec::new();
    for s in items.iter().filter_map(|x| x.slowest.as_ref()) {
        match slowest
            .iter_mut()
            .find(|c| c.process == s.process && c.gpu == s.gpu)
        {
            Some(c) => c.iterations += 1,
            None => slowest.push(SlowestCount {
                rank: s.rank,
                process: s.process,
                gpu: s.gpu,
                iterations: 1,
            }),
        }
    }
    slowest.sort_by(|a, b| {
        b.iterations
            .cmp(&a.iterations)
            .then(a.process.cmp(&b.process))
    });
    IterationSummary {
        count: items.len(),
        duration_ns: duration,
        parallel_efficiency: of(&|x| x.efficiency.as_ref()?.parallel_efficiency),
        load_balance: of(&|x| x.efficiency.as_ref()?.load_balance),
        communication_efficiency: of(&|x| x.efficiency.as_ref()?.communication_efficiency),
        orchestration_efficiency: of(&|x| x.efficiency.as_ref()?.orchestration_efficiency),
        host_parallel_efficiency: of(&|x| x.host.as_ref()?.parallel_efficiency),
        host_load_balance: of(&|x| x.host.as_ref()?.load_balance),
        host_communication_efficiency: of(&|x| x.host.as_ref()?.communication_efficiency),
        warmup: items.first().filter(|x| x.warmup).map(|x| x.index),
        outliers,
        slowest,
    }
}
