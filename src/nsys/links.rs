//! Which host call caused which GPU operation: the CUDA API call and the kernel/memcpy/memset share
//! a correlation id within a process. Read as a join ordered by the call's start, so each link is
//! delivered at its send time; SQLite builds a temporary index for the join (bounded, see mod.rs).

use std::collections::BTreeSet;

use super::cursor::{int, u32_or_0, u64_or_0, CursorKind, Fields, Query, SourceCx};
use super::ids::process_key;
use super::Schema;
use crate::error::Result;
use crate::model::{Link, LinkKind, Record};
use crate::options::Family;

pub fn query(schema: &Schema, families: &BTreeSet<Family>, source: usize) -> Option<Query> {
    if !families.contains(&Family::CudaApi) {
        return None;
    }
    // fam 0 kernels and graph replays (launch links), 1–2 memory operations (memory links).
    let parts: Vec<String> = [(0, Family::Kernel), (1, Family::Memcpy), (2, Family::Memset), (0, Family::Graphs)]
        .iter()
        .filter(|(_, f)| families.contains(f))
        .map(|(fam, f)| {
            let t = f.table();
            let bytes = if *fam == 0 || !schema.has_column(t, "bytes") { "NULL".to_owned() } else { schema.col_or_null(t, "bytes") };
            format!(
                "SELECT {fam} AS fam, start, globalPid, deviceId, {ctx} AS ctx, streamId, correlationId, {bytes} AS bytes \
                 FROM {t} WHERE start IS NOT NULL AND correlationId IS NOT NULL",
                ctx = schema.col_or_null(t, "contextId"),
            )
        })
        .collect();
    if parts.is_empty() {
        return None;
    }
    let sql = format!(
        "SELECT r.start, r.globalTid, g.start, g.globalPid, g.deviceId, COALESCE(g.ctx, 0), g.streamId, g.bytes, g.fam \
         FROM ({}) g JOIN {api} r ON r.correlationId = g.correlationId AND (r.globalTid >> 24) = (g.globalPid >> 24) \
         WHERE r.start IS NOT NULL AND r.globalTid IS NOT NULL ORDER BY r.start, r.rowid, g.start, g.fam",
        parts.join(" UNION ALL "),
        api = Family::CudaApi.table(),
    );
    Some(Query {
        kind: CursorKind::Link,
        source,
        sql,
        what: "API-to-GPU correlations",
        partitioned: None,
    })
}

const WHAT: &str = "API-to-GPU correlations";

pub fn decode<R: Fields + ?Sized>(row: &R, cx: &mut SourceCx) -> Result<Option<Record>> {
    let g = |i: usize, cx: &SourceCx| int(row, i, cx, WHAT);
    let (Some(send), Some(gtid), Some(recv), Some(gpid)) =
        (g(0, cx)?, g(1, cx)?, g(2, cx)?, g(3, cx)?)
    else {
        return Ok(None);
    };
    let key = (
        process_key(gpid),
        u32_or_0(g(4, cx)?),
        u32_or_0(g(5, cx)?),
        u32_or_0(g(6, cx)?),
    );
    let (Some(&(to, _)), Some(&from)) = (cx.streams.get(&key), cx.threads.get(&gtid)) else {
        return Ok(None);
    };
    let kind = if g(8, cx)? == Some(0) {
        LinkKind::Launch
    } else {
        LinkKind::Memory
    };
    Ok(Some(Record::Link(Link {
        from,
        send: cx.time(send),
        to,
        recv: cx.time(recv),
        bytes: u64_or_0(g(7, cx)?),
        kind,
    })))
}
