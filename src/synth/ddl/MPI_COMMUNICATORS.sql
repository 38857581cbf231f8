-- MPI_COMMUNICATORS: CREATE statement copied verbatim from sqlite_master.sql of a real export,
-- ../shared/traces/generated/mpi4/rank0.sqlite (our own Open MPI capture, see its README),
-- written by nsys 2023.4.4.54, export schema 3.7.2: no 2026 export we have holds MPI tables.
CREATE TABLE MPI_COMMUNICATORS (
    -- Identification of MPI communication groups.

    rank                        INTEGER,                               -- Active MPI rank
    timestamp                   INTEGER,                               -- Time of MPI communicator creation.
    commHandle                  INTEGER,                               -- MPI communicator handle
    parentHandle                INTEGER,                               -- MPI communicator handle
    localRank                   INTEGER,                               -- Local MPI rank in a communicator.
    size                        INTEGER,                               -- MPI communicator size.
    groupRoot                   INTEGER,                               -- Root rank (global) in MPI communicator.
    groupRootUid                INTEGER,                               -- Group root's communicator ID.
    members                     TEXT                                   -- MPI communicator members (index is global rank).
);
