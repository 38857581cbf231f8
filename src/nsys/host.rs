//! Calls on host threads, read as one cursor so each knows the start of the next traced call on its
//! thread (SQL `LEAD` over the union), which gives the thread's state between calls without
//! buffering: CUDA runtime/driver API (CUPTI_ACTIVITY_KIND_RUNTIME, straight from SQL, no
//! `nsys stats`), MPI (the four MPI_*_EVENTS tables, or the NVTX `MPI` domain of nsys 2022), and OS
//! runtime calls (OSRT_API).

use std::collections::BTreeSet;

use rusqlite::Row;

use super::cursor::{int, text, u64_or_0, CursorKind, Query, SourceCx};
use super::discover::Discovery;
use super::Schema;
use crate::error::Result;
use crate::model::classify::{cuda_call_activity, mpi_activity, os_call_activity, strip_api_version};
use crate::model::{ApiLayer, CudaCall, HostCall, HostCallKind, MpiCall, MpiClass, Names, OsCall, Record};
use crate::options::Family;

/// `eventClass` of driver API calls (TRACE_PROCESS_EVENT_CUDA_DRIVER).
const EVENT_CLASS_DRIVER: i64 = 1;

const FAM_CUDA: i64 = 0;
const FAM_MPI_P2P: i64 = 1;
const FAM_MPI_COLL: i64 = 2;
const FAM_MPI_WAIT: i64 = 3;
const FAM_MPI_OTHER: i64 = 4;
const FAM_OSRT: i64 = 5;
const FAM_NVTX_MPI: i64 = 6;

/// Union columns: fam, rid, start, end, globalTid, name id, inline name, correlationId, eventClass,
/// size, recvSize, tag, remoteRank, rootRank, commHandle, requests.
fn member(fam: i64, table: &str, cols: [&str; 11], filter: &str, group: &str) -> String {
    let rid = if group.is_empty() { "rowid" } else { "MIN(rowid)" };
    format!(
        "SELECT {fam} AS fam, {rid} AS rid, start, end, globalTid, {} AS nm, {} AS txt, {} AS corr, {} AS cls, {} AS size, \
         {} AS recvSize, {} AS tag, {} AS peer, {} AS root, {} AS comm, {} AS reqs FROM {table} \
         WHERE start IS NOT NULL AND globalTid IS NOT NULL {filter} {group}",
        cols[0], cols[1], cols[2], cols[3], cols[4], cols[5], cols[6], cols[7], cols[8], cols[9], cols[10]
    )
}

pub fn query(schema: &Schema, d: &Discovery, families: &BTreeSet<Family>, source: usize) -> Option<Query> {
    let c = |t: &str, col: &str| schema.col_or_null(t, col);
    let mut parts = Vec::new();
    if families.contains(&Family::CudaApi) {
        let t = Family::CudaApi.table();
        parts.push(member(FAM_CUDA, t, ["nameId", "NULL", "correlationId", &c(t, "eventClass"), "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "1"], "", ""));
    }
    if families.contains(&Family::Mpi) {
        let t = "MPI_P2P_EVENTS";
        if schema.has_table(t) {
            parts.push(member(FAM_MPI_P2P, t, ["textId", "NULL", "NULL", "NULL", &c(t, "size"), "NULL", &c(t, "tag"), &c(t, "remoteRank"), "NULL", &c(t, "commHandle"), "1"], "", ""));
        }
        let t = "MPI_COLLECTIVES_EVENTS";
        if schema.has_table(t) {
            parts.push(member(FAM_MPI_COLL, t, ["textId", "NULL", "NULL", "NULL", &c(t, "size"), &c(t, "recvSize"), "NULL", "NULL", &c(t, "rootRank"), &c(t, "commHandle"), "1"], "", ""));
        }
        // nsys writes one row per request a wait completed, all with the call's start and end.
        let t = "MPI_START_WAIT_EVENTS";
        if schema.has_table(t) {
            parts.push(member(FAM_MPI_WAIT, t, ["textId", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "COUNT(*)"], "", "GROUP BY start, end, globalTid, textId"));
        }
        let t = "MPI_OTHER_EVENTS";
        if schema.has_table(t) {
            parts.push(member(FAM_MPI_OTHER, t, ["textId", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "1"], "", ""));
        }
        if !d.nvtx_mpi_domains.is_empty() {
            let ids = d.nvtx_mpi_domains.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(",");
            let t = "NVTX_EVENTS";
            parts.push(member(
                FAM_NVTX_MPI,
                t,
                [&c(t, "textId"), "text", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "1"],
                &format!("AND eventType IN (59, 70) AND domainId IN ({ids})"),
                "",
            ));
        }
    }
    if families.contains(&Family::Osrt) && schema.has_table("OSRT_API") {
        parts.push(member(FAM_OSRT, "OSRT_API", ["nameId", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "1"], &osrt_filter(schema), ""));
    }
    if parts.is_empty() {
        return None;
    }
    let sql = format!(
        "SELECT fam, start, end, globalTid, nm, txt, corr, cls, size, recvSize, tag, peer, root, comm, reqs, \
         LEAD(start) OVER (PARTITION BY globalTid ORDER BY start, fam, rid) FROM ({}) ORDER BY start, fam, rid",
        parts.join(" UNION ALL ")
    );
    Some(Query { kind: CursorKind::Host, source, sql, what: "host calls (CUDA API, MPI, OS runtime)" })
}

/// OSRT_API also holds start/stop markers of the OS runtime tracer (eventClass 31/32, named
/// `[Unknown]`, on a pseudo-thread 0): they are not calls.
pub fn osrt_filter(schema: &Schema) -> String {
    if schema.has_column("OSRT_API", "eventClass") {
        "AND (eventClass IS NULL OR eventClass NOT IN (31, 32))".to_owned()
    } else {
        String::new()
    }
}

const WHAT: &str = "host calls";

pub fn decode(row: &Row, cx: &mut SourceCx, names: &mut Names) -> Result<Option<Record>> {
    let g = |i: usize, cx: &SourceCx| int(row, i, cx, WHAT);
    let fam = g(0, cx)?.unwrap_or(FAM_CUDA);
    let table = match fam {
        FAM_CUDA => Family::CudaApi.table(),
        FAM_MPI_P2P => "MPI_P2P_EVENTS",
        FAM_MPI_COLL => "MPI_COLLECTIVES_EVENTS",
        FAM_MPI_WAIT => "MPI_START_WAIT_EVENTS",
        FAM_MPI_OTHER => "MPI_OTHER_EVENTS",
        FAM_OSRT => "OSRT_API",
        _ => "NVTX_EVENTS",
    };
    let Some(start) = g(1, cx)? else { return Ok(None) };
    let (start, end) = cx.interval(table, start, g(2, cx)?);
    let Some(gtid) = g(3, cx)? else { return Ok(None) };
    let thread = cx.thread(table, gtid)?;
    let next_on_thread = g(15, cx)?.map(|n| cx.time(n));
    let name = match (text(row, 5, cx, WHAT)?, g(4, cx)?) {
        (Some(t), _) => names.intern(&t),
        (None, Some(id)) if fam == FAM_CUDA => cx.strings.name_with(id, names, |s| strip_api_version(s).to_owned())?,
        (None, Some(id)) => cx.strings.name(id, names)?,
        (None, None) => names.intern("<unnamed call>"),
    };
    let (activity, kind) = match fam {
        FAM_CUDA => {
            let activity = *cx.activity_of.entry(name).or_insert_with(|| cuda_call_activity(names.get(name)));
            let layer = if g(7, cx)? == Some(EVENT_CLASS_DRIVER) { ApiLayer::Driver } else { ApiLayer::Runtime };
            (activity, HostCallKind::Cuda(CudaCall { name, correlation_id: u64_or_0(g(6, cx)?), layer }))
        }
        FAM_OSRT => (os_call_activity(names.get(name)), HostCallKind::Os(OsCall { name })),
        _ => {
            let class = match fam {
                FAM_MPI_P2P => MpiClass::PointToPoint,
                FAM_MPI_COLL => MpiClass::Collective,
                FAM_MPI_WAIT => MpiClass::StartWait,
                _ => MpiClass::Other,
            };
            let bytes = |v: Option<i64>| v.and_then(|x| u64::try_from(x).ok());
            let size = bytes(g(8, cx)?);
            let call = MpiCall {
                name,
                class,
                bytes_sent: size,
                bytes_received: if class == MpiClass::Collective { bytes(g(9, cx)?) } else { None },
                peer: g(11, cx)?,
                tag: g(10, cx)?,
                root: g(12, cx)?,
                communicator: g(13, cx)?,
                requests: g(14, cx)?.and_then(|r| u32::try_from(r).ok()).unwrap_or(1),
            };
            (mpi_activity(names.get(name), class), HostCallKind::Mpi(call))
        }
    };
    Ok(Some(Record::Host(HostCall { thread, start, end, next_on_thread, activity, kind })))
}
