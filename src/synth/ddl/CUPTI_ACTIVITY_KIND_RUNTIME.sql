-- CUPTI_ACTIVITY_KIND_RUNTIME: CREATE statement copied verbatim from sqlite_master.sql of a real export,
-- ../shared/traces/mfu_2gpu_before.sqlite (GindaChen/nsys-ai tests/fixtures/mfu_2gpu_before.sqlite @387e5a5d, MIT),
-- written by nsys 2026.2.1.210, export schema 3.25.0.
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER   NOT NULL,                    -- Event end timestamp (ns).
    eventClass                  INTEGER   NOT NULL,                    -- REFERENCES ENUM_NSYS_EVENT_CLASS(id)
    globalTid                   INTEGER,                               -- Serialized GlobalId.
    correlationId               INTEGER,                               -- ID used to identify events that this function call has triggered.
    nameId                      INTEGER   NOT NULL,                    -- REFERENCES StringIds(id) -- Function name
    returnValue                 INTEGER   NOT NULL,                    -- Return value of the function call.
    callchainId                 INTEGER                                -- REFERENCES CUDA_CALLCHAINS(id)
);
