-- PERF_EVENT_CPU_RAW_EVENT: no real export available to us has this table, so the statement is copied from NVIDIA's
-- Nsight Systems User Guide, "SQLite Schema Reference", as reproduced in chenbobby/cuda_lab
-- nsys_go/events/schema.sql @8349ae4, with the page's one-space block indent removed (the layout nsys
-- writes to sqlite_master). Columns as documented, none invented.
-- Newer nsys writes the same samples to PERF_EVENT_SOC_OR_CPU_RAW_EVENT, the table nsys2prv 0.6
-- reads (start, end, componentId, eventId, count); the converter reads either.
CREATE TABLE PERF_EVENT_CPU_RAW_EVENT (
    -- Sampled CPU Performance Counters.

    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER   NOT NULL,                    -- Event end timestamp (ns).
    vmId                        INTEGER,                               -- VM ID.
    componentId                 INTEGER,                               -- REFERENCES TARGET_INFO_COMPONENT(componentId)
    eventId                     INTEGER,                               -- REFERENCES TARGET_INFO_PERF_METRIC(id)
    count                       INTEGER                                -- Counter data value
);
