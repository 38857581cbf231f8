-- ENUM_CUDA_MEMCPY_OPER: CREATE statement copied verbatim from sqlite_master.sql of a real export,
-- ../shared/traces/mfu_2gpu_before.sqlite (GindaChen/nsys-ai tests/fixtures/mfu_2gpu_before.sqlite @387e5a5d, MIT),
-- written by nsys 2026.2.1.210, export schema 3.25.0.
-- Rows: all 14 rows of that table, verbatim and in its order (nsys writes every ENUM table).
CREATE TABLE ENUM_CUDA_MEMCPY_OPER (
    -- CUDA memcpy operation labels

    id                          INTEGER   NOT NULL   PRIMARY KEY,      -- Enum numerical value.
    name                        TEXT,                                  -- Enum symbol name.
    label                       TEXT                                   -- Enum human name.
);
INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (0, 'CUDA_MEMCPY_KIND_UNKNOWN', 'Unknown');
INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (1, 'CUDA_MEMCPY_KIND_HTOD', 'Host-to-Device');
INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (2, 'CUDA_MEMCPY_KIND_DTOH', 'Device-to-Host');
INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (3, 'CUDA_MEMCPY_KIND_HTOA', 'Host-to-Array');
INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (4, 'CUDA_MEMCPY_KIND_ATOH', 'Array-to-Host');
INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (5, 'CUDA_MEMCPY_KIND_ATOA', 'Array-to-Array');
INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (6, 'CUDA_MEMCPY_KIND_ATOD', 'Array-to-Device');
INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (7, 'CUDA_MEMCPY_KIND_DTOA', 'Device-to-Array');
INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (8, 'CUDA_MEMCPY_KIND_DTOD', 'Device-to-Device');
INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (9, 'CUDA_MEMCPY_KIND_HTOH', 'Host-to-Host');
INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (10, 'CUDA_MEMCPY_KIND_PTOP', 'Peer-to-Peer');
INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (11, 'CUDA_MEMCPY_KIND_UVM_HTOD', 'Unified Host-to-Device');
INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (12, 'CUDA_MEMCPY_KIND_UVM_DTOH', 'Unified Device-to-Host');
INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (13, 'CUDA_MEMCPY_KIND_UVM_DTOD', 'Unified Device-to-Device');
