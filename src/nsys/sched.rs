//! CPU scheduling (SCHED_EVENTS, `--cpuctxsw`): when each thread ran on which CPU. A sched-in row
//! opens a run that the thread's next row (its sched-out) closes — the lookahead of the thread's
//! rows (SQL `LEAD`, or the partitioned reader), so no pairing state is kept. The last run of a
//! thread closes at the end of the trace.

use super::context::{int, SourceCx};
use super::query::{CursorKind, Partitioned, Query};
use crate::engine::partitioned::{Member, Spec};
use crate::engine::row::Fields;
use crate::engine::select::{Expr, Select, Val};
use crate::error::Result;
use crate::model::{CpuRun, Ns, Record};

pub const TABLE: &str = "SCHED_EVENTS";

/// Columns every reader gives, in order: start, the next row's start (the lookahead; NULL where
/// the partitioned reader fills it in), cpu, globalTid, isSchedIn.
const COLUMNS: &str = "start, nxt, cpu, globalTid, isSchedIn";

fn member() -> Select {
    Select::new(TABLE)
        .output("rid", Val::Rowid)
        .output("start", Val::col("start"))
        .output("nxt", Val::Null)
        .output("isSchedIn", Val::col("isSchedIn"))
        .output("cpu", Val::col("cpu"))
        .output("globalTid", Val::col("globalTid"))
        .not_null("start")
        .not_null("globalTid")
}

pub fn query(source: usize) -> Query {
    let sql = format!(
        "SELECT {COLUMNS} FROM (SELECT start, isSchedIn, cpu, globalTid, \
           LEAD(start) OVER (PARTITION BY globalTid ORDER BY start, rowid) AS nxt, rowid AS rid \
           FROM {TABLE} WHERE start IS NOT NULL AND globalTid IS NOT NULL) \
         WHERE isSchedIn = 1 ORDER BY start, rid"
    );
    Query {
        kind: CursorKind::Sched,
        source,
        sql,
        what: "CPU scheduling",
        partitioned: Some(Partitioned::Rows(spec())),
    }
}

/// The same rows as [`query`] (sched-outs included: they close runs), read per thread.
pub fn spec() -> Spec {
    Spec {
        order: Expr::out("start"),
        aux: None,
        what: "CPU scheduling",
        members: vec![Member {
            fam: 0,
            select: member(),
            present: COLUMNS.split(", ").map(|c| c != "nxt").collect(),
        }],
        partition: vec![Expr::out("globalTid")],
        columns: COLUMNS.split(", ").map(Expr::out).collect(),
    }
}

/// End of a run that starts at `start` (raw): the thread's next scheduling row, else the trace end.
pub fn run_end(start: i64, next: Option<i64>, cx: &SourceCx) -> Ns {
    match next {
        Some(e) if e >= start => cx.time(e),
        _ => cx.end_time,
    }
}

pub fn decode<R: Fields + ?Sized>(row: &R, cx: &mut SourceCx) -> Result<Option<Record>> {
    let g = |i: usize, cx: &SourceCx| int(row, i, cx, TABLE);
    let (Some(start), Some(gtid)) = (g(0, cx)?, g(3, cx)?) else {
        return Ok(None);
    };
    if g(4, cx)? != Some(1) {
        return Ok(None); // a sched-out: it only ends the run before it
    }
    let thread = cx.thread(TABLE, gtid)?;
    let end = run_end(start, g(1, cx)?, cx);
    let cpu = g(2, cx)?.and_then(|c| u32::try_from(c).ok()).unwrap_or(0);
    Ok(Some(Record::Sched(CpuRun {
        thread,
        start: cx.time(start),
        end,
        cpu,
    })))
}
