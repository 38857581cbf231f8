-- CUDA_GPU_MEMORY_USAGE_EVENTS: no real export available to us has this table, so the statement is
-- copied from NVIDIA's Nsight Systems User Guide, "SQLite Schema Reference", as reproduced in
-- chenbobby/cuda_lab nsys_go/events/schema.sql @8349ae4, with the page's one-space block indent removed
-- (the layout nsys writes to sqlite_master). Columns as documented, none invented. The same
-- statement is in the schema text of nsys 2024.6.2 (schema 3.16.1) with a `streamId INTEGER` column
-- after `correlationId`; this later page has none, and the converter reads `streamId` where present.
-- nsys2prv 0.6 reads start, globalPid, deviceId, contextId, address, bytes, memKind,
-- memoryOperationType, name, streamId and the memory pool columns from this table.
CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    globalPid                   INTEGER   NOT NULL,                    -- Serialized GlobalId.
    deviceId                    INTEGER   NOT NULL,                    -- Device ID.
    contextId                   INTEGER   NOT NULL,                    -- Context ID.
    address                     INTEGER   NOT NULL,                    -- Virtual address of the allocation/deallocation.
    pc                          INTEGER   NOT NULL,                    -- Program counter of the allocation/deallocation.
    bytes                       INTEGER   NOT NULL,                    -- Number of bytes allocated/deallocated (B).
    memKind                     INTEGER   NOT NULL,                    -- REFERENCES ENUM_CUDA_MEM_KIND(id)
    memoryOperationType         INTEGER   NOT NULL,                    -- REFERENCES ENUM_CUDA_DEV_MEM_EVENT_OPER(id)
    name                        TEXT,                                  -- Variable name, if available.
    correlationId               INTEGER,                               -- REFERENCES CUPTI_ACTIVITY_KIND_RUNTIME(correlationId)
    localMemoryPoolAddress      INTEGER,                               -- Base address of the local memory pool used
    localMemoryPoolReleaseThreshold   INTEGER,                         -- Release threshold of the local memory pool used
    localMemoryPoolSize         INTEGER,                               -- Size of the local memory pool used
    localMemoryPoolUtilizedSize   INTEGER,                             -- Utilized size of the local memory pool used
    importedMemoryPoolAddress   INTEGER,                               -- Base address of the imported memory pool used
    importedMemoryPoolProcessId   INTEGER                              -- Process ID of the imported memory pool used
);
