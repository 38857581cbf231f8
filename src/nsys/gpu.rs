//! GPU work: kernels, memcpy, memset and whole CUDA graph replays, read as one cursor so that each
//! operation knows the start of the next one on its stream (SQL `LEAD`, or the partitioned reader's
//! lookahead), which gives the idle gaps without buffering.

use std::collections::BTreeSet;

use super::context::{grown_slot, int, u32_or_0, u64_or_0, SourceCx};
use super::ids::process_key;
use super::query::{CursorKind, Partitioned, Query};
use super::Schema;
use crate::engine::partitioned::{Member, Spec};
use crate::engine::row::Fields;
use crate::engine::select::{Expr, Select, Val};
use crate::error::Result;
use crate::model::classify::kernel_class;
use crate::model::{GpuOp, GpuOpKind, GraphExec, Kernel, Memcpy, Memset, Names, Record};
use crate::options::Family;

const FAM_KERNEL: i64 = 0;
const FAM_MEMCPY: i64 = 1;
const FAM_MEMSET: i64 = 2;
const FAM_GRAPH: i64 = 3;

/// Columns of the union, in order; in a row, column `COLUMNS[i]` is at index i + 1 (after `fam`)
/// and `LEAD(start)` follows the last one.
const COLUMNS: &[&str] = &[
    "start",
    "end",
    "globalPid",
    "deviceId",
    "contextId",
    "streamId",
    "correlationId",
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
    "memKind",
    "graphNodeId",
    "graphId",
    "graphExecId",
];

/// Row index of a column, at compile time.
macro_rules! at {
    ($col:literal) => {
        const { crate::engine::row::column_index(COLUMNS, $col) + 1 }
    };
}

/// The columns every GPU table fills: the first seven of the union.
const COMMON: &[&str] = COLUMNS.split_at(7).0;

/// The columns each family fills (others are NULL in its rows).
fn filled(fam: i64) -> Vec<&'static str> {
    let own: &[&str] = match fam {
        FAM_KERNEL => &COLUMNS[7..20],
        FAM_MEMCPY => &["bytes", "copyKind", "srcKind", "dstKind"],
        FAM_MEMSET => &["bytes", "value", "memKind"],
        _ => &["graphId", "graphExecId"],
    };
    let mut v: Vec<&str> = COMMON.iter().chain(own).copied().collect();
    if fam != FAM_GRAPH {
        v.push("graphNodeId");
    }
    v
}

fn select_for(schema: &Schema, fam: i64, table: &str) -> Select {
    let wanted = filled(fam);
    let mut select = Select::new(table)
        .output("fam", Val::Int(fam))
        .output("rid", Val::Rowid);
    for c in COLUMNS {
        let v = if wanted.contains(c) {
            schema.column_or_null(table, c)
        } else {
            Val::Null
        };
        select = select.output(c, v);
    }
    select.not_null("start")
}

const FAMILIES: [(i64, Family); 4] = [
    (FAM_KERNEL, Family::Kernel),
    (FAM_MEMCPY, Family::Memcpy),
    (FAM_MEMSET, Family::Memset),
    (FAM_GRAPH, Family::Graphs),
];

/// The GPU cursor of one export, if it has any selected GPU family.
pub fn query(schema: &Schema, families: &BTreeSet<Family>, source: usize) -> Option<Query> {
    let members = members(schema, families);
    if members.is_empty() {
        return None;
    }
    let union: Vec<String> = members.iter().map(|m| m.select.sql()).collect();
    let sql = format!(
        "SELECT fam, {cols}, LEAD(start) OVER (PARTITION BY globalPid, deviceId, ctx, streamId ORDER BY start, fam, rid) \
         FROM (SELECT *, COALESCE(contextId, 0) AS ctx FROM ({union})) ORDER BY start, fam, rid",
        cols = quoted_columns(),
        union = union.join(" UNION ALL "),
    );
    let spec = Spec {
        order: Expr::out("start"),
        aux: None,
        what: WHAT_ALL,
        partition: vec![
            Expr::out("globalPid"),
            Expr::out("deviceId"),
            Expr::Coalesce("contextId".into(), 0),
            Expr::out("streamId"),
        ],
        columns: std::iter::once(Expr::out("fam"))
            .chain(COLUMNS.iter().map(|c| Expr::out(c)))
            .chain([Expr::Null])
            .collect(),
        members,
    };
    Some(Query {
        kind: CursorKind::Gpu,
        source,
        sql,
        what: WHAT_ALL,
        partitioned: Some(Partitioned::Rows(spec)),
    })
}

const WHAT_ALL: &str = "GPU activity (kernels, memcpy, memset, graphs)";

fn quoted_columns() -> String {
    COLUMNS
        .iter()
        .map(|c| format!("\"{c}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One member per selected GPU table, each giving every column of the union.
fn members(schema: &Schema, families: &BTreeSet<Family>) -> Vec<Member> {
    FAMILIES
        .iter()
        .filter(|(_, f)| families.contains(f))
        .map(|(fam, f)| {
            let wanted = filled(*fam);
            // fam, the union's columns, the lookahead (filled in by the reader).
            let present = std::iter::once(true)
                .chain(COLUMNS.iter().map(|c| wanted.contains(c)))
                .chain([false])
                .collect();
            Member {
                fam: *fam,
                select: select_for(schema, *fam, f.table()),
                present,
            }
        })
        .collect()
}

const WHAT: &str = "GPU activity";

pub fn decode<R: Fields + ?Sized>(
    row: &R,
    cx: &mut SourceCx,
    names: &mut Names,
) -> Result<Option<Record>> {
    let g = |i: usize, cx: &SourceCx| int(row, i, cx, WHAT);
    let fam = int(row, 0, cx, WHAT)?.unwrap_or(FAM_KERNEL);
    let Some(start) = g(at!("start"), cx)? else {
        return Ok(None);
    };
    let table = FAMILIES
        .iter()
        .find(|(f, _)| *f == fam)
        .map_or(Family::Kernel, |(_, f)| *f)
        .table();
    let (start_t, end_t) = cx.interval(table, start, g(at!("end"), cx)?);
    let (Some(gpid), Some(dev), Some(stream)) = (
        g(at!("globalPid"), cx)?,
        g(at!("deviceId"), cx)?,
        g(at!("streamId"), cx)?,
    ) else {
        cx.warn(format!(
            "{table}: rows without process, device or stream were skipped"
        ));
        return Ok(None);
    };
    let key = (
        process_key(gpid),
        u32_or_0(Some(dev)),
        u32_or_0(g(at!("contextId"), cx)?.or(Some(0))),
        u32_or_0(Some(stream)),
    );
    let Some(&(thread, device)) = cx.streams.get(&key) else {
        return Err(cx.bad(format!(
            "table {table}: stream {key:?} appeared after discovery"
        )));
    };
    let correlation_id = u64_or_0(g(at!("correlationId"), cx)?);
    let next_on_stream = int(row, COLUMNS.len() + 1, cx, WHAT)?.map(|n| cx.time(n));
    let graph_node_id = g(at!("graphNodeId"), cx)?.and_then(|n| u64::try_from(n).ok());
    let u32_of = |i: usize, cx: &SourceCx| g(i, cx).map(u32_or_0);
    let kind = match fam {
        FAM_KERNEL => GpuOpKind::Kernel(kernel(row, cx, names)?),
        FAM_MEMCPY => GpuOpKind::Memcpy(Memcpy {
            bytes: u64_or_0(g(at!("bytes"), cx)?),
            copy_kind: u32_of(at!("copyKind"), cx)?,
            src_kind: g(at!("srcKind"), cx)?.and_then(|v| u32::try_from(v).ok()),
            dst_kind: g(at!("dstKind"), cx)?.and_then(|v| u32::try_from(v).ok()),
        }),
        FAM_MEMSET => GpuOpKind::Memset(Memset {
            bytes: u64_or_0(g(at!("bytes"), cx)?),
            value: u64_or_0(g(at!("value"), cx)?),
            mem_kind: g(at!("memKind"), cx)?.and_then(|v| u32::try_from(v).ok()),
        }),
        _ => {
            let (graph_id, exec_id) = (
                u64_or_0(g(at!("graphId"), cx)?),
                u64_or_0(g(at!("graphExecId"), cx)?),
            );
            let name = names.intern(&format!("CUDA graph {graph_id} exec {exec_id}"));
            GpuOpKind::Graph(GraphExec {
                name,
                graph_id,
                exec_id,
            })
        }
    };
    Ok(Some(Record::Gpu(GpuOp {
        thread,
        device,
        start: start_t,
        end: end_t,
        next_on_stream,
        correlation_id,
        graph_node_id,
        kind,
    })))
}

/// The kernel of a row of the kernels' table.
#[inline(always)]
fn kernel<R: Fields + ?Sized>(row: &R, cx: &mut SourceCx, names: &mut Names) -> Result<Kernel> {
    let g = |i: usize, cx: &SourceCx| int(row, i, cx, WHAT);
    let u32_of = |i: usize, cx: &SourceCx| g(i, cx).map(u32_or_0);
    let short_id = g(at!("shortName"), cx)?;
    let full_id = g(at!("demangledName"), cx)?.or(short_id);
    let name = match full_id {
        Some(id) => cx.strings.name(id, names)?,
        None => names.intern("<unnamed kernel>"),
    };
    let short_name = match short_id {
        Some(id) => cx.strings.name(id, names)?,
        None => name,
    };
    // Worked out once per kernel name (again where its short name is another).
    let known = grown_slot(&mut cx.kernel_classes, name.0 as usize);
    let class = match *known {
        Some((short, class)) if short == short_name => class,
        _ => {
            let class = kernel_class(names.get(name), names.get(short_name));
            *known = Some((short_name, class));
            class
        }
    };
    Ok(Kernel {
        name,
        short_name,
        class,
        grid: [
            u32_of(at!("gridX"), cx)?,
            u32_of(at!("gridY"), cx)?,
            u32_of(at!("gridZ"), cx)?,
        ],
        block: [
            u32_of(at!("blockX"), cx)?,
            u32_of(at!("blockY"), cx)?,
            u32_of(at!("blockZ"), cx)?,
        ],
        registers_per_thread: u32_of(at!("registersPerThread"), cx)?,
        static_shared_memory: u32_of(at!("staticSharedMemory"), cx)?,
        dynamic_shared_memory: u32_of(at!("dynamicSharedMemory"), cx)?,
        local_memory_per_thread: u32_of(at!("localMemoryPerThread"), cx)?,
        local_memory_total: u64_or_0(g(at!("localMemoryTotal"), cx)?),
    })
}
