//! MPI point-to-point messages: the k-th send from rank A to rank B with tag T is the k-th receive
//! at B from A with tag T (MPI's non-overtaking rule). Sends stream in time order from each
//! sender's export; each looks up its receive in the receiver's export through a small indexed
//! TEMP table (built once per export, in SQLite's temporary store, so memory stays bounded).
//!
//! Matched on the world communicator only (communicators created from nothing): ranks in other
//! communicators are local to them and nsys does not record their membership in every version.
//! Receives from MPI_ANY_SOURCE/ANY_TAG cannot be matched this way and are counted in a warning.

use rusqlite::OptionalExtension;

use super::context::{int, SourceCx};
use super::query::{CursorKind, Query};
use super::Export;
use crate::engine::row::Fields;
use crate::error::{Error, Result};
use crate::model::{Message, Record};

const P2P: &str = "MPI_P2P_EVENTS";

/// True when the export has what matching needs.
pub fn available(ex: &Export) -> bool {
    ex.schema.has_columns(
        P2P,
        &["start", "end", "globalTid", "textId", "remoteRank", "tag"],
    ) && ex.schema.has_columns("MPI_RANKS", &["globalTid", "rank"])
}

fn rank_of(alias: &str) -> String {
    format!("(SELECT r.rank FROM MPI_RANKS r WHERE (r.globalTid >> 24) = ({alias}.globalTid >> 24) LIMIT 1)")
}

const WORLD_COMMS: &str =
    "SELECT commHandle FROM MPI_COMMUNICATORS WHERE parentHandle IS NULL OR parentHandle = 0";

fn world_filter(ex: &Export, alias: &str) -> String {
    if has_communicators(ex) {
        format!("AND ({alias}.commHandle IS NULL OR {alias}.commHandle IN ({WORLD_COMMS}))")
    } else {
        String::new()
    }
}

fn has_communicators(ex: &Export) -> bool {
    ex.schema.has_columns(P2P, &["commHandle"])
        && (ex.schema).has_columns("MPI_COMMUNICATORS", &["commHandle", "parentHandle"])
}

/// [`world_filter`] with the world's handles written out, where they are integers (or NULL):
/// a query kept open through the stream then holds no table of them (SQLite's `IN (SELECT …)`
/// builds one, 87 KiB of page cache, per input of a run of many ranks).
fn world_filter_listed(ex: &Export, alias: &str) -> String {
    if !has_communicators(ex) {
        return String::new();
    }
    let handles: Option<Vec<String>> = (|| {
        let mut st = ex.conn.prepare(WORLD_COMMS).ok()?;
        let rows = st
            .query_map([], |r| r.get::<_, rusqlite::types::Value>(0))
            .ok()?;
        rows.map(|v| match v.ok()? {
            rusqlite::types::Value::Integer(i) => Some(i.to_string()),
            rusqlite::types::Value::Null => Some("NULL".to_owned()),
            _ => None,
        })
        .collect()
    })();
    match handles {
        Some(h) => format!(
            "AND ({alias}.commHandle IS NULL OR {alias}.commHandle IN ({}))",
            h.join(", ")
        ),
        None => world_filter(ex, alias),
    }
}

/// Builds the receive index of one export (TEMP table + index; the export itself is not touched),
/// unless it was built before.
pub fn build_receive_index(ex: &Export) -> Result<()> {
    if ex.receive_index.get() {
        return Ok(());
    }
    let strings = &ex.schema.strings_table;
    let request = ex.schema.col_or_null(P2P, "requestHandle");
    let mut sql = format!(
        "DROP TABLE IF EXISTS temp.prvsight_recv;
         CREATE TEMP TABLE prvsight_recv AS
         SELECT p.globalTid AS gtid, {rank} AS rank, p.remoteRank AS src, p.tag AS tag,
                ROW_NUMBER() OVER (PARTITION BY {rank}, p.remoteRank, p.tag ORDER BY p.start, p.rowid) AS k,
                p.start AS posted, p.end AS done, {request} AS req
         FROM {P2P} p JOIN {strings} s ON s.id = p.textId
         WHERE lower(s.value) LIKE '%recv%' AND p.start IS NOT NULL AND p.remoteRank >= 0 AND p.tag >= 0 {world};
         CREATE INDEX temp.prvsight_recv_key ON prvsight_recv(rank, src, tag, k);",
        rank = rank_of("p"),
        world = world_filter(ex, "p"),
    );
    // A non-blocking receive has its message once the wait on its request returns.
    if ex.schema.has_columns(
        "MPI_START_WAIT_EVENTS",
        &["requestHandle", "globalTid", "start", "end"],
    ) {
        sql.push_str(
            "CREATE TEMP TABLE prvsight_waits AS SELECT requestHandle AS req, globalTid AS gtid, start, end
               FROM MPI_START_WAIT_EVENTS WHERE requestHandle IS NOT NULL;
             CREATE INDEX temp.prvsight_waits_key ON prvsight_waits(req, gtid, start);
             UPDATE prvsight_recv SET done = COALESCE((SELECT MIN(w.end) FROM prvsight_waits w
               WHERE w.req = prvsight_recv.req AND w.gtid = prvsight_recv.gtid AND w.start >= prvsight_recv.posted), done)
             WHERE req IS NOT NULL;
             DROP TABLE prvsight_waits;",
        );
    }
    ex.conn
        .execute_batch(&sql)
        .map_err(|e| Error::read(&ex.label, "MPI receives (to match messages)", e))?;
    ex.receive_index.set(true);
    Ok(())
}

/// The sends of one export, in time order; [`decode`] numbers them per (rank, peer, tag), in
/// this order (SQL's window function kept a table per input open through the stream).
pub fn send_query(ex: &Export, source: usize) -> Query {
    let sql = format!(
        "SELECT p.start, p.globalTid, {rank} AS me, p.remoteRank, p.tag, {size}
         FROM {P2P} p JOIN {strings} s ON s.id = p.textId
         WHERE lower(s.value) LIKE '%send%' AND p.start IS NOT NULL AND p.remoteRank >= 0 AND p.tag >= 0 {world}
         ORDER BY p.start, p.rowid",
        rank = rank_of("p"),
        size = if ex.schema.has_column(P2P, "size") { "p.size" } else { "NULL" },
        strings = ex.schema.strings_table,
        world = world_filter_listed(ex, "p"),
    );
    Query {
        kind: CursorKind::MpiSend,
        source,
        sql,
        what: "MPI sends (message matching)",
        partitioned: None,
    }
}

/// Builds `ex`'s receive index and gives `cx` its lookup.
pub fn prepare_matching<'c>(ex: &'c Export, cx: &mut SourceCx<'c>) -> Result<()> {
    build_receive_index(ex)?;
    cx.recv_lookup = Some(ReceiveLookup {
        conn: &ex.conn,
        statement: None,
    });
    Ok(())
}

/// Looks receives up in one export's receive index; its statement is prepared at the first
/// lookup (the contexts of every input are made for each group of a run of many ranks, and
/// most are never asked).
pub struct ReceiveLookup<'c> {
    conn: &'c rusqlite::Connection,
    statement: Option<rusqlite::Statement<'c>>,
}

impl ReceiveLookup<'_> {
    /// The k-th receive at rank `at` from rank `from` with `tag`: its thread, when it was
    /// posted and when it had its message.
    fn find(
        &mut self,
        at: i64,
        from: i64,
        tag: i64,
        k: i64,
    ) -> rusqlite::Result<Option<(i64, i64, Option<i64>)>> {
        let statement = match &mut self.statement {
            Some(s) => s,
            None => self
                .statement
                .insert(self.conn.prepare(receive_lookup_sql())?),
        };
        statement
            .query_row(rusqlite::params![at, from, tag, k], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .optional()
    }
}

fn receive_lookup_sql() -> &'static str {
    "SELECT gtid, posted, done FROM temp.prvsight_recv WHERE rank = ?1 AND src = ?2 AND tag = ?3 AND k = ?4"
}

const WHAT: &str = "MPI sends";

/// Decodes one send and finds its receive; unmatched sends are counted, not fatal.
pub fn decode<R: Fields + ?Sized>(
    row: &R,
    src: usize,
    cxs: &mut [SourceCx],
) -> Result<Option<Record>> {
    let g = |i: usize, cx: &SourceCx| int(row, i, cx, WHAT);
    let cx = &cxs[src];
    let fields = (g(0, cx)?, g(1, cx)?, g(2, cx)?, g(3, cx)?, g(4, cx)?);
    // The send's number among those of its (rank, peer, tag), counted in the query's order
    // (start, rowid) over every row it gives: what ROW_NUMBER() over that partition numbers.
    let sent = cxs[src].sends.entry((fields.2, fields.3, fields.4));
    let k = *sent.and_modify(|n| *n += 1).or_insert(1);
    let cx = &cxs[src];
    let (Some(send), Some(gtid), Some(me), Some(dst), Some(tag)) = fields else {
        return Ok(None);
    };
    let bytes = g(5, cx)?.and_then(|b| u64::try_from(b).ok()).unwrap_or(0);
    let from = cx.thread(P2P, gtid)?;
    let send = cx.time(send);
    let Some(&dst_src) = u32::try_from(dst)
        .ok()
        .and_then(|d| cx.rank_sources.get(&d))
    else {
        cxs[src].warn(format!("{P2P}: sends to a rank that is not among the inputs (give every rank's report to match them)"));
        return Ok(None);
    };
    let dcx = &mut cxs[dst_src];
    let Some(lookup) = dcx.recv_lookup.as_mut() else {
        return Ok(None);
    };
    let found =
        (lookup.find(dst, me, tag, k)).map_err(|e| Error::read(&dcx.file, "MPI receives", e))?;
    let Some((rgtid, posted, done)) = found else {
        cxs[src].warn(format!("{P2P}: sends without a matching receive (wildcard receives, or the receiver's report is cut)"));
        return Ok(None);
    };
    let Some(&to) = dcx.threads.get(&rgtid) else {
        return Ok(None);
    };
    let recv_posted = dcx.time(posted);
    let recv = dcx.time(done.unwrap_or(posted)).max(recv_posted);
    Ok(Some(Record::Message(Message {
        from,
        send,
        to,
        recv_posted,
        recv,
        bytes,
        tag: tag as u64,
    })))
}
