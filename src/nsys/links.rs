//! Which host call caused which GPU operation: the CUDA API call and the kernel/memcpy/memset share
//! a correlation id within a process. Each link is delivered at its send time (the call's start).
//!
//! Two readers give the same links in the same order (by call start, call rowid, then operation
//! start, family, table, rowid):
//! * SQL: a join on the correlation id ordered by the call's start (SQLite builds a temporary
//!   index and sorts);
//! * [`LinkJoin`]: a merge join without sorting. CUPTI hands out a process's correlation ids in
//!   call order, so along each thread the calls (in time order) take increasing ids; the survey
//!   checks it, and where it does not hold the SQL reader is used. Each process's operations are
//!   read in correlation-id order (per-stream runs, merged). Operations met before their call (calls of another thread that come later in time) wait
//!   in a small map; those below every correlation id still to come have no call and are dropped,
//!   as the join drops them.
//!
//! The merge join takes its calls from one of two places: the host calls' reader, which reads
//! the CUDA API table anyway ([`FedLinks`], where its survey found the ids in order), or a
//! reader of its own ([`LinkJoin`], which reads the table a second time).

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use super::context::{grown_slot, int, u32_or_0, u64_or_0, SourceCx};
use super::ids::process_key;
use super::query::{CursorKind, Query};
use super::Schema;
use crate::engine::partitioned::{Aux, AuxRule, Member, NextRow, PartitionedRows, Spec, Survey};
use crate::engine::readers::{Read, Readers, RowSink, Rows};
use crate::engine::row::Fields;
use crate::engine::select::{Expr, Select, Val};
use crate::engine::Input;
use crate::error::{Error, Result};
use crate::model::{Link, LinkKind, Record, ThreadId};
use crate::options::Family;

/// The GPU tables that links point to: (link family: 0 launch, 1–2 memory; family).
const TARGETS: [(i64, Family); 4] = [
    (0, Family::Kernel),
    (1, Family::Memcpy),
    (2, Family::Memset),
    (0, Family::Graphs),
];

/// One member per GPU table: `tbl` (its index in [`TARGETS`]) and `rid` break ties.
fn gpu_parts(schema: &Schema, families: &BTreeSet<Family>) -> Vec<(usize, Select)> {
    TARGETS
        .iter()
        .enumerate()
        .filter(|(_, (_, f))| families.contains(f))
        .map(|(tbl, (fam, f))| {
            let t = f.table();
            let bytes = if *fam == 0 {
                Val::Null
            } else {
                schema.column_or_null(t, "bytes")
            };
            let select = Select::new(t)
                .output("fam", Val::Int(*fam))
                .output("tbl", Val::Int(tbl as i64))
                .output("rid", Val::Rowid)
                .output("start", Val::col("start"))
                .output("globalPid", Val::col("globalPid"))
                .output("deviceId", Val::col("deviceId"))
                .output("ctx", schema.column_or_null(t, "contextId"))
                .output("streamId", Val::col("streamId"))
                .output("correlationId", Val::col("correlationId"))
                .output("bytes", bytes)
                .not_null("start")
                .not_null("correlationId");
            (tbl, select)
        })
        .collect()
}

/// Whether these families have links: CUDA API calls and operations they cause.
pub fn wanted(families: &BTreeSet<Family>) -> bool {
    families.contains(&Family::CudaApi) && TARGETS.iter().any(|(_, f)| families.contains(f))
}

pub fn query(schema: &Schema, families: &BTreeSet<Family>, source: usize) -> Option<Query> {
    if !wanted(families) {
        return None;
    }
    let parts = gpu_parts(schema, families);
    let union: Vec<String> = parts.iter().map(|(_, select)| select.sql()).collect();
    let sql = format!(
        "SELECT r.start, r.globalTid, g.start, g.globalPid, g.deviceId, COALESCE(g.ctx, 0), g.streamId, g.bytes, g.fam \
         FROM ({}) g JOIN {api} r ON r.correlationId = g.correlationId AND (r.globalTid >> 24) = (g.globalPid >> 24) \
         WHERE r.start IS NOT NULL AND r.globalTid IS NOT NULL ORDER BY r.start, r.rowid, g.start, g.fam, g.tbl, g.rid",
        union.join(" UNION ALL "),
        api = Family::CudaApi.table(),
    );
    let api = Spec {
        order: Expr::out("start"),
        aux: Some(Aux {
            column: Expr::out("correlationId"),
            rule: AuxRule::Decline,
        }),
        what: WHAT,
        members: vec![Member {
            fam: 0,
            select: Select::new(Family::CudaApi.table())
                .output("rid", Val::Rowid)
                .output("start", Val::col("start"))
                .output("globalTid", Val::col("globalTid"))
                .output("correlationId", Val::col("correlationId"))
                .not_null("start")
                .not_null("globalTid")
                .not_null("correlationId"),
            present: vec![true],
        }],
        partition: vec![Expr::out("globalTid")],
        columns: vec![Expr::out("globalTid")],
    };
    let gpu = Spec {
        order: Expr::out("correlationId"),
        aux: None,
        what: WHAT,
        members: parts
            .into_iter()
            .map(|(tbl, select)| Member {
                fam: tbl as i64,
                select,
                present: vec![true; 4],
            })
            .collect(),
        partition: vec![
            Expr::out("globalPid"),
            Expr::out("deviceId"),
            Expr::Coalesce("ctx".into(), 0),
            Expr::out("streamId"),
        ],
        columns: ["start", "bytes", "fam", "tbl"].map(Expr::out).to_vec(),
    };
    Some(Query {
        kind: CursorKind::Link,
        source,
        sql,
        what: WHAT,
        partitioned: Some(super::query::Partitioned::Links { api, gpu }),
    })
}

const WHAT: &str = "API-to-GPU correlations";

/// A link from its parts (raw times and ids); `None` when either end is not a known object.
#[allow(clippy::too_many_arguments)]
fn link(
    cx: &SourceCx,
    send: i64,
    gtid: i64,
    recv: i64,
    gpid: i64,
    stream: [Option<i64>; 3],
    bytes: Option<i64>,
    fam: Option<i64>,
) -> Option<Record> {
    let (Some(to), Some(&from)) = (stream_object(cx, gpid, stream), cx.threads.get(&gtid)) else {
        return None;
    };
    Some(link_between(cx, (from, send), (to, recv), bytes, fam))
}

/// The object of the stream (globalPid, then deviceId, context and streamId), if discovery
/// found it.
fn stream_object(cx: &SourceCx, gpid: i64, stream: [Option<i64>; 3]) -> Option<ThreadId> {
    let key = (
        process_key(gpid),
        u32_or_0(stream[0]),
        u32_or_0(stream[1]),
        u32_or_0(stream[2]),
    );
    cx.streams.get(&key).map(|&(to, _)| to)
}

/// The link record from a thread's call (its object, raw start) to a stream's operation (its
/// object, raw start) of link family `fam` (0: a launch).
fn link_between(
    cx: &SourceCx,
    (from, send): (ThreadId, i64),
    (to, recv): (ThreadId, i64),
    bytes: Option<i64>,
    fam: Option<i64>,
) -> Record {
    let kind = if fam == Some(0) {
        LinkKind::Launch
    } else {
        LinkKind::Memory
    };
    Record::Link(Link {
        from,
        send: cx.time(send),
        to,
        recv: cx.time(recv),
        bytes: u64_or_0(bytes),
        kind,
    })
}

pub fn decode<R: Fields + ?Sized>(row: &R, cx: &mut SourceCx) -> Result<Option<Record>> {
    let g = |i: usize, cx: &SourceCx| int(row, i, cx, WHAT);
    let (Some(send), Some(gtid), Some(recv), Some(gpid)) =
        (g(0, cx)?, g(1, cx)?, g(2, cx)?, g(3, cx)?)
    else {
        return Ok(None);
    };
    Ok(link(
        cx,
        send,
        gtid,
        recv,
        gpid,
        [g(4, cx)?, g(5, cx)?, g(6, cx)?],
        g(7, cx)?,
        g(8, cx)?,
    ))
}

/// A GPU operation as the join needs it.
struct Op {
    corr: i64,
    start: i64,
    fam: i64,
    tbl: i64,
    rid: i64,
    /// Its resource (stream) in the process's reader: [`ProcessOps::stream_of`].
    partition: usize,
    bytes: Option<i64>,
}

/// The GPU side of one process: its streams merged in correlation id order.
struct ProcessOps<'c> {
    rows: Rows<'c>,
    /// The next operation, read past the correlation ids joined so far.
    ahead: Option<Op>,
    /// Operations whose call has not come yet, by correlation id.
    waiting: BTreeMap<i64, Vec<Op>>,
    /// Per resource of `rows`, its stream's object once looked up (`Some(None)`: not a stream
    /// discovery found): a lookup by key per link cost more.
    streams: Vec<Option<Option<ThreadId>>>,
}

impl ProcessOps<'_> {
    fn next_op(&mut self, cx: &SourceCx) -> Result<Option<Op>> {
        self.rows.next_with(&mut OpSink(cx))?.transpose()
    }

    /// The stream object of resource `partition` (its key: globalPid, deviceId, context,
    /// streamId), looked up once.
    fn stream_of(&mut self, partition: usize, cx: &SourceCx) -> Option<ThreadId> {
        *grown_slot(&mut self.streams, partition).get_or_insert_with(|| {
            let k = self.rows.keys()[partition];
            stream_object(cx, k[0].unwrap_or(0), [k[1], k[2], k[3]])
        })
    }
}

/// Reads a GPU operation from a row of runs in correlation-id order.
struct OpSink<'a, 'c>(&'a SourceCx<'c>);

impl RowSink for OpSink<'_, '_> {
    type Out = Result<Op>;

    fn row<R: Fields + ?Sized>(&mut self, row: &R, next: Option<&NextRow>) -> Result<Op> {
        let n = next.expect("operations are read in runs");
        let g = |i: usize| int(row, i, self.0, WHAT);
        Ok(Op {
            corr: n.start,
            start: g(0)?.unwrap_or(0),
            fam: g(2)?.unwrap_or(0),
            tbl: g(3)?.unwrap_or(0),
            rid: n.rid,
            partition: n.partition,
            bytes: g(1)?,
        })
    }
}

/// A CUDA call as the join needs it: its start, thread, correlation id, and the smallest
/// correlation id its process's calls still to come may have (`None`: no call comes).
#[derive(Clone, Copy, Debug)]
pub struct Call {
    start: i64,
    gtid: i64,
    corr: i64,
    floor: Option<i64>,
}

/// The calls' side of a join: which threads are a process's, so that the floor of its calls
/// still to come can be asked of the calls' reader.
struct CallSide {
    /// Per process with GPU operations (globalTid >> 24): the partitions (threads) of its calls.
    threads_of: BTreeMap<i64, Vec<usize>>,
}

impl CallSide {
    /// The threads of `keys` (a calls' reader's resources: `globalTid` first) in processes that
    /// have operations.
    fn new(keys: &[crate::engine::partitioned::Key], ops: &Operations) -> CallSide {
        CallSide::with(keys, |process| ops.by_process.contains_key(&process))
    }

    /// [`new`](Self::new), the processes with operations told by `has_ops`.
    fn with(keys: &[crate::engine::partitioned::Key], has_ops: impl Fn(i64) -> bool) -> CallSide {
        let mut threads_of: BTreeMap<i64, Vec<usize>> = BTreeMap::new();
        for (p, key) in keys.iter().enumerate() {
            if let Some(gtid) = key[0] {
                if has_ops(gtid >> 24) {
                    threads_of.entry(gtid >> 24).or_default().push(p);
                }
            }
        }
        CallSide { threads_of }
    }

    /// The call `rows` just handed out (`None` for a row without correlation id, or on a
    /// process without operations): its floor is read now, before `rows` moves on.
    fn call(
        &self,
        rows: &mut PartitionedRows,
        start: i64,
        partition: usize,
        corr: Option<i64>,
    ) -> Option<Call> {
        let (Some(corr), Some(gtid)) = (corr, rows.keys()[partition][0]) else {
            return None;
        };
        let threads = self.threads_of.get(&(gtid >> 24))?;
        // Every call of this process still to come has a correlation id >= floor.
        let mut floor: Option<i64> = None;
        for &t in threads {
            if let Some(f) = rows.aux_floor(t) {
                floor = Some(floor.map_or(f, |m| m.min(f)));
            }
        }
        Some(Call {
            start,
            gtid,
            corr,
            floor,
        })
    }
}

/// The operations' side of a join: per process, its GPU operations in correlation id order.
pub struct Operations<'c> {
    /// Per process (globalPid >> 24).
    by_process: BTreeMap<i64, ProcessOps<'c>>,
    /// The operations of the call being joined (kept: most calls have one or none, and a
    /// vector of their own was an allocation per launch).
    matched: Vec<Op>,
}

/// Makes the reader of one process's operations from `gpu`'s spec and that process's runs.
pub type OpsReader<'m, 'c> = dyn FnMut(&Spec, Survey) -> rusqlite::Result<Rows<'c>> + 'm;

/// The process of an operations' resource key (globalPid first) as calls name it
/// (`globalTid >> 24`): what [`Operations`] reads per process, and so which calls a tap takes.
fn ops_process(key: &crate::engine::partitioned::Key) -> Option<i64> {
    key[0].map(|gpid| gpid >> 24)
}

impl<'c> Operations<'c> {
    /// The operations of `gpu`'s survey, each process's read by a reader `read` makes.
    pub fn new(
        gpu: &Spec,
        ops: Survey,
        read: &mut OpsReader<'_, 'c>,
    ) -> rusqlite::Result<Operations<'c>> {
        let mut by_process = BTreeMap::new();
        for (pk, s) in ops.split_by(ops_process) {
            let Some(pk) = pk else { continue };
            let ops = ProcessOps {
                rows: read(gpu, s)?,
                ahead: None,
                waiting: BTreeMap::new(),
                streams: Vec::new(),
            };
            by_process.insert(pk, ops);
        }
        Ok(Operations {
            by_process,
            matched: Vec::new(),
        })
    }

    /// Appends the links of `call` (its operations in order) to `out`. Calls come in the
    /// order of their start (then rowid).
    fn links_of(&mut self, call: Call, cx: &SourceCx, out: &mut VecDeque<Record>) -> Result<()> {
        let Some(p) = self.by_process.get_mut(&(call.gtid >> 24)) else {
            return Ok(());
        };
        let (corr, floor) = (call.corr, call.floor);
        let matched = &mut self.matched;
        matched.clear();
        if !p.waiting.is_empty() {
            matched.extend(p.waiting.remove(&corr).into_iter().flatten());
        }
        loop {
            if p.ahead.is_none() {
                p.ahead = p.next_op(cx)?;
            }
            // Looked at in place: most calls (all but launches and copies) have no operation,
            // and the one read ahead stays for a later call.
            match &p.ahead {
                Some(op) if op.corr <= corr => {}
                _ => break,
            }
            let op = p.ahead.take().expect("looked at above");
            if op.corr == corr {
                matched.push(op);
            } else if floor.is_some_and(|f| op.corr >= f) {
                p.waiting.entry(op.corr).or_default().push(op);
            }
            // else: no call of this process has that id any more: an operation without call.
        }
        // Waiting operations below the floor will never find their call.
        if !p.waiting.is_empty() {
            p.waiting = match floor {
                Some(f) => p.waiting.split_off(&f),
                None => BTreeMap::new(),
            };
        }
        if matched.is_empty() {
            return Ok(());
        }
        matched.sort_by_key(|o| (o.start, o.fam, o.tbl, o.rid));
        // As `link` makes them: none where the thread or the stream is not a known object.
        let from = cx.threads.get(&call.gtid).copied();
        for op in matched.drain(..) {
            let (Some(from), Some(to)) = (from, p.stream_of(op.partition, cx)) else {
                continue;
            };
            out.push_back(link_between(
                cx,
                (from, call.start),
                (to, op.start),
                op.bytes,
                Some(op.fam),
            ));
        }
        Ok(())
    }
}

/// The sort-free link reader (see the module comment), reading the calls itself: a
/// [`FedLinks`] fed by a reader of its own.
pub struct LinkJoin<'c> {
    calls: Rows<'c>,
    tap: CallTap,
    links: FedLinks<'c>,
}

impl<'c> LinkJoin<'c> {
    /// The join of the CUDA calls `calls` (runs whose aux floors are read: correlation ids)
    /// with the operations `ops`.
    pub fn new(calls: Rows<'c>, ops: Operations<'c>) -> LinkJoin<'c> {
        let (links, tap) = FedLinks::new(ops, calls.keys());
        LinkJoin { calls, tap, links }
    }

    /// The next link, or `None` at the end.
    pub fn next(&mut self, cx: &SourceCx) -> Result<Option<Record>> {
        loop {
            if let Some(r) = self.links.next_link() {
                return Ok(Some(r));
            }
            if self.calls.next_with(&mut self.tap)?.is_none() {
                return Ok(None);
            }
            for call in self.tap.drain() {
                self.links.take(call, cx)?;
            }
        }
    }
}

/// The link join fed by the host calls' reader (whose rows carry the CUDA calls' correlation
/// ids as their aux column): the CUDA API table is then read once, not a second time for the
/// links. The host cursor hands each call it reads to [`CallTap`]; the reader passes them on
/// to [`FedLinks::take`] and its links become a cursor of their own.
///
/// Why the order is the [`LinkJoin`]'s: calls come in the host reader's order, (start, family,
/// rowid), which for CUDA calls is (start, rowid) as the join's; and a link goes out at its
/// call's start, which is never after the host cursor's next record. The merge ranks host calls
/// before links at one time, so when a link is due every call up to its time has been read.
pub struct FedLinks<'c> {
    ops: Operations<'c>,
    out: VecDeque<Record>,
}

/// What the host cursor keeps of the calls it reads for [`FedLinks`].
pub struct CallTap {
    side: CallSide,
    calls: Vec<Call>,
}

impl CallTap {
    /// The calls taken since the last time.
    pub fn drain(&mut self) -> std::vec::Drain<'_, Call> {
        self.calls.drain(..)
    }
}

/// Takes every row the calls' reader hands out, decoded or not (the join sees every call, as
/// when it read the table itself); its values are not needed.
impl RowSink for CallTap {
    type Out = ();

    fn row<R: Fields + ?Sized>(&mut self, _: &R, _: Option<&NextRow>) {}

    fn placed(&mut self, runs: &mut PartitionedRows, next: &NextRow) {
        if let Some(call) = self.side.call(runs, next.start, next.partition, next.aux) {
            self.calls.push(call);
        }
    }
}

impl<'c> FedLinks<'c> {
    /// The join of the operations `ops` with the calls of the host reader whose resources are
    /// `host_keys`; the tap goes to the host cursor.
    pub fn new(
        ops: Operations<'c>,
        host_keys: &[crate::engine::partitioned::Key],
    ) -> (FedLinks<'c>, CallTap) {
        let tap = CallTap {
            side: CallSide::new(host_keys, &ops),
            calls: Vec::new(),
        };
        (
            FedLinks {
                ops,
                out: VecDeque::new(),
            },
            tap,
        )
    }

    /// The join of the operations of `gpu`'s runs `ops` in `input`, read on this thread, with
    /// calls a [`CallTap::for_sinks_thread`] takes elsewhere; `input` is one of `inputs` read
    /// together.
    pub fn on_sinks_thread(
        input: Input<'c>,
        gpu: &Spec,
        ops: Survey,
        page_reader: bool,
        inputs: usize,
    ) -> Result<FedLinks<'c>> {
        let mut readers = Readers::among(vec![input], page_reader, 0, inputs);
        let ops = Operations::new(gpu, ops, &mut |spec, survey| {
            readers.open(0, Read::Runs(spec, survey, false))
        })
        .map_err(|e| Error::read(input.label, WHAT, e))?;
        Ok(FedLinks {
            ops,
            out: VecDeque::new(),
        })
    }

    /// Joins a call the host reader read (calls in its order).
    pub fn take(&mut self, call: Call, cx: &SourceCx) -> Result<()> {
        self.ops.links_of(call, cx, &mut self.out)
    }

    /// The next link of the calls taken so far.
    pub fn next_link(&mut self) -> Option<Record> {
        self.out.pop_front()
    }

    /// The link [`next_link`](Self::next_link) gives next, left in place.
    pub fn peek_link(&self) -> Option<&Record> {
        self.out.front()
    }
}

impl CallTap {
    /// The tap of a host reader whose resources are `host_keys`, for a join made elsewhere
    /// (the sinks' thread: pipeline/sinks_links.rs) over the operations `ops` surveyed: the
    /// calls it takes are those [`FedLinks::new`]'s tap would take.
    pub fn for_sinks_thread(
        host_keys: &[crate::engine::partitioned::Key],
        ops: &Survey,
    ) -> CallTap {
        // The processes `Operations::new` makes readers of: those of the operations' keys.
        let processes: BTreeSet<i64> = ops.keys().iter().filter_map(ops_process).collect();
        CallTap {
            side: CallSide::with(host_keys, |process| processes.contains(&process)),
            calls: Vec::new(),
        }
    }
}
