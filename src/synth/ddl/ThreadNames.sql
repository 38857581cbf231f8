-- ThreadNames: CREATE statement copied verbatim from sqlite_master.sql of a real export,
-- ../shared/traces/mfu_2gpu_before.sqlite (GindaChen/nsys-ai tests/fixtures/mfu_2gpu_before.sqlite @387e5a5d, MIT),
-- written by nsys 2026.2.1.210, export schema 3.25.0.
CREATE TABLE ThreadNames (
    nameId                      INTEGER   NOT NULL,                    -- REFERENCES StringIds(id) -- Thread name
    priority                    INTEGER,                               -- Priority of the thread.
    globalTid                   INTEGER                                -- Serialized GlobalId.
);
