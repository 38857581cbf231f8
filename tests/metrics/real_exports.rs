//! Every real export, with invariants, and independent SQL checks of the host model and the two-GPU
//! NCCL captures.

use super::*;
use crate::by_hand::assert_documented;
use crate::common::shared_traces;

/// Every export alone, plus each folder of rank files as one multi-input trace.
fn real_inputs(dir: &Path) -> Vec<Vec<PathBuf>> {
    let mut singles = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    let mut groups = Vec::new();
    while let Some(d) = stack.pop() {
        let mut ranks = Vec::new();
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "sqlite") {
                if p.file_name().unwrap().to_string_lossy().starts_with("rank") {
                    ranks.push(p.clone());
                }
                singles.push(vec![p]);
            }
        }
        if ranks.len() > 1 {
            ranks.sort();
            groups.push(ranks);
        }
    }
    singles.sort();
    groups.sort();
    singles.extend(groups);
    singles
}

fn open(paths: &[PathBuf]) -> Vec<Export> {
    paths
        .iter()
        .map(|p| Export::open_path(p).unwrap())
        .collect()
}

pub(crate) fn metrics_of(paths: &[PathBuf], o: &MetricsOptions) -> Result<MetricsReport, Error> {
    prvsight::metrics::compute(&open(paths), &Options::default(), o)
}

/// What must hold for any report.
fn check_invariants(r: &MetricsReport, what: &str) {
    let t = r.window.elapsed_ns;
    let active: Vec<_> = r.gpus.iter().filter(|g| g.has_activity).collect();
    for g in &r.gpus {
        assert_eq!(
            g.useful_ns + g.communication_ns + g.idle_ns,
            t,
            "{what} {}",
            g.label
        );
        assert_eq!(g.active_ns, g.useful_ns + g.communication_ns, "{what}");
        for f in [g.useful_fraction, g.communication_fraction, g.idle_fraction]
            .into_iter()
            .flatten()
        {
            assert!((0.0..=1.0).contains(&f), "{what} fraction {f}");
        }
        let groups: Ns = g.breakdown.groups.iter().map(|x| x.ns).sum();
        assert_eq!(groups, t, "{what} breakdown of {}", g.label);
        assert_eq!(group_ns(&g.breakdown, Group::Idle), g.idle_ns, "{what}");
        assert_eq!(g.overlap.buckets[0].ns, g.communication_ns, "{what}");
    }
    let groups: Ns = r.breakdown.groups.iter().map(|x| x.ns).sum();
    assert_eq!(groups, t * active.len() as Ns, "{what} total breakdown");
    let e = &r.efficiency;
    assert_eq!(e.gpus, active.len());
    assert_eq!(
        e.useful_sum_ns,
        active.iter().map(|g| g.useful_ns).sum::<Ns>()
    );
    for f in [
        e.parallel_efficiency,
        e.load_balance,
        e.communication_efficiency,
        e.orchestration_efficiency,
    ]
    .into_iter()
    .flatten()
    {
        assert!((0.0..=1.0).contains(&f), "{what} factor {f}");
    }
    assert_pe_is_product(r);
    let s = &r.series;
    assert_eq!(s.edges_ns.len(), s.bins + 1);
    assert_eq!(
        *s.edges_ns.last().unwrap(),
        if s.bins == 0 { 0 } else { r.trace_end_ns }
    );
    for g in &s.gpus {
        for i in 0..s.bins {
            for f in [g.useful[i], g.communication[i], g.idle[i]] {
                assert!((0.0..=1.0).contains(&f), "{what} series {f}");
            }
            let sum = g.useful[i] + g.communication[i] + g.idle[i];
            assert!(
                (sum - 1.0).abs() < 1e-12,
                "{what} series bin {i} sums to {sum}"
            );
        }
    }
    if r.window.nvtx_range.is_none() && r.window.mpi_start_ns.is_none() {
        assert_eq!(t, r.trace_end_ns);
        // The series and the totals are two roads to the same useful time (float sums only).
        for (g, sg) in r.gpus.iter().zip(&s.gpus) {
            let from_bins: f64 = (0..s.bins)
                .map(|i| sg.useful[i] * (s.edges_ns[i + 1] - s.edges_ns[i]) as f64)
                .sum();
            assert!(
                (from_bins - g.useful_ns as f64).abs() <= 1e-9 * t as f64,
                "{what}"
            );
        }
    }
    if let Some(h) = &r.host {
        assert_eq!(h.elapsed_ns, t, "{what}");
        for k in &h.ranks {
            assert_eq!(k.useful_ns + k.mpi_ns, t, "{what}");
        }
        for f in [
            h.parallel_efficiency,
            h.load_balance,
            h.communication_efficiency,
        ]
        .into_iter()
        .flatten()
        {
            assert!((0.0..=1.0).contains(&f), "{what} host factor {f}");
        }
        if let (Some(pe), Some(lb), Some(ce)) = (
            h.parallel_efficiency,
            h.load_balance,
            h.communication_efficiency,
        ) {
            assert!(rel_eq(pe, lb * ce), "{what} host PE");
        }
    }
    for n in &r.nvtx.ranges {
        assert!(n.count > 0 && n.mean_ns <= n.total_ns as f64, "{what}");
        assert_eq!(n.efficiency.gpus, active.len());
        if let (Some(pe), Some(p)) = (n.efficiency.parallel_efficiency, n.efficiency.product()) {
            assert!(rel_eq(pe, p), "{what} range {}", n.name);
        }
    }
}

#[test]
fn every_real_export_has_consistent_metrics() {
    let Some(dir) = shared_traces() else { return };
    let mut checked = 0;
    for paths in real_inputs(&dir) {
        let what = paths
            .iter()
            .map(|p| p.strip_prefix(&dir).unwrap().display().to_string())
            .collect::<Vec<_>>()
            .join("+");
        for nccl_as in [NcclAs::Communication, NcclAs::Useful] {
            let o = MetricsOptions {
                nccl_as,
                bins: 97,
                ..MetricsOptions::default()
            };
            match metrics_of(&paths, &o) {
                Ok(r) => {
                    check_invariants(&r, &what);
                    checked += 1;
                }
                Err(e) => {
                    // Only exports that do not convert at all may fail, with the converter's error.
                    let conv = prvsight::pipeline::run(
                        &open(&paths),
                        &Options::default(),
                        &mut [],
                        &mut |_| true,
                    );
                    assert!(
                        conv.is_err(),
                        "{what}: metrics failed ({e}) but conversion works"
                    );
                    eprintln!("SKIP {what}: does not convert: {e}");
                }
            }
        }
    }
    assert!(checked >= 16, "only {checked} reports checked");
}

#[test]
fn mpi_ranks_have_ranges_but_no_gpus() {
    let Some(dir) = shared_traces() else { return };
    let ranks: Vec<PathBuf> = (0..4)
        .map(|i| dir.join(format!("generated/mpi4/rank{i}.sqlite")))
        .collect();
    let o = MetricsOptions {
        window: Some(WindowSpec::parse("iteration").unwrap()),
        ..MetricsOptions::default()
    };
    let r = metrics_of(&ranks, &o).unwrap();
    check_invariants(&r, "mpi4 iteration");
    assert_eq!(r.efficiency.gpus, 0);
    assert_eq!(r.efficiency.parallel_efficiency, None);
    // 20 iterations per rank, each containing one `compute` push/pop range.
    assert_eq!(r.window.instances, 80);
    let compute = r.nvtx.ranges.iter().find(|n| n.name == "compute").unwrap();
    assert_eq!(compute.count, 80);
    let sql: u64 = ranks
        .iter()
        .map(|p| {
            sql_u64(
                p,
                "SELECT sum(e.end - e.start) FROM NVTX_EVENTS e LEFT JOIN StringIds s ON s.id = e.textId \
                 WHERE e.eventType = 59 AND coalesce(e.text, s.value) = 'compute'",
            )
        })
        .sum();
    assert_eq!(compute.total_ns, sql);
}

fn intervals(p: &Path, q: &str) -> Vec<(i64, i64)> {
    let c = rusqlite::Connection::open_with_flags(p, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .unwrap();
    let mut st = c.prepare(q).unwrap();
    let v = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(|x| x.unwrap())
        .collect();
    v
}

/// Length of the intersection of two merged unions.
fn overlap_length(a: &[(i64, i64)], b: &[(i64, i64)]) -> i64 {
    length(a) - minus_length(a, b)
}

#[test]
fn host_pop_model_of_mpi_ranks_matches_sql() {
    let Some(dir) = shared_traces() else { return };
    for (folder, nsys2022) in [
        ("generated/mpi4", false),
        ("generated/mpi4_nsys2022.4", true),
    ] {
        let files: Vec<PathBuf> = (0..4)
            .map(|i| dir.join(format!("{folder}/rank{i}.sqlite")))
            .collect();
        // MPI calls of each rank's main thread, straight from the export.
        let mpi_sql = if nsys2022 {
            // nsys 2022: MPI calls are push/pop ranges of the NVTX domain named MPI.
            "SELECT start, end FROM NVTX_EVENTS WHERE eventType = 59 AND domainId = \
             (SELECT domainId FROM NVTX_EVENTS WHERE eventType = 75 AND text = 'MPI')"
        } else {
            "SELECT start, end FROM (SELECT start, end, globalTid FROM MPI_P2P_EVENTS \
             UNION ALL SELECT start, end, globalTid FROM MPI_COLLECTIVES_EVENTS \
             UNION ALL SELECT start, end, globalTid FROM MPI_START_WAIT_EVENTS \
             UNION ALL SELECT start, end, globalTid FROM MPI_OTHER_EVENTS) \
             WHERE globalTid = (SELECT globalTid FROM MPI_RANKS)"
        };
        let iter_sql =
            "SELECT e.start, e.end FROM NVTX_EVENTS e LEFT JOIN StringIds s ON s.id = e.textId \
                        WHERE e.eventType = 59 AND coalesce(e.text, s.value) = 'iteration'";
        // The trace aligns the reports on their session start (wall clock).
        let starts: Vec<i64> = files
            .iter()
            .map(|f| sql_u64(f, "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME") as i64)
            .collect();
        let min_start = *starts.iter().min().unwrap();
        let shifted = |i: usize, q: &str| -> Vec<(i64, i64)> {
            let d = starts[i] - min_start;
            union(
                intervals(&files[i], q)
                    .into_iter()
                    .map(|(s, e)| (s + d, e + d))
                    .collect(),
            )
        };
        let mpi: Vec<Vec<(i64, i64)>> = (0..4).map(|i| shifted(i, mpi_sql)).collect();
        let windows = union((0..4).flat_map(|i| shifted(i, iter_sql)).collect());
        // TALP's window: the latest end of MPI_Init to the earliest start of MPI_Finalize.
        let call = |name: &str| {
            if nsys2022 {
                format!("SELECT e.start, e.end FROM NVTX_EVENTS e LEFT JOIN StringIds s ON s.id = e.textId \
                         WHERE e.eventType = 59 AND coalesce(e.text, s.value) = '{name}'")
            } else {
                format!("SELECT e.start, e.end FROM MPI_OTHER_EVENTS e JOIN StringIds s ON s.id = e.textId \
                         WHERE s.value = '{name}'")
            }
        };
        let talp_start = (0..4)
            .map(|i| shifted(i, &call("MPI_Init"))[0].1)
            .max()
            .unwrap();
        let talp_end = (0..4)
            .map(|i| shifted(i, &call("MPI_Finalize"))[0].0)
            .min()
            .unwrap();
        let talp = vec![(talp_start, talp_end)];

        let whole = metrics_of(&files, &MetricsOptions::default()).unwrap();
        // The same window, on the trace's time (0 = its first event) rather than the sessions'.
        let (a, b) = (
            whole.window.mpi_start_ns.unwrap(),
            whole.window.mpi_end_ns.unwrap(),
        );
        assert_eq!(a as i64 - talp_start, b as i64 - talp_end, "{folder}");
        assert_eq!(whole.window.elapsed_ns as i64, talp_end - talp_start);
        let trace = metrics_of(
            &files,
            &MetricsOptions {
                elapsed: prvsight::metrics::Elapsed::Trace,
                ..MetricsOptions::default()
            },
        )
        .unwrap();
        assert_eq!(trace.window.elapsed_ns, trace.trace_end_ns, "{folder}");
        let inside = metrics_of(
            &files,
            &MetricsOptions {
                window: Some(WindowSpec::parse("iteration").unwrap()),
                ..MetricsOptions::default()
            },
        )
        .unwrap();
        assert_eq!(
            inside.window.elapsed_ns as i64,
            length(&windows),
            "{folder}"
        );
        for (r, clip) in [
            (&whole, Some(&talp)),
            (&trace, None),
            (&inside, Some(&windows)),
        ] {
            let h = r.host.as_ref().expect("MPI ranks");
            let t = r.window.elapsed_ns;
            assert_eq!((h.ranks.len(), h.elapsed_ns), (4, t), "{folder}");
            let mut useful = Vec::new();
            for k in &h.ranks {
                let i = k.rank.expect("rank known") as usize;
                let want = match clip {
                    Some(w) => overlap_length(&mpi[i], w),
                    None => length(&mpi[i]),
                };
                assert_eq!(k.mpi_ns as i64, want, "{folder} rank {i} window={clip:?}");
                assert_eq!(k.useful_ns, t - k.mpi_ns);
                assert_eq!(k.other_thread_calls, 0);
                useful.push(k.useful_ns);
            }
            let (sum, max) = (useful.iter().sum::<u64>(), *useful.iter().max().unwrap());
            assert_eq!(
                h.load_balance,
                Some(sum as f64 / (4.0 * max as f64)),
                "{folder}"
            );
            assert_eq!(h.communication_efficiency, Some(max as f64 / t as f64));
            let pe = h.parallel_efficiency.unwrap();
            let product = h.load_balance.unwrap() * h.communication_efficiency.unwrap();
            assert!(
                rel_eq(pe, product),
                "{folder}: PE {pe} vs LB×CommE {product}"
            );
        }
        assert_documented(&inside);
        // rank 3 computes 1.5× longer (README): it waits least in MPI, so it holds max useful.
        let h = inside.host.as_ref().unwrap();
        let max_rank = h.ranks.iter().max_by_key(|k| k.useful_ns).unwrap();
        assert_eq!(max_rank.rank, Some(3), "{folder}");
    }
}

// --- the two-GPU NCCL captures, checked against SQL computed here ---

fn sql_u64(p: &Path, q: &str) -> u64 {
    let c = rusqlite::Connection::open_with_flags(p, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .unwrap();
    c.query_row(q, [], |r| r.get::<_, Option<i64>>(0))
        .unwrap()
        .unwrap_or(0) as u64
}

#[derive(Clone, Copy, PartialEq)]
enum Op {
    Compute,
    CommKernel,
    Memory,
}

/// (deviceId, start, end, kind) of every kernel, memcpy and memset of an export.
fn gpu_rows(p: &Path) -> Vec<(i64, i64, i64, Op)> {
    let c = rusqlite::Connection::open_with_flags(p, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .unwrap();
    let mut out = Vec::new();
    // The model's rule, restated: a communication kernel's short or demangled name (without a
    // leading "void ") starts with nccl, rccl or nvshmem.
    let comm = |n: &str| {
        let n = n.trim_start_matches("void ");
        ["nccl", "rccl", "nvshmem"].iter().any(|x| n.starts_with(x))
    };
    let mut st = c
        .prepare(
            "SELECT k.deviceId, k.start, k.end, s.value, d.value FROM CUPTI_ACTIVITY_KIND_KERNEL k \
             JOIN StringIds s ON s.id = k.shortName JOIN StringIds d ON d.id = k.demangledName",
        )
        .unwrap();
    let rows = st
        .query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, String>(4)?,
            ))
        })
        .unwrap();
    for row in rows {
        let (d, s, e, short, dem) = row.unwrap();
        let kind = if comm(&short) || comm(&dem) {
            Op::CommKernel
        } else {
            Op::Compute
        };
        out.push((d, s, e, kind));
    }
    for t in ["CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"] {
        let mut st = c
            .prepare(&format!("SELECT deviceId, start, end FROM {t}"))
            .unwrap();
        let rows = st
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, Op::Memory)))
            .unwrap();
        out.extend(rows.map(|r| r.unwrap()));
    }
    out
}

/// Sorted, merged union of intervals.
fn union(mut v: Vec<(i64, i64)>) -> Vec<(i64, i64)> {
    v.sort();
    let mut out: Vec<(i64, i64)> = Vec::new();
    for (s, e) in v {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

fn length(v: &[(i64, i64)]) -> i64 {
    v.iter().map(|(s, e)| e - s).sum()
}

/// Length of `a` minus `b` (both merged unions).
fn minus_length(a: &[(i64, i64)], b: &[(i64, i64)]) -> i64 {
    let overlap: i64 = a
        .iter()
        .map(|&(s, e)| {
            b.iter()
                .map(|&(bs, be)| (e.min(be) - s.max(bs)).max(0))
                .sum::<i64>()
        })
        .sum();
    length(a) - overlap
}

#[test]
fn two_gpu_nccl_captures_match_sql() {
    let Some(dir) = shared_traces() else { return };
    for (file, nccl_per_gpu) in [
        ("mfu_2gpu_before.sqlite", 33),
        ("mfu_2gpu_after.sqlite", 31),
    ] {
        let p = dir.join(file);
        let rows = gpu_rows(&p);
        for nccl_as in [NcclAs::Communication, NcclAs::Useful] {
            let o = MetricsOptions {
                nccl_as,
                ..MetricsOptions::default()
            };
            let r = metrics_of(std::slice::from_ref(&p), &o).unwrap();
            check_invariants(&r, file);
            assert_eq!(r.gpus.len(), 2, "{file}: one GPU per process");
            for g in &r.gpus {
                let dev = g.cuda_id as i64;
                let sql_nccl = sql_u64(
                    &p,
                    &format!(
                        "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName \
                         WHERE k.deviceId = {dev} AND s.value LIKE 'nccl%'"
                    ),
                );
                assert_eq!(g.counts.nccl_kernels, sql_nccl, "{file} GPU{dev}");
                assert_eq!(
                    g.counts.nccl_kernels, nccl_per_gpu,
                    "{file} GPU{dev} (SOURCES.md)"
                );
                let sql_kernels = sql_u64(
                    &p,
                    &format!(
                        "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE deviceId = {dev}"
                    ),
                );
                assert_eq!(g.counts.kernels, sql_kernels, "{file} GPU{dev}");

                let is_useful = |op: Op| match nccl_as {
                    NcclAs::Communication => op == Op::Compute,
                    NcclAs::Useful => op != Op::Memory,
                };
                let pick = |useful: bool| {
                    union(
                        rows.iter()
                            .filter(|r| r.0 == dev && is_useful(r.3) == useful)
                            .map(|r| (r.1, r.2))
                            .collect(),
                    )
                };
                let (useful, comm) = (pick(true), pick(false));
                assert_eq!(
                    g.useful_ns as i64,
                    length(&useful),
                    "{file} GPU{dev} useful ({nccl_as:?})"
                );
                assert_eq!(
                    g.communication_ns as i64,
                    minus_length(&comm, &useful),
                    "{file} GPU{dev} communication ({nccl_as:?})"
                );
            }
        }
    }
}

#[test]
fn nvtx_window_on_a_real_capture_matches_sql_union() {
    let Some(dir) = shared_traces() else { return };
    let p = dir.join("mfu_2gpu_before.sqlite");
    let o = MetricsOptions {
        window: Some(WindowSpec::parse("ncclSend").unwrap()),
        ..MetricsOptions::default()
    };
    let r = metrics_of(std::slice::from_ref(&p), &o).unwrap();
    check_invariants(&r, "mfu ncclSend window");
    let c = rusqlite::Connection::open_with_flags(&p, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .unwrap();
    let q = "SELECT e.start, e.end FROM NVTX_EVENTS e LEFT JOIN StringIds s ON s.id = e.textId \
             WHERE e.eventType IN (59, 60) AND coalesce(e.text, s.value) = 'ncclSend'";
    let mut st = c.prepare(q).unwrap();
    let v: Vec<(i64, Option<i64>)> = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(|x| x.unwrap())
        .collect();
    assert!(
        v.iter().all(|x| x.1.is_some()),
        "every ncclSend range is closed in the export"
    );
    let windows = union(v.iter().map(|&(s, e)| (s, e.unwrap())).collect());
    assert_eq!(r.window.instances, v.len() as u64);
    assert_eq!(r.window.elapsed_ns as i64, length(&windows));
}
