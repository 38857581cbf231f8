//! How long each GPU stream of an export is busy, straight from SQL: the union of its kernel
//! intervals (compute and NCCL kernels, whole graph replays) and of its memory operations
//! (memcpy, memset). `prvsight check TRACE --against EXPORT` compares it with the time the
//! trace's rows show a value, as a check of the converter that shares none of its reading code.

use std::collections::BTreeMap;

use super::Export;
use crate::error::{Error, Result};

/// A GPU stream: (pid, CUDA device, context, stream).
pub type StreamId = (u32, u32, u32, u32);

/// Busy time of one stream, ns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StreamBusy {
    /// Union of its kernels and graph replays.
    pub kernel_ns: u64,
    /// Union of its memcpy and memset operations.
    pub memory_ns: u64,
}

const KERNEL_TABLES: &[&str] = &[
    "CUPTI_ACTIVITY_KIND_KERNEL",
    "CUPTI_ACTIVITY_KIND_GRAPH_TRACE",
];
const MEMORY_TABLES: &[&str] = &["CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"];
const COLUMNS: &[&str] = &[
    "start",
    "end",
    "globalPid",
    "deviceId",
    "contextId",
    "streamId",
];

/// Every stream's busy time, by stream.
pub fn stream_busy(ex: &Export) -> Result<BTreeMap<StreamId, StreamBusy>> {
    let mut out: BTreeMap<StreamId, StreamBusy> = BTreeMap::new();
    for (tables, memory) in [(KERNEL_TABLES, false), (MEMORY_TABLES, true)] {
        for (stream, ns) in union_per_stream(ex, tables)? {
            let busy = out.entry(stream).or_default();
            if memory {
                busy.memory_ns = ns;
            } else {
                busy.kernel_ns = ns;
            }
        }
    }
    Ok(out)
}

/// The union of the intervals of `tables`' rows, per stream, sorted by SQLite.
fn union_per_stream(ex: &Export, tables: &[&str]) -> Result<BTreeMap<StreamId, u64>> {
    let s = &ex.schema;
    let selects: Vec<String> = tables
        .iter()
        .filter(|t| s.has_columns(t, COLUMNS))
        .map(|t| {
            format!(
                "SELECT (globalPid >> 24) & 16777215 AS pid, coalesce(deviceId, 0) AS d, \
                 coalesce(contextId, 0) AS c, coalesce(streamId, 0) AS s, start, \
                 max(coalesce(\"end\", start), start) AS e FROM {t} WHERE start IS NOT NULL"
            )
        })
        .collect();
    let mut out = BTreeMap::new();
    if selects.is_empty() {
        return Ok(out);
    }
    let sql = format!(
        "SELECT pid, d, c, s, start, e FROM ({}) ORDER BY pid, d, c, s, start",
        selects.join(" UNION ALL ")
    );
    let read = |e: rusqlite::Error| Error::read(&ex.label, tables.join(" + "), e);
    let mut stmt = ex.conn.prepare(&sql).map_err(read)?;
    let mut rows = stmt.query([]).map_err(read)?;
    // The interval being merged: its stream, start and end.
    let mut open: Option<(StreamId, i64, i64)> = None;
    let close = |open: Option<(StreamId, i64, i64)>, out: &mut BTreeMap<StreamId, u64>| {
        if let Some((id, a, b)) = open {
            *out.entry(id).or_insert(0) += b.saturating_sub(a).max(0) as u64;
        }
    };
    while let Some(r) = rows.next().map_err(read)? {
        let field = |i: usize| -> rusqlite::Result<u32> {
            let v: i64 = r.get(i)?;
            Ok(u32::try_from(v).unwrap_or(u32::MAX))
        };
        let id = (
            field(0).map_err(read)?,
            field(1).map_err(read)?,
            field(2).map_err(read)?,
            field(3).map_err(read)?,
        );
        let (start, end): (i64, i64) = (r.get(4).map_err(read)?, r.get(5).map_err(read)?);
        match &mut open {
            Some((o, _, b)) if *o == id && start <= *b => *b = (*b).max(end),
            _ => {
                close(open.take(), &mut out);
                open = Some((id, start, end));
            }
        }
    }
    close(open, &mut out);
    Ok(out)
}
