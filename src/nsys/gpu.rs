//! GPU work: kernels, memcpy and memset, read as one cursor so that each operation knows the start
//! of the next one on its stream (SQL `LEAD`), which gives the idle gaps without buffering.

use rusqlite::Row;

use super::cursor::{int, u32_or_0, u64_or_0, CursorKind, Query, SourceCx};
use super::ids::process_key;
use super::Schema;
use crate::error::Result;
use crate::model::classify::kernel_class;
use crate::model::{GpuOp, GpuOpKind, Kernel, Memcpy, Memset, Names, Record};
use crate::options::Family;

const FAM_KERNEL: i64 = 0;
const FAM_MEMCPY: i64 = 1;
const FAM_MEMSET: i64 = 2;

/// Columns of the union, in order: the decoder reads them by these positions.
const COLUMNS: &[&str] = &[
    "start",
    "end",
    "globalPid",
    "deviceId",
    "contextId",
    "streamId",
    "correlationId", // row index = position + 1 (fam is 0)
    "demangledName",
    "shortName",
    "gridX",
    "gridY",
    "gridZ",
    "blockX",
    "blockY",
    "blockZ",
    "registersPerThread",
    "staticSharedMemory",
    "dynamicSharedMemory",
    "localMemoryPerThread",
    "localMemoryTotal",
    "bytes",
    "copyKind",
    "srcKind",
    "dstKind",
    "value",
    "memKind", // LEAD(start) follows at 27
];

fn select_for(schema: &Schema, fam: i64, table: &str) -> String {
    let wanted: &[&str] = match fam {
        FAM_KERNEL => &COLUMNS[..20],
        FAM_MEMCPY => &[
            "start",
            "end",
            "globalPid",
            "deviceId",
            "contextId",
            "streamId",
            "correlationId",
            "bytes",
            "copyKind",
            "srcKind",
            "dstKind",
        ],
        _ => &[
            "start",
            "end",
            "globalPid",
            "deviceId",
            "contextId",
            "streamId",
            "correlationId",
            "bytes",
            "value",
            "memKind",
        ],
    };
    let cols: Vec<String> = COLUMNS
        .iter()
        .map(|c| {
            let v = if wanted.contains(c) {
                schema.col_or_null(table, c)
            } else {
                "NULL".into()
            };
            format!("{v} AS \"{c}\"")
        })
        .collect();
    format!(
        "SELECT {fam} AS fam, rowid AS rid, {} FROM {table} WHERE start IS NOT NULL",
        cols.join(", ")
    )
}

/// The GPU cursor of one export, if it has any selected GPU family.
pub fn query(
    schema: &Schema,
    families: &std::collections::BTreeSet<Family>,
    source: usize,
) -> Option<Query> {
    let parts: Vec<String> = [
        (FAM_KERNEL, Family::Kernel),
        (FAM_MEMCPY, Family::Memcpy),
        (FAM_MEMSET, Family::Memset),
    ]
    .iter()
    .filter(|(_, f)| families.contains(f))
    .map(|(fam, f)| select_for(schema, *fam, f.table()))
    .collect();
    if parts.is_empty() {
        return None;
    }
    let sql = format!(
        "SELECT fam, {cols}, LEAD(start) OVER (PARTITION BY globalPid, deviceId, ctx, streamId ORDER BY start, fam, rid) \
         FROM (SELECT *, COALESCE(contextId, 0) AS ctx FROM ({union})) ORDER BY start, fam, rid",
        cols = COLUMNS.iter().map(|c| format!("\"{c}\"")).collect::<Vec<_>>().join(", "),
        union = parts.join(" UNION ALL "),
    );
    Some(Query {
        kind: CursorKind::Gpu,
        source,
        sql,
        what: "GPU activity (kernels, memcpy, memset)",
    })
}

const WHAT: &str = "GPU activity";

pub fn decode(row: &Row, cx: &mut SourceCx, names: &mut Names) -> Result<Option<Record>> {
    let g = |i: usize, cx: &SourceCx| int(row, i, cx, WHAT);
    let fam = g(0, cx)?.unwrap_or(FAM_KERNEL);
    let Some(start) = g(1, cx)? else {
        return Ok(None);
    };
    let table = match fam {
        FAM_KERNEL => Family::Kernel.table(),
        FAM_MEMCPY => Family::Memcpy.table(),
        _ => Family::Memset.table(),
    };
    let (start_t, end_t) = cx.interval(table, start, g(2, cx)?);
    let (Some(gpid), Some(dev), Some(stream)) = (g(3, cx)?, g(4, cx)?, g(6, cx)?) else {
        cx.warn(format!(
            "{table}: rows without process, device or stream were skipped"
        ));
        return Ok(None);
    };
    let key = (
        process_key(gpid),
        u32_or_0(Some(dev)),
        u32_or_0(g(5, cx)?.or(Some(0))),
        u32_or_0(Some(stream)),
    );
    let Some(&(thread, device)) = cx.streams.get(&key) else {
        return Err(cx.bad(format!(
            "table {table}: stream {key:?} appeared after discovery"
        )));
    };
    let correlation_id = u64_or_0(g(7, cx)?);
    let next_on_stream = g(27, cx)?.map(|n| cx.time(n));
    let kind = match fam {
        FAM_KERNEL => {
            let short_id = g(9, cx)?;
            let full_id = g(8, cx)?.or(short_id);
            let name = match full_id {
                Some(id) => cx.strings.name(id, names)?,
                None => names.intern("<unnamed kernel>"),
            };
            let short_name = match short_id {
                Some(id) => cx.strings.name(id, names)?,
                None => name,
            };
            let class = kernel_class(names.get(name), names.get(short_name));
            GpuOpKind::Kernel(Kernel {
                name,
                short_name,
                class,
                grid: [
                    u32_or_0(g(10, cx)?),
                    u32_or_0(g(11, cx)?),
                    u32_or_0(g(12, cx)?),
                ],
                block: [
                    u32_or_0(g(13, cx)?),
                    u32_or_0(g(14, cx)?),
                    u32_or_0(g(15, cx)?),
                ],
                registers_per_thread: u32_or_0(g(16, cx)?),
                static_shared_memory: u32_or_0(g(17, cx)?),
                dynamic_shared_memory: u32_or_0(g(18, cx)?),
                local_memory_per_thread: u32_or_0(g(19, cx)?),
                local_memory_total: u64_or_0(g(20, cx)?),
            })
        }
        FAM_MEMCPY => GpuOpKind::Memcpy(Memcpy {
            bytes: u64_or_0(g(21, cx)?),
            copy_kind: u32_or_0(g(22, cx)?),
            src_kind: g(23, cx)?.and_then(|v| u32::try_from(v).ok()),
            dst_kind: g(24, cx)?.and_then(|v| u32::try_from(v).ok()),
        }),
        _ => GpuOpKind::Memset(Memset {
            bytes: u64_or_0(g(21, cx)?),
            value: u64_or_0(g(25, cx)?),
            mem_kind: g(26, cx)?.and_then(|v| u32::try_from(v).ok()),
        }),
    };
    Ok(Some(Record::Gpu(GpuOp {
        thread,
        device,
        start: start_t,
        end: end_t,
        next_on_stream,
        correlation_id,
        kind,
    })))
}
