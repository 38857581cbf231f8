//! CPU scheduling (SCHED_EVENTS, `--cpuctxsw`): when each thread ran on which CPU. A sched-in row
//! opens a run that the thread's next row (its sched-out) closes — found with SQL `LEAD`, so no
//! pairing state is kept. The last run of a thread closes at the end of the trace.

use rusqlite::Row;

use super::cursor::{int, CursorKind, Query, SourceCx};
use crate::error::Result;
use crate::model::{CpuRun, Record};

pub const TABLE: &str = "SCHED_EVENTS";

pub fn query(source: usize) -> Query {
    let sql = format!(
        "SELECT start, nxt, cpu, globalTid FROM (SELECT start, isSchedIn, cpu, globalTid, \
           LEAD(start) OVER (PARTITION BY globalTid ORDER BY start, rowid) AS nxt, rowid AS rid \
           FROM {TABLE} WHERE start IS NOT NULL AND globalTid IS NOT NULL) \
         WHERE isSchedIn = 1 ORDER BY start, rid"
    );
    Query { kind: CursorKind::Sched, source, sql, what: "CPU scheduling" }
}

pub fn decode(row: &Row, cx: &mut SourceCx) -> Result<Option<Record>> {
    let g = |i: usize, cx: &SourceCx| int(row, i, cx, TABLE);
    let (Some(start), Some(gtid)) = (g(0, cx)?, g(3, cx)?) else { return Ok(None) };
    let thread = cx.thread(TABLE, gtid)?;
    let start_t = cx.time(start);
    let end = match g(1, cx)? {
        Some(e) if e >= start => cx.time(e),
        _ => cx.end_time,
    };
    let cpu = g(2, cx)?.and_then(|c| u32::try_from(c).ok()).unwrap_or(0);
    Ok(Some(Record::Sched(CpuRun { thread, start: start_t, end, cpu })))
}
