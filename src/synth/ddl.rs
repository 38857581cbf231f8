//! The table definitions, copied verbatim from real exports (see each file's header in `ddl/`):
//! the generator never invents a column. ENUM files also carry the real table's rows.

/// Where a table's CREATE statement comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// `sqlite_master.sql` of this file in ../shared/traces (nsys 2026.2.1, schema 3.25.0, but
    /// the MPI tables: our own nsys 2023.4 captures, the only real exports that have them).
    RealExport(&'static str),
    /// NVIDIA's SQLite schema reference: no real export we have holds the table.
    Documentation,
}

pub struct TableDdl {
    pub name: &'static str,
    /// The file's text: header comment, CREATE TABLE, and for ENUM tables the INSERTs.
    pub script: &'static str,
    pub origin: Origin,
}

impl TableDdl {
    /// The CREATE statement without its `;`, i.e. what SQLite keeps in `sqlite_master.sql`.
    pub fn create_statement(&self) -> &'static str {
        let start = self.script.find("CREATE TABLE").unwrap_or(0);
        let body = &self.script[start..];
        let end = body.find("\n);").map_or(body.len(), |i| i + 2);
        &body[..end]
    }

    pub fn is_enum(&self) -> bool {
        self.name.starts_with("ENUM_")
    }
}

const MFU: Origin = Origin::RealExport("mfu_2gpu_before.sqlite");
const JACC: Origin = Origin::RealExport("jacc_cg_trace.sqlite");
const FUSER: Origin = Origin::RealExport("fuser_report1_a.sqlite");
const ICON: Origin = Origin::RealExport("isc25icon_gpu.sqlite");
const MPI4: Origin = Origin::RealExport("generated/mpi4/rank0.sqlite");
const DOCS: Origin = Origin::Documentation;

macro_rules! tables {
    ($(($name:literal, $origin:expr)),* $(,)?) => {
        /// Every table the generator can write.
        pub const TABLES: &[TableDdl] = &[$(TableDdl {
            name: $name,
            script: include_str!(concat!("ddl/", $name, ".sql")),
            origin: $origin,
        }),*];
    };
}

tables![
    ("StringIds", MFU),
    ("META_DATA_EXPORT", MFU),
    ("META_DATA_CAPTURE", MFU),
    ("ANALYSIS_DETAILS", MFU),
    ("TARGET_INFO_SESSION_START_TIME", MFU),
    ("TARGET_INFO_SYSTEM_ENV", MFU),
    ("TARGET_INFO_GPU", JACC),
    ("TARGET_INFO_CUDA_STREAM", MFU),
    ("PROCESSES", MFU),
    ("ThreadNames", MFU),
    ("CUPTI_ACTIVITY_KIND_KERNEL", MFU),
    ("CUPTI_ACTIVITY_KIND_MEMCPY", MFU),
    ("CUPTI_ACTIVITY_KIND_MEMSET", MFU),
    ("CUPTI_ACTIVITY_KIND_RUNTIME", MFU),
    ("CUPTI_ACTIVITY_KIND_GRAPH_TRACE", DOCS),
    ("NVTX_EVENTS", MFU),
    ("NVTX_PAYLOAD_SCHEMAS", MFU),
    ("NVTX_PAYLOAD_SCHEMA_ENTRIES", MFU),
    ("TARGET_INFO_GPU_METRICS", DOCS),
    ("GPU_METRICS", DOCS),
    ("ENUM_NSYS_EVENT_TYPE", MFU),
    ("ENUM_NSYS_EVENT_CLASS", MFU),
    ("ENUM_CUDA_MEMCPY_OPER", MFU),
    ("ENUM_CUDA_MEM_KIND", MFU),
    ("ENUM_CUDA_KERNEL_LAUNCH_TYPE", MFU),
    ("ENUM_CUDA_FUNC_CACHE_CONFIG", MFU),
    ("ENUM_CUDA_SHARED_MEM_LIMIT_CONFIG", MFU),
    ("ENUM_CUPTI_STREAM_TYPE", MFU),
    ("CUPTI_ACTIVITY_KIND_OPENACC_DATA", DOCS),
    ("CUPTI_ACTIVITY_KIND_OPENACC_LAUNCH", DOCS),
    ("CUPTI_ACTIVITY_KIND_OPENACC_OTHER", DOCS),
    ("ENUM_OPENACC_EVENT_KIND", FUSER),
    ("MPI_P2P_EVENTS", MPI4),
    ("MPI_COLLECTIVES_EVENTS", MPI4),
    ("MPI_OTHER_EVENTS", MPI4),
    ("MPI_RANKS", MPI4),
    ("MPI_COMMUNICATORS", MPI4),
];

/// The tables only some scenarios write (the families added for nsys2prv 0.6 parity), and the
/// ENUM tables that go with each (written only with it, so that the other scenarios' exports
/// stay as they were).
pub const EXTRA_TABLES: &[(TableDdl, &[&str])] = &[
    (
        TableDdl {
            name: "CUDA_GPU_MEMORY_USAGE_EVENTS",
            script: include_str!("ddl/CUDA_GPU_MEMORY_USAGE_EVENTS.sql"),
            origin: DOCS,
        },
        &["ENUM_CUDA_DEV_MEM_EVENT_OPER"],
    ),
    (
        TableDdl {
            name: "OPENMP_EVENT_KIND_PARALLEL",
            script: include_str!("ddl/OPENMP_EVENT_KIND_PARALLEL.sql"),
            origin: DOCS,
        },
        &["ENUM_OPENMP_EVENT_KIND"],
    ),
    (
        TableDdl {
            name: "OPENMP_EVENT_KIND_TASK",
            script: include_str!("ddl/OPENMP_EVENT_KIND_TASK.sql"),
            origin: DOCS,
        },
        &["ENUM_OPENMP_TASK_FLAG"],
    ),
    (
        TableDdl {
            name: "OPENMP_EVENT_KIND_SYNC_REGION",
            script: include_str!("ddl/OPENMP_EVENT_KIND_SYNC_REGION.sql"),
            origin: DOCS,
        },
        &["ENUM_OPENMP_SYNC_REGION"],
    ),
    (
        TableDdl {
            name: "ENUM_OPENMP_EVENT_KIND",
            script: include_str!("ddl/ENUM_OPENMP_EVENT_KIND.sql"),
            origin: ICON,
        },
        &[],
    ),
    (
        TableDdl {
            name: "ENUM_OPENMP_TASK_FLAG",
            script: include_str!("ddl/ENUM_OPENMP_TASK_FLAG.sql"),
            origin: ICON,
        },
        &[],
    ),
    (
        TableDdl {
            name: "ENUM_OPENMP_SYNC_REGION",
            script: include_str!("ddl/ENUM_OPENMP_SYNC_REGION.sql"),
            origin: ICON,
        },
        &[],
    ),
    (
        TableDdl {
            name: "ENUM_CUDA_DEV_MEM_EVENT_OPER",
            script: include_str!("ddl/ENUM_CUDA_DEV_MEM_EVENT_OPER.sql"),
            origin: MFU,
        },
        &[],
    ),
    (
        TableDdl {
            name: "SCHED_EVENTS",
            script: include_str!("ddl/SCHED_EVENTS.sql"),
            origin: JACC,
        },
        &[],
    ),
    (
        TableDdl {
            name: "PERF_EVENT_CPU_RAW_EVENT",
            script: include_str!("ddl/PERF_EVENT_CPU_RAW_EVENT.sql"),
            origin: DOCS,
        },
        &[],
    ),
    (
        TableDdl {
            name: "TARGET_INFO_COMPONENT",
            script: include_str!("ddl/TARGET_INFO_COMPONENT.sql"),
            origin: DOCS,
        },
        &[],
    ),
    (
        TableDdl {
            name: "TARGET_INFO_PERF_METRIC",
            script: include_str!("ddl/TARGET_INFO_PERF_METRIC.sql"),
            origin: DOCS,
        },
        &[],
    ),
    (
        TableDdl {
            name: "NET_NIC_METRIC",
            script: include_str!("ddl/NET_NIC_METRIC.sql"),
            origin: DOCS,
        },
        &[],
    ),
    (
        TableDdl {
            name: "NIC_ID_MAP",
            script: include_str!("ddl/NIC_ID_MAP.sql"),
            origin: DOCS,
        },
        &[],
    ),
    (
        TableDdl {
            name: "TARGET_INFO_NETWORK_METRICS",
            script: include_str!("ddl/TARGET_INFO_NETWORK_METRICS.sql"),
            origin: DOCS,
        },
        &[],
    ),
    (
        TableDdl {
            name: "TARGET_INFO_NIC_INFO",
            script: include_str!("ddl/TARGET_INFO_NIC_INFO.sql"),
            origin: FUSER,
        },
        &[
            "ENUM_NET_DEVICE_ID",
            "ENUM_NET_VENDOR_ID",
            "ENUM_NET_LINK_TYPE",
        ],
    ),
    (
        TableDdl {
            name: "ENUM_NET_DEVICE_ID",
            script: include_str!("ddl/ENUM_NET_DEVICE_ID.sql"),
            origin: FUSER,
        },
        &[],
    ),
    (
        TableDdl {
            name: "ENUM_NET_VENDOR_ID",
            script: include_str!("ddl/ENUM_NET_VENDOR_ID.sql"),
            origin: FUSER,
        },
        &[],
    ),
    (
        TableDdl {
            name: "ENUM_NET_LINK_TYPE",
            script: include_str!("ddl/ENUM_NET_LINK_TYPE.sql"),
            origin: FUSER,
        },
        &[],
    ),
];

/// The ENUM tables written with extra table `name`.
pub fn enums_of(name: &str) -> impl Iterator<Item = &'static str> + '_ {
    (EXTRA_TABLES.iter())
        .filter(move |(t, _)| t.name == name)
        .flat_map(|(_, enums)| enums.iter().copied())
}

pub fn table(name: &str) -> Option<&'static TableDdl> {
    (TABLES.iter().chain(EXTRA_TABLES.iter().map(|(t, _)| t))).find(|t| t.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_has_a_header_and_one_create_statement() {
        for t in TABLES.iter().chain(EXTRA_TABLES.iter().map(|(t, _)| t)) {
            assert!(
                t.script.starts_with(&format!("-- {}:", t.name)),
                "{}",
                t.name
            );
            let c = t.create_statement();
            assert!(
                c.starts_with(&format!("CREATE TABLE {} (", t.name)),
                "{}",
                t.name
            );
            assert!(c.ends_with("\n)"), "{}", t.name);
            assert_eq!(t.script.matches("CREATE TABLE").count(), 1, "{}", t.name);
        }
    }
}
