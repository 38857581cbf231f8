-- NET_NIC_METRIC: no real export available to us has this table, so the statement is copied from NVIDIA's
-- Nsight Systems User Guide, "SQLite Schema Reference", as reproduced in chenbobby/cuda_lab
-- nsys_go/events/schema.sql @8349ae4, with the page's one-space block indent removed (the layout nsys
-- writes to sqlite_master). Columns as documented, none invented.
-- Newer exports add a `portId` column; nsys2prv 0.6 reads globalId, start, metricsListId,
-- metricsIdx and value.
CREATE TABLE NET_NIC_METRIC (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER   NOT NULL,                    -- Event end timestamp (ns).
    globalId                    INTEGER   NOT NULL,                    -- Serialized GlobalId.
    metricsListId               INTEGER   NOT NULL,                    -- REFERENCES TARGET_INFO_NETWORK_METRICS(metricsListId)
    metricsIdx                  INTEGER   NOT NULL,                    -- REFERENCES TARGET_INFO_NETWORK_METRICS(metricsIdx)
    value                       INTEGER   NOT NULL                     -- Counter data value
);
