-- TARGET_INFO_COMPONENT: no real export available to us has this table, so the statement is copied from NVIDIA's
-- Nsight Systems User Guide, "SQLite Schema Reference", as reproduced in chenbobby/cuda_lab
-- nsys_go/events/schema.sql @8349ae4, with the page's one-space block indent removed (the layout nsys
-- writes to sqlite_master). Columns as documented, none invented.
-- nsys2prv 0.6 reads the parent as `parentId` (newer exports); the converter reads either name.
CREATE TABLE TARGET_INFO_COMPONENT (
    componentId                 INTEGER   NOT NULL,                    -- Component ID value
    name                        TEXT      NOT NULL,                    -- Component name
    instance                    INTEGER   NOT NULL,                    -- Component instance
    parentComponentId           INTEGER   NOT NULL                     -- Parent Component ID value
);
