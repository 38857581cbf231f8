-- ENUM_OPENMP_TASK_FLAG: CREATE statement copied verbatim from sqlite_master.sql of a real export,
-- ../shared/traces/isc25icon_gpu.sqlite (NTHU-SC/ISC25-ICON-C nsys_reports/gpu.sqlite @b179f18c, BSD-3-Clause),
-- written by nsys 2025.1.1.103, export schema 3.17.1.
-- Rows: all rows of that table, verbatim and in its order. Written only with the OpenMP tables
-- (synth/ddl.rs EXTRA_TABLES), so the other scenarios keep their bytes.
CREATE TABLE ENUM_OPENMP_TASK_FLAG (
    -- OpenMP task flags labels

    id                          INTEGER   NOT NULL   PRIMARY KEY,      -- Enum numerical value.
    name                        TEXT,                                  -- Enum symbol name.
    label                       TEXT                                   -- Enum human name.
);
INSERT INTO ENUM_OPENMP_TASK_FLAG VALUES(1,'ompt_task_initial','Initial');
INSERT INTO ENUM_OPENMP_TASK_FLAG VALUES(2,'ompt_task_implicit','Implitic');
INSERT INTO ENUM_OPENMP_TASK_FLAG VALUES(4,'ompt_task_explicit','Explicit');
INSERT INTO ENUM_OPENMP_TASK_FLAG VALUES(8,'ompt_task_target','Target');
INSERT INTO ENUM_OPENMP_TASK_FLAG VALUES(134217728,'ompt_task_undeferred','Undeferred');
INSERT INTO ENUM_OPENMP_TASK_FLAG VALUES(268435456,'ompt_task_untied','United');
INSERT INTO ENUM_OPENMP_TASK_FLAG VALUES(536870912,'ompt_task_final','Final');
INSERT INTO ENUM_OPENMP_TASK_FLAG VALUES(1073741824,'ompt_task_mergeable','Mergeable');
INSERT INTO ENUM_OPENMP_TASK_FLAG VALUES(2147483648,'ompt_task_merged','Merged');
