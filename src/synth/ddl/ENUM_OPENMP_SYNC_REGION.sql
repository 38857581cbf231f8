-- ENUM_OPENMP_SYNC_REGION: CREATE statement copied verbatim from sqlite_master.sql of a real export,
-- ../shared/traces/isc25icon_gpu.sqlite (NTHU-SC/ISC25-ICON-C nsys_reports/gpu.sqlite @b179f18c, BSD-3-Clause),
-- written by nsys 2025.1.1.103, export schema 3.17.1.
-- Rows: all rows of that table, verbatim and in its order. Written only with the OpenMP tables
-- (synth/ddl.rs EXTRA_TABLES), so the other scenarios keep their bytes.
CREATE TABLE ENUM_OPENMP_SYNC_REGION (
    -- OpenMP sync region labels

    id                          INTEGER   NOT NULL   PRIMARY KEY,      -- Enum numerical value.
    name                        TEXT,                                  -- Enum symbol name.
    label                       TEXT                                   -- Enum human name.
);
INSERT INTO ENUM_OPENMP_SYNC_REGION VALUES(1,'ompt_sync_region_barrier','Barrier');
INSERT INTO ENUM_OPENMP_SYNC_REGION VALUES(2,'ompt_sync_region_barrier_implicit','Implicit barrier');
INSERT INTO ENUM_OPENMP_SYNC_REGION VALUES(3,'ompt_sync_region_barrier_explicit','Explicit barrier');
INSERT INTO ENUM_OPENMP_SYNC_REGION VALUES(4,'ompt_sync_region_barrier_implementation','Implementation barrier');
INSERT INTO ENUM_OPENMP_SYNC_REGION VALUES(5,'ompt_sync_region_taskwait','Task wait');
INSERT INTO ENUM_OPENMP_SYNC_REGION VALUES(6,'ompt_sync_region_taskgroup','Task group');
INSERT INTO ENUM_OPENMP_SYNC_REGION VALUES(7,'ompt_sync_region_reduction','Reduction');
