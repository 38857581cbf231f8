//! Families no public export holds, converted from the schema-faithful synthetic exports: CUDA
//! graphs (graph- and node-level), GPU metrics, NCCL collectives with payloads.

mod common;

use std::path::PathBuf;

use common::{convert, count_prv, sql_count};
use prvsight::Options;

/// Writes scenario `name` to a file of its own (tests run in parallel, some on the same scenario).
fn synth(name: &str) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let sc = prvsight::synth::build(name, 1).unwrap_or_else(|e| panic!("{name}: {e}"));
    let dir =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("families-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!(
        "{name}-{}.sqlite",
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    sc.export.write_path(&path).unwrap();
    path
}

#[test]
fn graph_replays_become_graph_executions_linked_to_their_launch() {
    let path = synth("graphs");
    let out = convert(std::slice::from_ref(&path), &Options::default()).unwrap();
    let c = count_prv(&out.prv);
    let replays = sql_count(
        &path,
        "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE",
    );
    assert!(replays > 0);
    assert_eq!(c.begins.get(&63_000_008).copied(), Some(replays));
    assert_eq!(
        c.begins.get(&63_000_101).copied().unwrap_or(0)
            + c.values
                .iter()
                .filter(|((t, v), _)| *t == 63_000_101 && *v == 0)
                .map(|(_, n)| n)
                .sum::<u64>(),
        2 * replays
    );
    let kernels = sql_count(&path, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL");
    assert_eq!(
        c.tags.get(&55001).copied(),
        Some(kernels + replays),
        "every kernel and every replay has its launch link"
    );
    assert!(out.pcf.contains("63000008    CUDA graph execution"));
}

#[test]
fn graph_node_kernels_carry_their_node_id() {
    let path = synth("graph_nodes");
    let out = convert(std::slice::from_ref(&path), &Options::default()).unwrap();
    let c = count_prv(&out.prv);
    let nodes = sql_count(
        &path,
        "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE graphNodeId IS NOT NULL",
    );
    assert!(nodes > 0);
    assert_eq!(c.begins.get(&63_000_102).copied(), Some(nodes));
    assert!(
        !c.begins.contains_key(&63_000_008),
        "node-level tracing has no graph-level rows"
    );
}

#[test]
fn gpu_metrics_are_one_event_type_per_metric_on_a_thread_per_gpu() {
    let path = synth("gpu_metrics");
    let out = convert(std::slice::from_ref(&path), &Options::default()).unwrap();
    let c = count_prv(&out.prv);
    let rows = sql_count(
        &path,
        "SELECT count(*) FROM GPU_METRICS WHERE timestamp >= 0",
    );
    let metric_events: u64 = c
        .values
        .iter()
        .filter(|((t, _), _)| (9400..9500).contains(t))
        .map(|(_, n)| n)
        .sum();
    assert_eq!(metric_events, rows);
    // Each metric type is labelled with its name from TARGET_INFO_GPU_METRICS.
    let conn = rusqlite::Connection::open(&path).unwrap();
    let mut st = conn
        .prepare("SELECT DISTINCT metricId, metricName FROM TARGET_INFO_GPU_METRICS")
        .unwrap();
    let names: Vec<(i64, String)> = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(!names.is_empty());
    for (id, name) in names {
        assert!(
            out.pcf.contains(&format!("{}    {name}", 9400 + id)),
            "metric {id} {name} labelled"
        );
    }
    let metrics_threads = out
        .row
        .lines()
        .filter(|l| l.contains(" metrics (pid "))
        .count();
    assert_eq!(metrics_threads, 2);
}

#[test]
fn nccl_collectives_are_typed_from_kernel_names_and_payloads() {
    let path = synth("ddp4");
    let out = convert(std::slice::from_ref(&path), &Options::default()).unwrap();
    let c = count_prv(&out.prv);
    let allreduce = sql_count(
        &path,
        "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName WHERE s.value LIKE 'ncclDevKernel_AllReduce%'",
    );
    assert!(allreduce > 0);
    // 63000020 = collective (1 = AllReduce), 63000024 = reduction op from the name (1 = Sum).
    assert_eq!(c.values.get(&(63_000_020, 1)).copied(), Some(allreduce));
    assert_eq!(c.values.get(&(63_000_024, 1)).copied(), Some(allreduce));
    // The NCCL NVTX ranges carry their message size, and so do the kernels they launched.
    let ranges_with_size = sql_count(
        &path,
        "SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 59 AND jsonText LIKE '%Message size%'",
    );
    assert!(ranges_with_size > 0);
    assert_eq!(
        c.begins.get(&9501).copied(),
        Some(ranges_with_size + allreduce)
    );
}

#[test]
fn nvtx_payloads_given_by_string_id_convert_like_inline_ones() {
    use prvsight::options::{ReadOrder, ReadPages};
    // nsys writes a payload inline (jsonText) or as a string id (jsonTextId): the same
    // collectives, their payloads moved to the strings table, give the same trace, by the sort-keys
    // reader (pages read directly or through SQLite) and by SQL's sort.
    let inline = synth("ddp4");
    let by_id = inline.with_extension("by-id.sqlite");
    std::fs::copy(&inline, &by_id).unwrap();
    let conn = rusqlite::Connection::open(&by_id).unwrap();
    let moved = conn
        .execute_batch(
            "INSERT INTO StringIds (id, value) \
               SELECT 1000000 + rowid, jsonText FROM NVTX_EVENTS WHERE jsonText IS NOT NULL;
             UPDATE NVTX_EVENTS SET jsonTextId = 1000000 + rowid, jsonText = NULL \
               WHERE jsonText IS NOT NULL;",
        )
        .map(|()| conn.changes());
    assert!(moved.unwrap() > 0, "the scenario has payloads to move");
    drop(conn);
    let expected = convert(std::slice::from_ref(&inline), &Options::default()).unwrap();
    assert!(
        expected.prv.contains(":9501:"),
        "message sizes from the payloads"
    );
    for opts in [
        Options::default(),
        Options {
            read_pages: ReadPages::Sqlite,
            ..Options::default()
        },
        Options {
            read_order: ReadOrder::Sql,
            ..Options::default()
        },
    ] {
        let got = convert(std::slice::from_ref(&by_id), &opts).unwrap();
        assert!(got.prv == expected.prv, "{opts:?}: the trace differs");
        assert_eq!(got.pcf, expected.pcf);
        // Where the order is the readers' to choose, none fell back to SQL's sort.
        assert_eq!(got.summary.sorted_by_sql, Vec::<String>::new());
    }
}

#[test]
fn gemm_kernels_get_the_tensor_and_sm_activity_sampled_while_they_ran() {
    use prvsight::metrics::{MetricsOptions, MetricsSink};
    let path = synth("gpu_metrics");
    let exports = vec![prvsight::nsys::Export::open_path(&path).unwrap()];
    let mut sink = MetricsSink::new(MetricsOptions::default()).unwrap();
    prvsight::pipeline::run(&exports, &Options::default(), &mut [&mut sink], &mut |_| {
        true
    })
    .unwrap();
    let report = sink.into_report().unwrap();
    assert!(!report.gemm_activity.is_empty());
    // Independently: mean of the samples taken while each GEMM kernel ran on the same GPU.
    let conn = rusqlite::Connection::open(&path).unwrap();
    let expected = |kernel: &str, metric: &str| -> (f64, u64) {
        conn.query_row(
            "SELECT avg(g.value), count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName \
             JOIN GPU_METRICS g ON (g.typeId & 255) = k.deviceId AND g.timestamp >= k.start AND g.timestamp < k.end \
             JOIN (SELECT DISTINCT metricId, metricName FROM TARGET_INFO_GPU_METRICS) m ON m.metricId = g.metricId \
             WHERE s.value = ?1 AND m.metricName LIKE ?2",
            [kernel, &format!("{metric}%")],
            |r| Ok((r.get::<_, f64>(0)?, r.get::<_, i64>(1)? as u64)),
        )
        .unwrap()
    };
    for row in &report.gemm_activity {
        let (tensor, nt) = expected(&row.kernel, "Tensor Active");
        let (sm, ns) = expected(&row.kernel, "SM Active");
        assert_eq!(row.samples, nt + ns, "{}", row.kernel);
        assert!(
            (row.tensor_active_pct.unwrap() - tensor).abs() < 1e-9,
            "{}",
            row.kernel
        );
        assert!(
            (row.sm_active_pct.unwrap() - sm).abs() < 1e-9,
            "{}",
            row.kernel
        );
    }
}
