-- SCHED_EVENTS: CREATE statement copied verbatim from sqlite_master.sql of a real export,
-- ../shared/traces/jacc_cg_trace.sqlite (D-W-Chiang/JACC.jl cg_trace.sqlite @a6fdda42, MIT),
-- written by nsys 2026.2.1.210, export schema 3.25.0. Written only by the scenarios that need
-- thread scheduling (synth/ddl.rs EXTRA_TABLES), so the other scenarios keep their bytes.
CREATE TABLE SCHED_EVENTS (
    -- Thread scheduling events.

    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    cpu                         INTEGER   NOT NULL,                    -- ID of CPU this thread was scheduled in or out.
    isSchedIn                   INTEGER   NOT NULL,                    -- 0 if thread was scheduled out, non-zero otherwise.
    globalTid                   INTEGER,                               -- Serialized GlobalId.
    threadState                 INTEGER,                               -- REFERENCES ENUM_SAMPLING_THREAD_STATE(id)
    threadBlock                 INTEGER                                -- REFERENCES ENUM_SCHEDULING_THREAD_BLOCK(id)
);
