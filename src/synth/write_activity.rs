//! The event tables: GPU activity, CUDA API calls, NVTX, graphs and GPU metrics. Rows go in by
//! start time (ties keep insertion order), as nsys flushes them roughly in time order; columns we
//! do not model get the values nsys 2026.2 wrote for ordinary launches in the real export.

use rusqlite::types::Value;
use rusqlite::Connection;

use super::builder::ExportBuilder;
use super::rows::GpuPlace;
use super::write::{insert, int, opt, opt_text, smem_carveout, text, u, LOCAL_MEMORY_TOTAL};
use crate::error::Result;

fn sorted<T: Clone>(v: &[T], key: impl Fn(&T) -> i64) -> Vec<T> {
    let mut v = v.to_vec();
    v.sort_by_key(|x| key(x));
    v
}

const PLACE_COLS: [&str; 8] = [
    "start",
    "end",
    "deviceId",
    "contextId",
    "greenContextId",
    "streamId",
    "correlationId",
    "globalPid",
];

fn place(p: &GpuPlace) -> Vec<Value> {
    vec![
        int(p.start),
        int(p.end),
        u(p.device),
        u(p.context),
        int(0),
        u(p.stream),
        p.correlation.map_or(Value::Null, |c| int(c as i64)),
        int(p.global_pid),
    ]
}

fn cols(extra: &[&'static str]) -> Vec<&'static str> {
    PLACE_COLS.iter().chain(extra).copied().collect()
}

/// The activity tables. Long: one table's rows after another, in the schema's column order.
pub fn fill(c: &Connection, b: &ExportBuilder) -> Result<()> {
    let r = &b.rows;
    let kernel_cols = cols(&[
        "demangledName",
        "shortName",
        "mangledName",
        "launchType",
        "cacheConfig",
        "registersPerThread",
        "gridX",
        "gridY",
        "gridZ",
        "blockX",
        "blockY",
        "blockZ",
        "staticSharedMemory",
        "dynamicSharedMemory",
        "localMemoryPerThread",
        "localMemoryTotal",
        "gridId",
        "sharedMemoryExecuted",
        "graphNodeId",
        "sharedMemoryLimitConfig",
        "graphId",
        "clusterX",
        "clusterY",
        "clusterZ",
        "clusterSchedulingPolicy",
        "maxPotentialClusterSize",
        "maxActiveClusters",
        "tensorSizeMinusOneElements",
    ]);
    insert(
        c,
        b,
        "CUPTI_ACTIVITY_KIND_KERNEL",
        &kernel_cols,
        sorted(&r.kernels, |k| k.at.start).iter().map(|k| {
            let smem = k.static_smem + k.dynamic_smem;
            let mut v = place(&k.at);
            v.extend([
                int(k.demangled),
                int(k.short),
                opt(k.mangled),
                int(1), // launchType: Regular
                int(1), // cacheConfig
                u(k.registers),
            ]);
            v.extend(k.grid.iter().chain(&k.block).map(|&x| u(x)));
            v.extend([
                u(k.static_smem),
                u(k.dynamic_smem),
                int(0),
                int(LOCAL_MEMORY_TOTAL),
                int(k.grid_id),
                k.smem_executed.map_or_else(|| int(smem_carveout(smem)), u),
                opt(k.graph_node_id),
                // Opt-in beyond the 48 KiB default shared memory limit.
                int(i64::from(smem > 48 * 1024)),
                opt(k.graph_id),
            ]);
            v.extend(k.cluster.dims.iter().map(|&x| u(x)));
            v.extend([
                int(1), // clusterSchedulingPolicy: 1 on every real row
                u(k.cluster.max_potential),
                u(k.cluster.max_active),
                text("[]"),
            ]);
            v
        }),
    )?;
    insert(
        c,
        b,
        "CUPTI_ACTIVITY_KIND_MEMCPY",
        &cols(&["bytes", "copyKind", "srcKind", "dstKind", "copyCount"]),
        sorted(&r.memcpys, |m| m.at.start).iter().map(|m| {
            let mut v = place(&m.at);
            v.extend([
                u(m.bytes),
                u(m.copy_kind),
                u(m.src_kind),
                u(m.dst_kind),
                int(1),
            ]);
            v
        }),
    )?;
    insert(
        c,
        b,
        "CUPTI_ACTIVITY_KIND_MEMSET",
        &cols(&["value", "bytes", "memKind"]),
        sorted(&r.memsets, |m| m.at.start).iter().map(|m| {
            let mut v = place(&m.at);
            v.extend([u(m.value), u(m.bytes), u(m.mem_kind)]);
            v
        }),
    )?;
    insert(
        c,
        b,
        "CUPTI_ACTIVITY_KIND_GRAPH_TRACE",
        &cols(&["graphId", "graphExecId"]),
        sorted(&r.graph_traces, |g| g.at.start).iter().map(|g| {
            let mut v = place(&g.at);
            v.extend([int(g.graph_id), int(g.graph_exec_id)]);
            v
        }),
    )?;
    insert(
        c,
        b,
        "CUPTI_ACTIVITY_KIND_RUNTIME",
        &[
            "start",
            "end",
            "eventClass",
            "globalTid",
            "correlationId",
            "nameId",
            "returnValue",
        ],
        sorted(&r.runtime, |x| x.start).iter().map(|x| {
            vec![
                int(x.start),
                int(x.end),
                int(x.event_class),
                int(x.global_tid),
                int(x.correlation as i64),
                int(x.name_id),
                int(0),
            ]
        }),
    )?;
    insert(
        c,
        b,
        "NVTX_EVENTS",
        &[
            "start",
            "end",
            "eventType",
            "rangeId",
            "category",
            "text",
            "globalTid",
            "endGlobalTid",
            "textId",
            "domainId",
            "jsonText",
        ],
        sorted(&r.nvtx, |n| n.start).iter().map(|n| {
            vec![
                int(n.start),
                opt(n.end),
                int(n.event_type),
                opt(n.range_id),
                opt(n.category),
                opt_text(&n.text),
                int(n.global_tid),
                opt(n.end_global_tid),
                opt(n.text_id),
                int(n.domain_id),
                opt_text(&n.json_text),
            ]
        }),
    )?;
    insert(
        c,
        b,
        "NVTX_PAYLOAD_SCHEMAS",
        &["domainId", "schemaId", "type", "numEntries", "payloadSize"],
        r.payload_schemas.iter().map(|s| {
            vec![
                int(s.domain_id),
                int(s.schema_id),
                int(1),
                int(s.entries.len() as i64),
                int(s.payload_size),
            ]
        }),
    )?;
    insert(
        c,
        b,
        "NVTX_PAYLOAD_SCHEMA_ENTRIES",
        &["domainId", "schemaId", "idx", "type", "name", "offset"],
        r.payload_schemas.iter().flat_map(|s| {
            s.entries.iter().enumerate().map(|(i, (ty, name, off))| {
                // nsys leaves the offset of the first entry NULL.
                let off = if *off == 0 { None } else { Some(*off) };
                vec![
                    int(s.domain_id),
                    int(s.schema_id),
                    int(i as i64),
                    int(*ty),
                    text(name),
                    opt(off),
                ]
            })
        }),
    )?;
    insert(
        c,
        b,
        "TARGET_INFO_GPU_METRICS",
        &["typeId", "sourceId", "typeName", "metricId", "metricName"],
        r.metric_types.iter().map(|m| {
            vec![
                int(m.type_id),
                int(m.source_id),
                text(&m.type_name),
                int(m.metric_id),
                text(&m.metric_name),
            ]
        }),
    )?;
    let mut metrics = r.metrics.clone();
    metrics.sort_by_key(|m| (m.timestamp, m.type_id, m.metric_id));
    insert(
        c,
        b,
        "GPU_METRICS",
        &["timestamp", "typeId", "metricId", "value"],
        metrics.iter().map(|m| {
            vec![
                int(m.timestamp),
                int(m.type_id),
                int(m.metric_id),
                int(m.value),
            ]
        }),
    )
}
