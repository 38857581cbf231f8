-- GPU_METRICS: no real export available to us has this table (see ../shared/docs/test-data.md), so the
-- statement is copied from NVIDIA's Nsight Systems User Guide, "SQLite Schema Reference", as reproduced in
-- chenbobby/cuda_lab nsys_go/schema.sql @63b63f828114acbd268bda897fb290d4f462375e (a pre-2026.1 page:
-- its TARGET_INFO_SESSION_START_TIME lacks systemClockNs), with the page's one-space block indent removed,
-- which gives the layout nsys writes to sqlite_master. Columns as documented, none invented.
-- Version note: the page for nsys 2026.4 (schema 3.28.1) adds a leading `rawTimestamp INTEGER NOT NULL`
-- column and makes `timestamp` NOT NULL; which of the two shapes schema 3.25.0 writes is unverified.
-- nsys2prv 0.5.8 reads exactly (timestamp, typeId, metricId, value) from this table.
CREATE TABLE GPU_METRICS (
    -- GPU Metrics, events and values.

    timestamp                   INTEGER,                               -- Event timestamp (ns).
    typeId                      INTEGER   NOT NULL,                    -- REFERENCES TARGET_INFO_GPU_METRICS(typeId) and GENERIC_EVENT_TYPES(typeId)
    metricId                    INTEGER   NOT NULL,                    -- REFERENCES TARGET_INFO_GPU_METRICS(metricId)
    value                       INTEGER   NOT NULL                     -- Counter data value
);
