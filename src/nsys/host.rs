//! Calls on host threads, read as one cursor so each knows the start of the next traced call on its
//! thread (SQL `LEAD` over the union, or the partitioned reader's lookahead), which gives the
//! thread's state between calls without buffering: CUDA runtime/driver API
//! (CUPTI_ACTIVITY_KIND_RUNTIME, straight from SQL, no `nsys stats`), MPI (the four MPI_*_EVENTS
//! tables, or the NVTX `MPI` domain of nsys 2022), OS runtime calls (OSRT_API) and OpenACC
//! (CUPTI_ACTIVITY_KIND_OPENACC_*).

use std::collections::{BTreeMap, BTreeSet};

use super::context::{grown_slot, int, text, u64_or_0, SourceCx};
use super::query::{CursorKind, Partitioned, Query};
use super::Schema;
use crate::engine::partitioned::{Aux, AuxRule, Member, Spec};
use crate::engine::row::Fields;
use crate::engine::select::{Cond, Expr, Select, Val};
use crate::error::Result;
use crate::model::classify::{
    acc_activity, cuda_call_activity, mpi_activity, os_call_activity, strip_api_version,
};
use crate::model::{
    AccCall, AccClass, ApiLayer, CudaCall, HostCall, HostCallKind, MpiCall, MpiClass, NameId,
    Names, OsCall, Record,
};
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
const FAM_ACC_DATA: i64 = 7;
const FAM_ACC_LAUNCH: i64 = 8;
const FAM_ACC_OTHER: i64 = 9;

/// Columns of the union after fam, rid, start, end, globalTid; in a row, column `UNION[i]` is at
/// index i + 4 (fam 0, start 1, end 2, globalTid 3) and `LEAD(start)` follows the last one.
const UNION: &[&str] = &[
    "nm", "txt", "corr", "cls", "size", "recvSize", "tag", "peer", "root", "comm", "reqs", "ekind",
    "line", "src", "func", "kname",
];

/// Row index of a union column, at compile time.
macro_rules! at {
    ($col:literal) => {
        const { crate::engine::row::column_index(UNION, $col) + 4 }
    };
}

/// One member of the union: `cols` maps union columns to values of `table` (others NULL), its
/// rows grouped by `group` where given (then `rid` is the group's first rowid).
fn member(
    fam: i64,
    table: &str,
    cols: &[(&str, Val)],
    conds: Vec<Cond>,
    group: Option<&'static str>,
) -> Member {
    let map: BTreeMap<&str, &Val> = cols.iter().map(|(k, v)| (*k, v)).collect();
    let rid = match group {
        None => Val::Rowid,
        Some(_) => Val::Sql("MIN(rowid)"),
    };
    let mut select = Select::new(table)
        .output("fam", Val::Int(fam))
        .output("rid", rid)
        .output("start", Val::col("start"))
        .output("end", Val::col("end"))
        .output("globalTid", Val::col("globalTid"));
    for c in UNION {
        select = select.output(c, map.get(c).map_or(Val::Null, |v| (*v).clone()));
    }
    let mut select = select.not_null("start").not_null("globalTid");
    select.conds.extend(conds);
    select.group_by = group;
    // fam, start, end, globalTid, the union's columns, the lookahead (filled in by the reader).
    let present = [true; 4]
        .into_iter()
        .chain(UNION.iter().map(|c| map.contains_key(c)))
        .chain([false])
        .collect();
    Member {
        fam,
        select,
        present,
    }
}

/// The host calls' cursor of one export, if it has any selected host family;
/// `nvtx_mpi_domains`: the NVTX domains that hold MPI calls (`Discovery::nvtx_mpi_domains`).
pub fn query(
    schema: &Schema,
    nvtx_mpi_domains: &BTreeSet<i64>,
    families: &BTreeSet<Family>,
    source: usize,
) -> Option<Query> {
    let parts = members(schema, nvtx_mpi_domains, families);
    if parts.is_empty() {
        return None;
    }
    let union: Vec<String> = parts.iter().map(|m| m.select.sql()).collect();
    let sql = format!(
        "SELECT fam, start, end, globalTid, {cols}, LEAD(start) OVER (PARTITION BY globalTid ORDER BY start, fam, rid) \
         FROM ({union}) ORDER BY start, fam, rid",
        cols = UNION.join(", "),
        union = union.join(" UNION ALL ")
    );
    // A grouped member (the MPI waits) is read through SQL by the sort-free reader too, its
    // survey declining where it has too many groups (engine/partitioned.rs, GROUPED_FETCHES).
    let partitioned = Partitioned::Rows(Spec {
        order: Expr::out("start"),
        // The CUDA calls' correlation ids, where the link join takes its calls from this
        // reader (links.rs: FedLinks); the other members give NULL.
        aux: super::links::wanted(families).then(|| Aux {
            column: Expr::out("corr"),
            rule: AuxRule::Note,
        }),
        what: WHAT_ALL,
        partition: vec![Expr::out("globalTid")],
        columns: ["fam", "start", "end", "globalTid"]
            .into_iter()
            .chain(UNION.iter().copied())
            .map(Expr::out)
            .chain([Expr::Null])
            .collect(),
        members: parts,
    });
    Some(Query {
        kind: CursorKind::Host,
        source,
        sql,
        what: WHAT_ALL,
        partitioned: Some(partitioned),
    })
}

/// The members of the host calls' union, in the order the SQL path ranks ties (`fam`).
fn members(
    schema: &Schema,
    nvtx_mpi_domains: &BTreeSet<i64>,
    families: &BTreeSet<Family>,
) -> Vec<Member> {
    let c = |t: &str, col: &str| schema.column_or_null(t, col);
    let lit = Val::col;
    let mut parts = Vec::new();
    if families.contains(&Family::CudaApi) {
        let t = Family::CudaApi.table();
        parts.push(member(
            FAM_CUDA,
            t,
            &[
                ("nm", lit("nameId")),
                ("corr", lit("correlationId")),
                ("cls", c(t, "eventClass")),
            ],
            Vec::new(),
            None,
        ));
    }
    if families.contains(&Family::Mpi) {
        parts.extend(mpi_members(schema, nvtx_mpi_domains));
    }
    if families.contains(&Family::Osrt) && schema.has_table("OSRT_API") {
        parts.push(member(
            FAM_OSRT,
            "OSRT_API",
            &[("nm", lit("nameId"))],
            osrt_filter(schema).into_iter().collect(),
            None,
        ));
    }
    if families.contains(&Family::OpenAcc) {
        for (fam, t) in [
            (FAM_ACC_DATA, "CUPTI_ACTIVITY_KIND_OPENACC_DATA"),
            (FAM_ACC_LAUNCH, "CUPTI_ACTIVITY_KIND_OPENACC_LAUNCH"),
            (FAM_ACC_OTHER, "CUPTI_ACTIVITY_KIND_OPENACC_OTHER"),
        ] {
            if schema.has_table(t) {
                let cols = [
                    ("nm", lit("nameId")),
                    ("ekind", c(t, "eventKind")),
                    ("line", c(t, "lineNo")),
                    ("src", c(t, "srcFile")),
                    ("func", c(t, "funcName")),
                    ("size", c(t, "bytes")),
                    ("kname", c(t, "kernelName")),
                ];
                parts.push(member(fam, t, &cols, Vec::new(), None));
            }
        }
    }
    parts
}

/// The MPI calls' members: the four MPI_*_EVENTS tables, and the NVTX `MPI` domain of nsys 2022.
fn mpi_members(schema: &Schema, nvtx_mpi_domains: &BTreeSet<i64>) -> Vec<Member> {
    let c = |t: &str, col: &str| schema.column_or_null(t, col);
    let lit = Val::col;
    let mut parts = Vec::new();
    let t = "MPI_P2P_EVENTS";
    if schema.has_table(t) {
        let cols = [
            ("nm", lit("textId")),
            ("size", c(t, "size")),
            ("tag", c(t, "tag")),
            ("peer", c(t, "remoteRank")),
            ("comm", c(t, "commHandle")),
        ];
        parts.push(member(FAM_MPI_P2P, t, &cols, Vec::new(), None));
    }
    let t = "MPI_COLLECTIVES_EVENTS";
    if schema.has_table(t) {
        let cols = [
            ("nm", lit("textId")),
            ("size", c(t, "size")),
            ("recvSize", c(t, "recvSize")),
            ("root", c(t, "rootRank")),
            ("comm", c(t, "commHandle")),
        ];
        parts.push(member(FAM_MPI_COLL, t, &cols, Vec::new(), None));
    }
    // nsys writes one row per request a wait completed, all with the call's start and end.
    let t = "MPI_START_WAIT_EVENTS";
    if schema.has_table(t) {
        parts.push(member(
            FAM_MPI_WAIT,
            t,
            &[("nm", lit("textId")), ("reqs", Val::Sql("COUNT(*)"))],
            Vec::new(),
            Some("start, end, globalTid, textId"),
        ));
    }
    let t = "MPI_OTHER_EVENTS";
    if schema.has_table(t) {
        parts.push(member(
            FAM_MPI_OTHER,
            t,
            &[("nm", lit("textId"))],
            Vec::new(),
            None,
        ));
    }
    if !nvtx_mpi_domains.is_empty() {
        let t = "NVTX_EVENTS";
        let conds = vec![
            Cond::In("eventType".into(), vec![59, 70]),
            Cond::In(
                "domainId".into(),
                nvtx_mpi_domains.iter().copied().collect(),
            ),
        ];
        parts.push(member(
            FAM_NVTX_MPI,
            t,
            &[("nm", c(t, "textId")), ("txt", lit("text"))],
            conds,
            None,
        ));
    }
    parts
}

/// OSRT_API also holds start/stop markers of the OS runtime tracer (eventClass 31/32, named
/// `[Unknown]`, on a pseudo-thread 0): they are not calls.
pub fn osrt_filter(schema: &Schema) -> Option<Cond> {
    schema
        .has_column("OSRT_API", "eventClass")
        .then(|| Cond::NullOrNotIn("eventClass".into(), vec![31, 32]))
}

const WHAT: &str = "host calls";
const WHAT_ALL: &str = "host calls (CUDA API, MPI, OS runtime, OpenACC)";

fn table_of(fam: i64) -> &'static str {
    match fam {
        FAM_CUDA => Family::CudaApi.table(),
        FAM_MPI_P2P => "MPI_P2P_EVENTS",
        FAM_MPI_COLL => "MPI_COLLECTIVES_EVENTS",
        FAM_MPI_WAIT => "MPI_START_WAIT_EVENTS",
        FAM_MPI_OTHER => "MPI_OTHER_EVENTS",
        FAM_OSRT => "OSRT_API",
        FAM_ACC_DATA => "CUPTI_ACTIVITY_KIND_OPENACC_DATA",
        FAM_ACC_LAUNCH => "CUPTI_ACTIVITY_KIND_OPENACC_LAUNCH",
        FAM_ACC_OTHER => "CUPTI_ACTIVITY_KIND_OPENACC_OTHER",
        _ => "NVTX_EVENTS",
    }
}

pub fn decode<R: Fields + ?Sized>(
    row: &R,
    cx: &mut SourceCx,
    names: &mut Names,
) -> Result<Option<Record>> {
    let g = |i: usize, cx: &SourceCx| int(row, i, cx, WHAT);
    let fam = int(row, 0, cx, WHAT)?.unwrap_or(FAM_CUDA);
    let table = table_of(fam);
    let Some(start) = int(row, 1, cx, WHAT)? else {
        return Ok(None);
    };
    let (start, end) = cx.interval(table, start, int(row, 2, cx, WHAT)?);
    let Some(gtid) = int(row, 3, cx, WHAT)? else {
        return Ok(None);
    };
    let thread = cx.thread(table, gtid)?;
    let next_on_thread = int(row, UNION.len() + 4, cx, WHAT)?.map(|n| cx.time(n));
    let name = match (text(row, at!("txt"), cx, WHAT)?, g(at!("nm"), cx)?) {
        (Some(t), _) => names.intern(&t),
        (None, Some(id)) if fam == FAM_CUDA => cx
            .strings
            .name_with(id, names, |s| strip_api_version(s).to_owned())?,
        (None, Some(id)) => cx.strings.name(id, names)?,
        (None, None) => names.intern("<unnamed call>"),
    };
    let (activity, kind) = match fam {
        FAM_CUDA => {
            let activity = *grown_slot(&mut cx.activity_of, name.0 as usize)
                .get_or_insert_with(|| cuda_call_activity(names.get(name)));
            let layer = if g(at!("cls"), cx)? == Some(EVENT_CLASS_DRIVER) {
                ApiLayer::Driver
            } else {
                ApiLayer::Runtime
            };
            (
                activity,
                HostCallKind::Cuda(CudaCall {
                    name,
                    correlation_id: u64_or_0(g(at!("corr"), cx)?),
                    layer,
                }),
            )
        }
        FAM_OSRT => (
            *grown_slot(&mut cx.os_activity_of, name.0 as usize)
                .get_or_insert_with(|| os_call_activity(names.get(name))),
            HostCallKind::Os(OsCall { name }),
        ),
        FAM_ACC_DATA | FAM_ACC_LAUNCH | FAM_ACC_OTHER => {
            let call = acc_call(row, fam, name, cx, names)?;
            (acc_activity(call.event_kind), HostCallKind::OpenAcc(call))
        }
        _ => {
            let call = mpi_call(row, fam, name, cx)?;
            (
                mpi_activity(names.get(name), call.class),
                HostCallKind::Mpi(call),
            )
        }
    };
    Ok(Some(Record::Host(HostCall {
        thread,
        start,
        end,
        next_on_thread,
        activity,
        kind,
    })))
}

/// The OpenACC call of a row of family `fam`, named `name`.
#[inline]
fn acc_call<R: Fields + ?Sized>(
    row: &R,
    fam: i64,
    name: NameId,
    cx: &mut SourceCx,
    names: &mut Names,
) -> Result<AccCall> {
    let g = |i: usize, cx: &SourceCx| int(row, i, cx, WHAT);
    let class = match fam {
        FAM_ACC_DATA => AccClass::Data,
        FAM_ACC_LAUNCH => AccClass::Launch,
        _ => AccClass::Other,
    };
    let event_kind = g(at!("ekind"), cx)?
        .and_then(|k| u32::try_from(k).ok())
        .unwrap_or(0);
    let file = match g(at!("src"), cx)? {
        Some(id) => cx.strings.text(id)?.unwrap_or_default(),
        None => String::new(),
    };
    let line = g(at!("line"), cx)?.unwrap_or(0);
    // The construct as nsys shows it: where in the source it is.
    let construct = names.intern(&format!(
        "{}@{}:{line}",
        names.get(name),
        if file.is_empty() { "?" } else { &file }
    ));
    let function = match g(at!("func"), cx)? {
        Some(id) => Some(cx.strings.name(id, names)?),
        None => None,
    };
    let kernel = match g(at!("kname"), cx)? {
        Some(id) => Some(cx.strings.name(id, names)?),
        None => None,
    };
    let bytes = g(at!("size"), cx)?.and_then(|b| u64::try_from(b).ok());
    Ok(AccCall {
        class,
        event_kind,
        name,
        construct,
        function,
        bytes,
        kernel,
    })
}

/// The MPI call of a row of family `fam`, named `name`.
#[inline]
fn mpi_call<R: Fields + ?Sized>(row: &R, fam: i64, name: NameId, cx: &SourceCx) -> Result<MpiCall> {
    let g = |i: usize, cx: &SourceCx| int(row, i, cx, WHAT);
    let class = match fam {
        FAM_MPI_P2P => MpiClass::PointToPoint,
        FAM_MPI_COLL => MpiClass::Collective,
        FAM_MPI_WAIT => MpiClass::StartWait,
        _ => MpiClass::Other,
    };
    let bytes = |v: Option<i64>| v.and_then(|x| u64::try_from(x).ok());
    Ok(MpiCall {
        name,
        class,
        bytes_sent: bytes(g(at!("size"), cx)?),
        bytes_received: if class == MpiClass::Collective {
            bytes(g(at!("recvSize"), cx)?)
        } else {
            None
        },
        peer: g(at!("peer"), cx)?,
        tag: g(at!("tag"), cx)?,
        root: g(at!("root"), cx)?,
        communicator: g(at!("comm"), cx)?,
        requests: g(at!("reqs"), cx)?
            .and_then(|r| u32::try_from(r).ok())
            .unwrap_or(1),
    })
}
