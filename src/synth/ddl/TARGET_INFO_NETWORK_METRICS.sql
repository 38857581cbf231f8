-- TARGET_INFO_NETWORK_METRICS: no real export available to us has this table, so the statement is copied from NVIDIA's
-- Nsight Systems User Guide, "SQLite Schema Reference", as reproduced in chenbobby/cuda_lab
-- nsys_go/events/schema.sql @8349ae4, with the page's one-space block indent removed (the layout nsys
-- writes to sqlite_master). Columns as documented, none invented.
CREATE TABLE TARGET_INFO_NETWORK_METRICS (
    metricsListId               INTEGER   NOT NULL,                    -- Metric list ID
    metricsIdx                  INTEGER   NOT NULL,                    -- List index of metric
    name                        TEXT      NOT NULL,                    -- Name of metric
    description                 TEXT      NOT NULL,                    -- Description of metric
    unit                        TEXT      NOT NULL                     -- Measurement unit of metric
);
