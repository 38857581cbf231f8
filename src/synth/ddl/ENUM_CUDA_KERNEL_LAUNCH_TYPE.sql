-- ENUM_CUDA_KERNEL_LAUNCH_TYPE: CREATE statement copied verbatim from sqlite_master.sql of a real export,
-- ../shared/traces/mfu_2gpu_before.sqlite (GindaChen/nsys-ai tests/fixtures/mfu_2gpu_before.sqlite @387e5a5d, MIT),
-- written by nsys 2026.2.1.210, export schema 3.25.0.
-- Rows: all 4 rows of that table, verbatim and in its order (nsys writes every ENUM table).
CREATE TABLE ENUM_CUDA_KERNEL_LAUNCH_TYPE (
    -- CUDA kernel launch type labels

    id                          INTEGER   NOT NULL   PRIMARY KEY,      -- Enum numerical value.
    name                        TEXT,                                  -- Enum symbol name.
    label                       TEXT                                   -- Enum human name.
);
INSERT INTO ENUM_CUDA_KERNEL_LAUNCH_TYPE VALUES (0, 'CUDA_KERNEL_LAUNCH_TYPE_UNKNOWN', 'Unknown');
INSERT INTO ENUM_CUDA_KERNEL_LAUNCH_TYPE VALUES (1, 'CUDA_KERNEL_LAUNCH_TYPE_REGULAR', 'Regular');
INSERT INTO ENUM_CUDA_KERNEL_LAUNCH_TYPE VALUES (2, 'CUDA_KERNEL_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE', 'Coop Single Device');
INSERT INTO ENUM_CUDA_KERNEL_LAUNCH_TYPE VALUES (3, 'CUDA_KERNEL_LAUNCH_TYPE_COOPERATIVE_MULTI_DEVICE', 'Coop Multi Device');
