-- TARGET_INFO_PERF_METRIC: no real export available to us has this table, so the statement is copied from NVIDIA's
-- Nsight Systems User Guide, "SQLite Schema Reference", as reproduced in chenbobby/cuda_lab
-- nsys_go/events/schema.sql @8349ae4, with the page's one-space block indent removed (the layout nsys
-- writes to sqlite_master). Columns as documented, none invented.
-- nsys2prv 0.6 reads id, name, unit and, where present, displayName.
CREATE TABLE TARGET_INFO_PERF_METRIC (
    id                          INTEGER   NOT NULL,                    -- Event or Metric ID value
    name                        TEXT      NOT NULL,                    -- Event or Metric name
    description                 TEXT      NOT NULL,                    -- Event or Metric description
    unit                        TEXT      NOT NULL                     -- Event or Metric measurement unit
);
