-- ENUM_NET_DEVICE_ID: CREATE statement copied verbatim from sqlite_master.sql of a real export,
-- ../shared/traces/fuser_report1_a.sqlite (NVIDIA/Fuser report1.sqlite @64ee035d, BSD-3-Clause),
-- written by nsys 2024.6.2.25, export schema 3.16.1.
-- Rows: all rows of that table, verbatim and in its order. Written only with TARGET_INFO_NIC_INFO
-- (synth/ddl.rs EXTRA_TABLES), so the other scenarios keep their bytes.
CREATE TABLE ENUM_NET_DEVICE_ID (
    -- NIC PCIe device id labels

    id                          INTEGER   NOT NULL   PRIMARY KEY,      -- Enum numerical value.
    name                        TEXT,                                  -- Enum symbol name.
    label                       TEXT                                   -- Enum human name.
);
INSERT INTO ENUM_NET_DEVICE_ID VALUES(4099,'CntX3','ConnectX-3');
INSERT INTO ENUM_NET_DEVICE_ID VALUES(4103,'CntX3Pro','ConnectX-3 Pro');
INSERT INTO ENUM_NET_DEVICE_ID VALUES(4113,'CntIB','Connect-IB');
INSERT INTO ENUM_NET_DEVICE_ID VALUES(4115,'CntX4','ConnectX-4');
INSERT INTO ENUM_NET_DEVICE_ID VALUES(4117,'CntX4Lx','ConnectX-4 Lx');
INSERT INTO ENUM_NET_DEVICE_ID VALUES(4119,'CntX5','ConnectX-5');
INSERT INTO ENUM_NET_DEVICE_ID VALUES(4121,'CntX5Ex','ConnectX-5 Ex');
INSERT INTO ENUM_NET_DEVICE_ID VALUES(4123,'CntX6','ConnectX-6');
INSERT INTO ENUM_NET_DEVICE_ID VALUES(4125,'CntX6Dx','ConnectX-6 Dx');
INSERT INTO ENUM_NET_DEVICE_ID VALUES(4127,'CntX6Lx','ConnectX-6 Lx');
INSERT INTO ENUM_NET_DEVICE_ID VALUES(4129,'CntX7','ConnectX-7');
INSERT INTO ENUM_NET_DEVICE_ID VALUES(4131,'CntX8','ConnectX-8');
INSERT INTO ENUM_NET_DEVICE_ID VALUES(21108,'InfiniBridge','InfiniBridge');
INSERT INTO ENUM_NET_DEVICE_ID VALUES(23108,'InfiniHost','InfiniHost');
INSERT INTO ENUM_NET_DEVICE_ID VALUES(24204,'InfiniHost3LxHca1','InfiniHost III Lx HCA 1');
INSERT INTO ENUM_NET_DEVICE_ID VALUES(25204,'InfiniHost3LxHca2','InfiniHost III Lx HCA 2');
INSERT INTO ENUM_NET_DEVICE_ID VALUES(25208,'InfiniHost3ExTavor','InfiniHost III Ex (Tavor compatibility mode)');
INSERT INTO ENUM_NET_DEVICE_ID VALUES(25218,'InfiniHost3Ex','InfiniHost III Ex');
INSERT INTO ENUM_NET_DEVICE_ID VALUES(25408,'CntXDual10Gb','ConnectX Dual Port 10Gb/s');
INSERT INTO ENUM_NET_DEVICE_ID VALUES(25418,'CntXDual20Gb','ConnectX Dual Port 20Gb/s');
INSERT INTO ENUM_NET_DEVICE_ID VALUES(25448,'CntXEn10Gb25Gt1','ConnectX EN 10GigE PCIe 2.0 2.5GT/s');
INSERT INTO ENUM_NET_DEVICE_ID VALUES(25458,'CntXEn10Gb25Gt2','ConnectX EN 10GBASE-T PCIe 2.5 GT/s');
INSERT INTO ENUM_NET_DEVICE_ID VALUES(26428,'CntXDual40Gb','ConnectX Dual Port 40Gb/s');
INSERT INTO ENUM_NET_DEVICE_ID VALUES(26438,'CntXVpi','ConnectX VPI PCIe 2.0 5GT/s');
INSERT INTO ENUM_NET_DEVICE_ID VALUES(26448,'CntXEn10Gb50Gt1','ConnectX EN 10GigE PCIe 2.0 5GT/s');
INSERT INTO ENUM_NET_DEVICE_ID VALUES(26458,'CntXEn10Gb50Gt2','ConnectX EN 10GBASE-T PCIe Gen2 5.0 GT/s');
INSERT INTO ENUM_NET_DEVICE_ID VALUES(26468,'CntXEn10Gb50GtVirt','ConnectX EN 10GigE PCIe 2.0 5GT/s Virtualization+');
INSERT INTO ENUM_NET_DEVICE_ID VALUES(26478,'CntXEn40Gb50Gt','ConnectX EN 40GigE PCIe 2.0 5GT/s');
INSERT INTO ENUM_NET_DEVICE_ID VALUES(26488,'CntXVpiVirt','ConnectX VPI PCIe 2.0 5GT/s - IB DDR / 10GigE Virtualization+');
INSERT INTO ENUM_NET_DEVICE_ID VALUES(41680,'BF1Crypto','BlueField SoC Crypto enabled');
INSERT INTO ENUM_NET_DEVICE_ID VALUES(41681,'BF1NoCrypto','BlueField SoC Crypto disabled');
INSERT INTO ENUM_NET_DEVICE_ID VALUES(41682,'BF1CntX5','BlueField integrated ConnectX-5 network controller');
INSERT INTO ENUM_NET_DEVICE_ID VALUES(41683,'BF1MultiVF','BlueField multicore SoC family VF');
INSERT INTO ENUM_NET_DEVICE_ID VALUES(41684,'BF2Crypto','BlueField-2 SoC Crypto enabled');
INSERT INTO ENUM_NET_DEVICE_ID VALUES(41685,'BF2NoCrypto','BlueField-2 SoC Crypto disabled');
INSERT INTO ENUM_NET_DEVICE_ID VALUES(41686,'BF2CntX6Dx','BlueField-2 integrated ConnectX-6 Dx network controller');
INSERT INTO ENUM_NET_DEVICE_ID VALUES(41687,'BF3LxCrypto','BlueField-3 Lx SoC Crypto enabled');
INSERT INTO ENUM_NET_DEVICE_ID VALUES(41688,'BF3LxNoCrypto','BlueField-3 Lx SoC Crypto disabled');
INSERT INTO ENUM_NET_DEVICE_ID VALUES(41689,'BF3LxCntX7Lx','BlueField-3 Lx integrated ConnectX-7 network controller');
INSERT INTO ENUM_NET_DEVICE_ID VALUES(41690,'BF3Crypto','BlueField-3 SoC Crypto enabled');
INSERT INTO ENUM_NET_DEVICE_ID VALUES(41691,'BF3NoCrypto','BlueField-3 SoC Crypto disabled');
INSERT INTO ENUM_NET_DEVICE_ID VALUES(41692,'BF3CntX7','BlueField-3 integrated ConnectX-7 network controller');
INSERT INTO ENUM_NET_DEVICE_ID VALUES(41693,'BF4Crypto','BlueField-4 SoC Crypto enabled');
INSERT INTO ENUM_NET_DEVICE_ID VALUES(41694,'BF4NoCrypto','BlueField-4 SoC Crypto disabled');
INSERT INTO ENUM_NET_DEVICE_ID VALUES(41695,'BF4Int','BlueField-4 integrated network controller');
