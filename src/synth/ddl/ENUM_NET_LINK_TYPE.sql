-- ENUM_NET_LINK_TYPE: CREATE statement copied verbatim from sqlite_master.sql of a real export,
-- ../shared/traces/fuser_report1_a.sqlite (NVIDIA/Fuser report1.sqlite @64ee035d, BSD-3-Clause),
-- written by nsys 2024.6.2.25, export schema 3.16.1.
-- Rows: all rows of that table, verbatim and in its order. Written only with TARGET_INFO_NIC_INFO
-- (synth/ddl.rs EXTRA_TABLES), so the other scenarios keep their bytes.
CREATE TABLE ENUM_NET_LINK_TYPE (
    -- NIC link layer labels

    id                          INTEGER   NOT NULL   PRIMARY KEY,      -- Enum numerical value.
    name                        TEXT,                                  -- Enum symbol name.
    label                       TEXT                                   -- Enum human name.
);
INSERT INTO ENUM_NET_LINK_TYPE VALUES(0,'Unknown','Unknown NIC');
INSERT INTO ENUM_NET_LINK_TYPE VALUES(1,'Ethernet','Ethernet NIC');
INSERT INTO ENUM_NET_LINK_TYPE VALUES(2,'InfiniBand','InfiniBand NIC');
