-- ENUM_CUDA_SHARED_MEM_LIMIT_CONFIG: CREATE statement copied verbatim from sqlite_master.sql of a real export,
-- ../shared/traces/mfu_2gpu_before.sqlite (GindaChen/nsys-ai tests/fixtures/mfu_2gpu_before.sqlite @387e5a5d, MIT),
-- written by nsys 2026.2.1.210, export schema 3.25.0.
-- Rows: all 2 rows of that table, verbatim and in its order (nsys writes every ENUM table).
CREATE TABLE ENUM_CUDA_SHARED_MEM_LIMIT_CONFIG (
    -- CUDA shared memory limit config labels

    id                          INTEGER   NOT NULL   PRIMARY KEY,      -- Enum numerical value.
    name                        TEXT,                                  -- Enum symbol name.
    label                       TEXT                                   -- Enum human name.
);
INSERT INTO ENUM_CUDA_SHARED_MEM_LIMIT_CONFIG VALUES (0, 'CUDA_SHARED_MEM_LIMIT_DEFAULT', 'Default');
INSERT INTO ENUM_CUDA_SHARED_MEM_LIMIT_CONFIG VALUES (1, 'CUDA_SHARED_MEM_LIMIT_OPTIN', 'Opt in');
