//! Every real export converts, and the trace holds exactly what the export holds: record counts in
//! the .prv equal row counts computed here with SQL, object counts equal distinct resources.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use common::{convert, count_prv, data, shared_traces, sql_count};
use prvsight::Options;

fn all_real_exports() -> Vec<PathBuf> {
    let mut v = vec![data("testcuda_report1.sqlite")];
    if let Some(dir) = shared_traces() {
        let mut stack = vec![dir];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "sqlite") {
                    v.push(p);
                }
            }
        }
    }
    v.sort();
    v
}

fn table_exists(p: &Path, t: &str) -> bool {
    sql_count(
        p,
        &format!("SELECT count(*) FROM sqlite_master WHERE name = '{t}'"),
    ) > 0
}

/// Distinct host threads with activity and distinct GPU streams, by SQL.
fn expected_threads(p: &Path) -> (u64, u64, u64) {
    let mut tids: Vec<String> = Vec::new();
    if table_exists(p, "CUPTI_ACTIVITY_KIND_RUNTIME") {
        tids.push("SELECT globalTid AS g FROM CUPTI_ACTIVITY_KIND_RUNTIME".into());
    }
    for t in [
        "MPI_P2P_EVENTS",
        "MPI_COLLECTIVES_EVENTS",
        "MPI_START_WAIT_EVENTS",
        "MPI_OTHER_EVENTS",
    ] {
        if table_exists(p, t) {
            tids.push(format!("SELECT globalTid AS g FROM {t}"));
        }
    }
    if table_exists(p, "OSRT_API") {
        tids.push("SELECT globalTid AS g FROM OSRT_API WHERE eventClass NOT IN (31, 32)".into());
    }
    if table_exists(p, "SCHED_EVENTS") {
        tids.push("SELECT globalTid AS g FROM SCHED_EVENTS".into());
    }
    if table_exists(p, "NVTX_EVENTS") {
        tids.push(
            "SELECT globalTid AS g FROM NVTX_EVENTS WHERE eventType IN (59,70,60,71,34)".into(),
        );
        tids.push("SELECT endGlobalTid AS g FROM NVTX_EVENTS WHERE eventType IN (60,71) AND endGlobalTid IS NOT NULL".into());
    }
    let mut streams: Vec<String> = Vec::new();
    for t in [
        "CUPTI_ACTIVITY_KIND_KERNEL",
        "CUPTI_ACTIVITY_KIND_MEMCPY",
        "CUPTI_ACTIVITY_KIND_MEMSET",
    ] {
        if table_exists(p, t) {
            streams.push(format!(
                "SELECT globalPid AS gp, deviceId, contextId, streamId FROM {t}"
            ));
        }
    }
    let host = if tids.is_empty() {
        0
    } else {
        sql_count(
            p,
            &format!(
                "SELECT count(DISTINCT g) FROM ({})",
                tids.join(" UNION ALL ")
            ),
        )
    };
    let gpu = if streams.is_empty() {
        0
    } else {
        sql_count(
            p,
            &format!(
                "SELECT count(*) FROM (SELECT DISTINCT * FROM ({}))",
                streams.join(" UNION ALL ")
            ),
        )
    };
    let mut procs = tids
        .iter()
        .map(|q| format!("SELECT (g >> 24) AS p FROM ({q})"))
        .collect::<Vec<_>>();
    procs.extend(
        streams
            .iter()
            .map(|q| format!("SELECT (gp >> 24) FROM ({q})")),
    );
    let nproc = sql_count(
        p,
        &format!(
            "SELECT count(DISTINCT p) FROM ({})",
            procs.join(" UNION ALL ")
        ),
    );
    (host, gpu, nproc)
}

fn count_rows(p: &Path, table: &str, filter: &str) -> u64 {
    if table_exists(p, table) {
        sql_count(p, &format!("SELECT count(*) FROM {table} {filter}"))
    } else {
        0
    }
}

fn linked(p: &Path, gpu_table: &str) -> u64 {
    if !table_exists(p, gpu_table) || !table_exists(p, "CUPTI_ACTIVITY_KIND_RUNTIME") {
        return 0;
    }
    sql_count(
        p,
        &format!(
            "SELECT count(*) FROM {gpu_table} g JOIN CUPTI_ACTIVITY_KIND_RUNTIME r \
             ON r.correlationId = g.correlationId AND (r.globalTid >> 24) = (g.globalPid >> 24)"
        ),
    )
}

#[test]
fn every_real_export_converts_with_exact_counts() {
    let mut converted = 0;
    for path in all_real_exports() {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let result = convert(std::slice::from_ref(&path), &Options::default());
        let out = result.unwrap_or_else(|e| panic!("{name}: {e}"));
        converted += 1;
        let c = count_prv(&out.prv);
        assert!(c.sorted, "{name}: body not sorted by time");

        let kernels = count_rows(&path, "CUPTI_ACTIVITY_KIND_KERNEL", "");
        let memcpys = count_rows(&path, "CUPTI_ACTIVITY_KIND_MEMCPY", "");
        let memsets = count_rows(&path, "CUPTI_ACTIVITY_KIND_MEMSET", "");
        let api = count_rows(&path, "CUPTI_ACTIVITY_KIND_RUNTIME", "");
        let pushpop = count_rows(&path, "NVTX_EVENTS", "WHERE eventType IN (59, 70)");
        let startend = count_rows(&path, "NVTX_EVENTS", "WHERE eventType IN (60, 71)");
        let marks = count_rows(&path, "NVTX_EVENTS", "WHERE eventType = 34");

        let b = |t: u64| c.begins.get(&t).copied().unwrap_or(0);
        assert_eq!(b(63_000_006) + b(63_000_007), kernels, "{name}: kernels");
        let memcpy_in_prv: u64 = c
            .values
            .iter()
            .filter(|((t, v), _)| *t == 63_000_001 && (1..=15).contains(v))
            .map(|(_, n)| n)
            .sum();
        assert_eq!(memcpy_in_prv, memcpys, "{name}: memcpy");
        assert_eq!(
            c.values.get(&(63_000_001, 20)).copied().unwrap_or(0),
            memsets,
            "{name}: memset"
        );
        assert_eq!(b(63_000_000), api, "{name}: CUDA API calls");
        let pushpop_in_prv: u64 = c
            .begins
            .iter()
            .filter(|(t, _)| {
                **t == 9500 || (**t >= 9600 && **t < 30_000 && (**t - 9600) % 100 == 0)
            })
            .map(|(_, n)| n)
            .sum();
        assert_eq!(pushpop_in_prv, pushpop, "{name}: NVTX push/pop ranges");
        assert_eq!(b(9004), startend, "{name}: NVTX start/end ranges");
        assert_eq!(b(9005), marks, "{name}: NVTX marks");
        assert_eq!(
            c.tags.get(&55001).copied().unwrap_or(0),
            linked(&path, "CUPTI_ACTIVITY_KIND_KERNEL"),
            "{name}: launch links"
        );
        let mem_links = linked(&path, "CUPTI_ACTIVITY_KIND_MEMCPY")
            + linked(&path, "CUPTI_ACTIVITY_KIND_MEMSET");
        assert_eq!(
            c.tags.get(&55002).copied().unwrap_or(0),
            mem_links,
            "{name}: memory links"
        );

        // MPI calls (one per wait call, not per request) and OS runtime calls.
        let mpi_rows = count_rows(&path, "MPI_P2P_EVENTS", "")
            + count_rows(&path, "MPI_COLLECTIVES_EVENTS", "")
            + count_rows(&path, "MPI_OTHER_EVENTS", "")
            + count_rows(&path, "MPI_START_WAIT_EVENTS", "GROUP BY start, end, globalTid, textId").min(1)
                * sql_count(&path, "SELECT count(*) FROM (SELECT DISTINCT start, end, globalTid, textId FROM MPI_START_WAIT_EVENTS)");
        let mpi_in_prv: u64 = (50_000_001..=50_000_005).map(b).sum();
        if table_exists(&path, "MPI_P2P_EVENTS") {
            assert_eq!(mpi_in_prv, mpi_rows, "{name}: MPI calls");
        }
        // eventClass 31/32 rows are the OS runtime tracer's start/stop markers, not calls.
        // CPU scheduling: one region per switch-in (jacc_cg_trace has only this and CPU samples).
        assert_eq!(
            b(65_000_000),
            count_rows(&path, "SCHED_EVENTS", "WHERE isSchedIn = 1"),
            "{name}: CPU runs"
        );
        assert_eq!(
            b(64_000_000),
            count_rows(&path, "OSRT_API", "WHERE eventClass NOT IN (31, 32)"),
            "{name}: OS runtime calls"
        );

        // Header: tasks = processes with activity, threads = host threads with activity + streams.
        let (host, streams, procs) = expected_threads(&path);
        let o = &out.summary.trace.objects;
        assert_eq!(o.processes.len() as u64, procs, "{name}: processes");
        assert_eq!(o.threads.len() as u64, host + streams, "{name}: threads");
        let header_threads: u64 = c
            .header
            .rsplit_once(":1:")
            .unwrap()
            .1
            .split(['(', ',', ')'])
            .filter_map(|x| x.split_once(':'))
            .map(|(n, _)| n.parse::<u64>().unwrap())
            .sum();
        assert_eq!(
            header_threads,
            host + streams,
            "{name}: header thread count ({})",
            c.header
        );

        // .row: exactly one unique name per thread.
        let rows: Vec<&str> = out
            .row
            .split("LEVEL THREAD SIZE ")
            .nth(1)
            .unwrap()
            .lines()
            .collect();
        assert_eq!(rows[0].parse::<u64>().unwrap(), host + streams);
        let names: BTreeSet<&str> = rows[1..]
            .iter()
            .copied()
            .filter(|l| !l.is_empty())
            .collect();
        assert_eq!(
            names.len() as u64,
            host + streams,
            "{name}: thread names unique"
        );

        // .pcf declares every type and every labelled value used.
        let declared = declared_pcf(&out.pcf);
        for (t, v) in c.values.keys() {
            let (values, labelled) = declared
                .get(t)
                .unwrap_or_else(|| panic!("{name}: type {t} not in pcf"));
            if *labelled && *v != 0 {
                assert!(
                    values.contains(v),
                    "{name}: value {v} of type {t} not in pcf"
                );
            }
        }
    }
    assert!(converted >= 1);
}

/// type → (declared values, has a VALUES list).
fn declared_pcf(pcf: &str) -> std::collections::BTreeMap<u64, (BTreeSet<u64>, bool)> {
    let mut out = std::collections::BTreeMap::new();
    let mut group: Vec<u64> = Vec::new();
    let mut in_values = false;
    let mut in_types = false;
    for line in pcf.lines() {
        let l = line.trim();
        match l {
            "EVENT_TYPE" => {
                group.clear();
                in_types = true;
                in_values = false;
            }
            "VALUES" => {
                in_values = true;
                in_types = false;
                for t in &group {
                    out.entry(*t).or_insert((BTreeSet::new(), true)).1 = true;
                }
            }
            "" => {}
            _ if l.chars().all(|c| c.is_ascii_uppercase() || c == '_') => {
                in_types = false;
                in_values = false;
            }
            _ if in_types => {
                let t: u64 = l.split_whitespace().nth(1).unwrap().parse().unwrap();
                group.push(t);
                out.insert(t, (BTreeSet::new(), false));
            }
            _ if in_values => {
                let v: u64 = l.split_whitespace().next().unwrap().parse().unwrap();
                for t in &group {
                    out.get_mut(t).unwrap().0.insert(v);
                }
            }
            _ => {}
        }
    }
    out
}

#[test]
fn family_selection_keeps_only_chosen_families() {
    let path = data("testcuda_report1.sqlite");
    let opts = Options {
        families: Some(Options::parse_families("kernel").unwrap()),
        ..Options::default()
    };
    let out = convert(std::slice::from_ref(&path), &opts).unwrap();
    let c = count_prv(&out.prv);
    assert_eq!(c.begins.get(&63_000_006).copied(), Some(4));
    assert!(!c.begins.contains_key(&63_000_000), "no API calls");
    assert!(!c.values.keys().any(|(t, _)| *t == 63_000_001), "no memcpy");
    assert_eq!(c.comms, 0, "links need the API family");
    assert_eq!(
        out.summary.trace.objects.threads.len(),
        4,
        "only the 4 kernel streams"
    );
    assert_eq!(out.summary.counts.get("kernel"), Some(&4));
}

#[test]
fn mpi_ranks_merge_into_one_trace_ordered_by_rank() {
    let Some(dir) = shared_traces() else { return };
    let ranks: Vec<PathBuf> = (0..4)
        .map(|r| dir.join(format!("generated/mpi4/rank{r}.sqlite")))
        .collect();
    // Give them in reverse order: tasks must still be per file, in file order.
    let out = convert(&ranks, &Options::default()).unwrap();
    let o = &out.summary.trace.objects;
    assert_eq!(o.processes.len(), 4);
    for (i, p) in o.processes.iter().enumerate() {
        assert_eq!(p.source, i);
        assert_eq!(p.rank, Some(i as u32), "rank of task {i}");
    }
    let c = count_prv(&out.prv);
    assert!(c.sorted);
    // Every MPI_Allreduce of every rank is in the trace, under Extrae's collective type and value.
    let allreduce: u64 = ranks
        .iter()
        .map(|p| sql_count(p, "SELECT count(*) FROM MPI_COLLECTIVES_EVENTS m JOIN StringIds s ON s.id = m.textId WHERE s.value = 'MPI_Allreduce'"))
        .sum();
    assert_eq!(
        allreduce,
        4 * 20,
        "20 iterations per rank (generated/README.md)"
    );
    assert_eq!(c.values.get(&(50_000_002, 10)).copied(), Some(allreduce));
    let total_ranges: u64 = ranks
        .iter()
        .map(|p| count_rows(p, "NVTX_EVENTS", "WHERE eventType IN (59, 70)"))
        .sum();
    let pushpop: u64 = c
        .begins
        .iter()
        .filter(|(t, _)| **t >= 9600 && **t < 30_000 && (**t - 9600) % 100 == 0)
        .map(|(_, n)| n)
        .sum();
    assert_eq!(pushpop, total_ranges);
    // Session starts differ by up to 50 ms: offsets are the differences of utcEpochNs.
    let offsets: Vec<i64> = out
        .summary
        .trace
        .sources
        .iter()
        .map(|s| s.offset_ns)
        .collect();
    assert_eq!(offsets, vec![49_797_835, 0, 28_545_164, 4_951_278]);
}

#[test]
fn nsys_2022_mpi_ranges_become_mpi_calls() {
    let Some(dir) = shared_traces() else { return };
    let ranks: Vec<PathBuf> = (0..4)
        .map(|r| dir.join(format!("generated/mpi4_nsys2022.4/rank{r}.sqlite")))
        .collect();
    let out = convert(&ranks, &Options::default()).unwrap();
    let c = count_prv(&out.prv);
    // nsys 2022 has no MPI tables: MPI calls are push/pop ranges of the NVTX domain named "MPI".
    let expected: u64 = ranks
        .iter()
        .map(|p| {
            sql_count(
                p,
                "SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 59 AND domainId IN \
                 (SELECT domainId FROM NVTX_EVENTS WHERE eventType = 75 AND text = 'MPI')",
            )
        })
        .sum();
    assert!(expected > 0);
    let mpi: u64 = (50_000_001..=50_000_005)
        .map(|t| c.begins.get(&t).copied().unwrap_or(0))
        .sum();
    assert_eq!(mpi, expected);
    assert_eq!(out.summary.counts.get("mpi"), Some(&expected));
    let allreduce_2022: u64 = ranks
        .iter()
        .map(|p| sql_count(p, "SELECT count(*) FROM NVTX_EVENTS e JOIN StringIds s ON s.id = e.textId WHERE e.eventType = 59 AND s.value = 'MPI_Allreduce'"))
        .sum();
    assert_eq!(
        c.values.get(&(50_000_002, 10)).copied(),
        Some(allreduce_2022)
    );
    for (i, p) in out.summary.trace.objects.processes.iter().enumerate() {
        assert_eq!(
            p.rank,
            Some(i as u32),
            "rank from the 'MPI Rank n' thread name"
        );
    }
}
