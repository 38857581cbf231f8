-- ENUM_CUDA_FUNC_CACHE_CONFIG: CREATE statement copied verbatim from sqlite_master.sql of a real export,
-- ../shared/traces/mfu_2gpu_before.sqlite (GindaChen/nsys-ai tests/fixtures/mfu_2gpu_before.sqlite @387e5a5d, MIT),
-- written by nsys 2026.2.1.210, export schema 3.25.0.
-- Rows: all 4 rows of that table, verbatim and in its order (nsys writes every ENUM table).
CREATE TABLE ENUM_CUDA_FUNC_CACHE_CONFIG (
    -- CUDA function cache config labels

    id                          INTEGER   NOT NULL   PRIMARY KEY,      -- Enum numerical value.
    name                        TEXT,                                  -- Enum symbol name.
    label                       TEXT                                   -- Enum human name.
);
INSERT INTO ENUM_CUDA_FUNC_CACHE_CONFIG VALUES (0, 'CU_FUNC_CACHE_PREFER_NONE', 'None');
INSERT INTO ENUM_CUDA_FUNC_CACHE_CONFIG VALUES (1, 'CU_FUNC_CACHE_PREFER_SHARED', 'Shared');
INSERT INTO ENUM_CUDA_FUNC_CACHE_CONFIG VALUES (2, 'CU_FUNC_CACHE_PREFER_L1', 'L1');
INSERT INTO ENUM_CUDA_FUNC_CACHE_CONFIG VALUES (3, 'CU_FUNC_CACHE_PREFER_EQUAL', 'Equal');
