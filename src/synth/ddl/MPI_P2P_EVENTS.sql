-- MPI_P2P_EVENTS: CREATE statement copied verbatim from sqlite_master.sql of a real export,
-- ../shared/traces/generated/mpi4/rank0.sqlite (our own Open MPI capture, see its README),
-- written by nsys 2023.4.4.54, export schema 3.7.2: no 2026 export we have holds MPI tables.
CREATE TABLE MPI_P2P_EVENTS (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER,                               -- Event end timestamp (ns).
    globalTid                   INTEGER,                               -- Serialized GlobalId.
    textId                      INTEGER,                               -- REFERENCES StringIds(id) -- Registered NVTX domain
    commHandle                  INTEGER,                               -- MPI communicator handle
    tag                         INTEGER,                               -- MPI message tag
    remoteRank                  INTEGER,                               -- MPI remote rank (destination or source)
    size                        INTEGER,                               -- MPI message size in bytes
    requestHandle               INTEGER                                -- MPI request handle
);
