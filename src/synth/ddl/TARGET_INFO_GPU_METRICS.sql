-- TARGET_INFO_GPU_METRICS: no real export available to us has this table (see ../shared/docs/test-data.md), so the
-- statement is copied from NVIDIA's Nsight Systems User Guide, "SQLite Schema Reference", as reproduced in
-- chenbobby/cuda_lab nsys_go/schema.sql @63b63f828114acbd268bda897fb290d4f462375e (a pre-2026.1 page:
-- its TARGET_INFO_SESSION_START_TIME lacks systemClockNs), with the page's one-space block indent removed,
-- which gives the layout nsys writes to sqlite_master. Columns as documented, none invented.
-- The 2026.4 (schema 3.28.1) page gives the same statement.
CREATE TABLE TARGET_INFO_GPU_METRICS (
    -- GPU Metrics, metric names and ids.

    typeId                      INTEGER   NOT NULL,                    -- REFERENCES GENERIC_EVENT_TYPES(typeId)
    sourceId                    INTEGER   NOT NULL,                    -- REFERENCES GENERIC_EVENT_SOURCES(sourceId)
    typeName                    TEXT      NOT NULL,                    -- Name of event type.
    metricId                    INTEGER   NOT NULL,                    -- Id of metric in event; not assumed to be stable.
    metricName                  TEXT      NOT NULL                     -- Definitive name of metric.
);
