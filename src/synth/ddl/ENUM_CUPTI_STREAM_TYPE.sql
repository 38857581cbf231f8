-- ENUM_CUPTI_STREAM_TYPE: CREATE statement copied verbatim from sqlite_master.sql of a real export,
-- ../shared/traces/mfu_2gpu_before.sqlite (GindaChen/nsys-ai tests/fixtures/mfu_2gpu_before.sqlite @387e5a5d, MIT),
-- written by nsys 2026.2.1.210, export schema 3.25.0.
-- Rows: all 4 rows of that table, verbatim and in its order (nsys writes every ENUM table).
CREATE TABLE ENUM_CUPTI_STREAM_TYPE (
    -- CUPTI stream type labels

    id                          INTEGER   NOT NULL   PRIMARY KEY,      -- Enum numerical value.
    name                        TEXT,                                  -- Enum symbol name.
    label                       TEXT                                   -- Enum human name.
);
INSERT INTO ENUM_CUPTI_STREAM_TYPE VALUES (0, 'CUPTI_ACTIVITY_STREAM_CREATE_FLAG_UNKNOWN', 'Unknown stream type');
INSERT INTO ENUM_CUPTI_STREAM_TYPE VALUES (1, 'CUPTI_ACTIVITY_STREAM_CREATE_FLAG_DEFAULT', 'Default stream');
INSERT INTO ENUM_CUPTI_STREAM_TYPE VALUES (2, 'CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NON_BLOCKING', 'Non-blocking stream');
INSERT INTO ENUM_CUPTI_STREAM_TYPE VALUES (3, 'CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NULL', 'Null stream');
