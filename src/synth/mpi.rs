//! MPI calls as nsys ≥ 2023 records them for one rank: MPI_P2P_EVENTS, MPI_COLLECTIVES_EVENTS,
//! MPI_OTHER_EVENTS (`MPI_Init`, `MPI_Finalize`), MPI_RANKS and the world's MPI_COMMUNICATORS row,
//! the function named by `textId` (StringIds), rows filled as in the real Open MPI captures of
//! ../shared/traces/generated/mpi4 (blocking calls: no request handle; an allreduce: no root).

use super::builder::{ExportBuilder, Thread};
use super::write::{insert, int, opt};
use crate::error::Result;

/// `commHandle` of MPI_COMM_WORLD: Open MPI's handle is the address of its communicator object
/// (the value of the real captures).
pub const COMM_WORLD: i64 = 93_978_125_494_176;

/// A point-to-point call (`MPI_Send`, `MPI_Recv`, …): `remote` is the peer's rank.
#[derive(Clone, Debug)]
pub struct P2pRow {
    pub start: i64,
    pub end: i64,
    pub global_tid: i64,
    pub name_id: i64,
    pub tag: i64,
    pub remote: i64,
    pub size: i64,
}

/// A collective call; `root` is absent for rootless ones (`MPI_Allreduce`).
#[derive(Clone, Debug)]
pub struct CollectiveRow {
    pub start: i64,
    pub end: i64,
    pub global_tid: i64,
    pub name_id: i64,
    pub root: Option<i64>,
    pub size: i64,
    pub recv_size: i64,
}

/// A call without parameters (`MPI_Init`, `MPI_Finalize`, `MPI_Barrier`'s absent twin).
#[derive(Clone, Debug)]
pub struct OtherRow {
    pub start: i64,
    pub end: i64,
    pub global_tid: i64,
    pub name_id: i64,
}

/// The MPI rows of one rank's export.
#[derive(Clone, Debug, Default)]
pub struct MpiRows {
    pub p2p: Vec<P2pRow>,
    pub collectives: Vec<CollectiveRow>,
    pub other: Vec<OtherRow>,
    /// (globalTid, rank) of MPI_RANKS.
    pub ranks: Vec<(i64, i64)>,
    /// The world communicator as this rank created it: (rank, timestamp, size).
    pub world: Option<(i64, i64, i64)>,
}

impl MpiRows {
    pub fn is_empty(&self) -> bool {
        self.p2p.is_empty() && self.collectives.is_empty() && self.other.is_empty()
    }
}

impl ExportBuilder {
    /// MPI_RANKS' row for `t` and the world communicator of `size` ranks, created at `at`.
    pub fn mpi_rank(&mut self, t: Thread, rank: u32, size: u32, at: i64) {
        let m = &mut self.rows.mpi;
        m.ranks.push((t.global_tid(), i64::from(rank)));
        m.world = Some((i64::from(rank), at, i64::from(size)));
    }

    /// A point-to-point call on the world communicator.
    #[allow(clippy::too_many_arguments)]
    pub fn mpi_p2p(
        &mut self,
        t: Thread,
        start: i64,
        end: i64,
        name: &str,
        peer: u32,
        tag: i64,
        size: i64,
    ) {
        let name_id = self.string(name);
        self.rows.mpi.p2p.push(P2pRow {
            start,
            end,
            global_tid: t.global_tid(),
            name_id,
            tag,
            remote: i64::from(peer),
            size,
        });
    }

    /// A collective on the world communicator.
    #[allow(clippy::too_many_arguments)]
    pub fn mpi_collective(
        &mut self,
        t: Thread,
        start: i64,
        end: i64,
        name: &str,
        root: Option<u32>,
        size: i64,
        recv_size: i64,
    ) {
        let name_id = self.string(name);
        self.rows.mpi.collectives.push(CollectiveRow {
            start,
            end,
            global_tid: t.global_tid(),
            name_id,
            root: root.map(i64::from),
            size,
            recv_size,
        });
    }

    /// A call of MPI_OTHER_EVENTS.
    pub fn mpi_other(&mut self, t: Thread, start: i64, end: i64, name: &str) {
        let name_id = self.string(name);
        self.rows.mpi.other.push(OtherRow {
            start,
            end,
            global_tid: t.global_tid(),
            name_id,
        });
    }
}

/// The MPI tables the export needs (created only with rows, as the other event tables).
pub(super) fn tables(m: &MpiRows) -> Vec<&'static str> {
    let mut t = Vec::new();
    if !m.p2p.is_empty() {
        t.push("MPI_P2P_EVENTS");
    }
    if !m.collectives.is_empty() {
        t.push("MPI_COLLECTIVES_EVENTS");
    }
    if !m.other.is_empty() {
        t.push("MPI_OTHER_EVENTS");
    }
    if !m.ranks.is_empty() {
        t.push("MPI_RANKS");
    }
    if m.world.is_some() {
        t.push("MPI_COMMUNICATORS");
    }
    t
}

fn by_start<T: Clone>(v: &[T], key: impl Fn(&T) -> i64) -> Vec<T> {
    let mut v = v.to_vec();
    v.sort_by_key(|x| key(x));
    v
}

pub(super) fn fill(c: &rusqlite::Connection, b: &ExportBuilder) -> Result<()> {
    let m = &b.rows.mpi;
    insert(
        c,
        b,
        "MPI_P2P_EVENTS",
        &[
            "start",
            "end",
            "globalTid",
            "textId",
            "commHandle",
            "tag",
            "remoteRank",
            "size",
        ],
        by_start(&m.p2p, |r| r.start).iter().map(|r| {
            let v = [
                r.start,
                r.end,
                r.global_tid,
                r.name_id,
                COMM_WORLD,
                r.tag,
                r.remote,
                r.size,
            ];
            v.into_iter().map(int).collect()
        }),
    )?;
    insert(
        c,
        b,
        "MPI_COLLECTIVES_EVENTS",
        &[
            "start",
            "end",
            "globalTid",
            "textId",
            "commHandle",
            "rootRank",
            "size",
            "recvSize",
        ],
        by_start(&m.collectives, |r| r.start).iter().map(|r| {
            let v = [r.start, r.end, r.global_tid, r.name_id, COMM_WORLD];
            let mut v: Vec<_> = v.into_iter().map(int).collect();
            v.extend([opt(r.root), int(r.size), int(r.recv_size)]);
            v
        }),
    )?;
    insert(
        c,
        b,
        "MPI_OTHER_EVENTS",
        &["start", "end", "globalTid", "textId"],
        by_start(&m.other, |r| r.start).iter().map(|r| {
            [r.start, r.end, r.global_tid, r.name_id]
                .into_iter()
                .map(int)
                .collect()
        }),
    )?;
    insert(
        c,
        b,
        "MPI_RANKS",
        &["globalTid", "rank"],
        m.ranks.iter().map(|&(t, r)| vec![int(t), int(r)]),
    )?;
    // The real rows leave the group columns and the members NULL.
    insert(
        c,
        b,
        "MPI_COMMUNICATORS",
        &[
            "rank",
            "timestamp",
            "commHandle",
            "parentHandle",
            "localRank",
            "size",
        ],
        m.world.iter().map(|&(rank, at, size)| {
            let v = [rank, at, COMM_WORLD, 0, rank, size];
            v.into_iter().map(int).collect()
        }),
    )
}
