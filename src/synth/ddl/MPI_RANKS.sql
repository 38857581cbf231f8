-- MPI_RANKS: CREATE statement copied verbatim from sqlite_master.sql of a real export,
-- ../shared/traces/generated/mpi4/rank0.sqlite (our own Open MPI capture, see its README),
-- written by nsys 2023.4.4.54, export schema 3.7.2: no 2026 export we have holds MPI tables.
CREATE TABLE MPI_RANKS (
    -- Mapping of global thread IDs (gtid) to MPI ranks

    globalTid                   INTEGER   NOT NULL,                    -- Serialized GlobalId.
    rank                        INTEGER   NOT NULL                     -- MPI rank
);
