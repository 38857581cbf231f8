-- CUPTI_ACTIVITY_KIND_GRAPH_TRACE: no real export available to us has this table (see ../shared/docs/test-data.md), so the
-- statement is copied from NVIDIA's Nsight Systems User Guide, "SQLite Schema Reference", as reproduced in
-- chenbobby/cuda_lab nsys_go/schema.sql @63b63f828114acbd268bda897fb290d4f462375e (a pre-2026.1 page:
-- its TARGET_INFO_SESSION_START_TIME lacks systemClockNs), with the page's one-space block indent removed,
-- which gives the layout nsys writes to sqlite_master. Columns as documented, none invented.
-- The 2026.4 (schema 3.28.1) page gives the same statement; nsys2prv 0.5.8 reads these columns.
CREATE TABLE CUPTI_ACTIVITY_KIND_GRAPH_TRACE (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER   NOT NULL,                    -- Event end timestamp (ns).
    deviceId                    INTEGER   NOT NULL,                    -- Device ID.
    contextId                   INTEGER   NOT NULL,                    -- Context ID.
    greenContextId              INTEGER,                               -- Green context ID.
    streamId                    INTEGER   NOT NULL,                    -- Stream ID.
    correlationId               INTEGER,                               -- REFERENCES CUPTI_ACTIVITY_KIND_RUNTIME(correlationId)
    globalPid                   INTEGER,                               -- Serialized GlobalId.
    graphId                     INTEGER   NOT NULL,                    -- REFERENCES CUDA_GRAPH_EVENTS(graphId)
    graphExecId                 INTEGER   NOT NULL                     -- REFERENCES CUDA_GRAPH_EVENTS(graphExecId)
);
