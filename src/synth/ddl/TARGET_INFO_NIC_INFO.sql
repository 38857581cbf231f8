-- TARGET_INFO_NIC_INFO: CREATE statement copied verbatim from sqlite_master.sql of a real export,
-- ../shared/traces/fuser_report1_a.sqlite (NVIDIA/Fuser report1.sqlite @64ee035d, BSD-3-Clause),
-- written by nsys 2024.6.2.25, export schema 3.16.1.
-- Written only by the NIC scenario (synth/ddl.rs EXTRA_TABLES), so the other scenarios keep their bytes.
CREATE TABLE TARGET_INFO_NIC_INFO (
    GUID                        INTEGER   NOT NULL,                    -- Network interface GUID
    stateName                   TEXT      NOT NULL,                    -- Device state name
    nicId                       INTEGER   NOT NULL,                    -- Network interface Id
    name                        TEXT      NOT NULL,                    -- Network interface name
    deviceId                    INTEGER   NOT NULL,                    -- REFERENCES ENUM_NET_DEVICE_ID(id)
    vendorId                    INTEGER   NOT NULL,                    -- REFERENCES ENUM_NET_VENDOR_ID(id)
    linkLayer                   INTEGER   NOT NULL                     -- REFERENCES ENUM_NET_LINK_TYPE(id)
);
