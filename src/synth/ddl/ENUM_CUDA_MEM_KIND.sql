-- ENUM_CUDA_MEM_KIND: CREATE statement copied verbatim from sqlite_master.sql of a real export,
-- ../shared/traces/mfu_2gpu_before.sqlite (GindaChen/nsys-ai tests/fixtures/mfu_2gpu_before.sqlite @387e5a5d, MIT),
-- written by nsys 2026.2.1.210, export schema 3.25.0.
-- Rows: all 8 rows of that table, verbatim and in its order (nsys writes every ENUM table).
CREATE TABLE ENUM_CUDA_MEM_KIND (
    -- CUDA memory kind labels

    id                          INTEGER   NOT NULL   PRIMARY KEY,      -- Enum numerical value.
    name                        TEXT,                                  -- Enum symbol name.
    label                       TEXT                                   -- Enum human name.
);
INSERT INTO ENUM_CUDA_MEM_KIND VALUES (0, 'CUDA_MEMOPR_MEMORY_KIND_PAGEABLE', 'Pageable');
INSERT INTO ENUM_CUDA_MEM_KIND VALUES (1, 'CUDA_MEMOPR_MEMORY_KIND_PINNED', 'Pinned');
INSERT INTO ENUM_CUDA_MEM_KIND VALUES (2, 'CUDA_MEMOPR_MEMORY_KIND_DEVICE', 'Device');
INSERT INTO ENUM_CUDA_MEM_KIND VALUES (3, 'CUDA_MEMOPR_MEMORY_KIND_ARRAY', 'Array');
INSERT INTO ENUM_CUDA_MEM_KIND VALUES (4, 'CUDA_MEMOPR_MEMORY_KIND_MANAGED', 'Managed');
INSERT INTO ENUM_CUDA_MEM_KIND VALUES (5, 'CUDA_MEMOPR_MEMORY_KIND_DEVICE_STATIC', 'Device Static');
INSERT INTO ENUM_CUDA_MEM_KIND VALUES (6, 'CUDA_MEMOPR_MEMORY_KIND_MANAGED_STATIC', 'Managed Static');
INSERT INTO ENUM_CUDA_MEM_KIND VALUES (7, 'CUDA_MEMOPR_MEMORY_KIND_UNKNOWN', 'Unknown');
