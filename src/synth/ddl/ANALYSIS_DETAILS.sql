-- ANALYSIS_DETAILS: CREATE statement copied verbatim from sqlite_master.sql of a real export,
-- ../shared/traces/mfu_2gpu_before.sqlite (GindaChen/nsys-ai tests/fixtures/mfu_2gpu_before.sqlite @387e5a5d, MIT),
-- written by nsys 2026.2.1.210, export schema 3.25.0.
CREATE TABLE ANALYSIS_DETAILS (
    -- Details about the analysis session.

    globalVid                   INTEGER   NOT NULL,                    -- Serialized GlobalId.
    duration                    INTEGER   NOT NULL,                    -- The total time span of the entire trace (ns).
    startTime                   INTEGER   NOT NULL,                    -- Trace start timestamp in nanoseconds.
    stopTime                    INTEGER   NOT NULL                     -- Trace stop timestamp in nanoseconds.
);
