//! Writes an [`ExportBuilder`] as an nsys SQLite export: tables are created lazily (only those with
//! rows, plus the ones nsys always writes) from the verbatim DDL in `ddl/`, rows are inserted in
//! time order, and the database is serialized from memory so the bytes depend only on the calls.

use rusqlite::types::Value;
use rusqlite::{params_from_iter, Connection};

use super::builder::ExportBuilder;
use super::ddl;
use super::ids::{global_pid, GLOBAL_VID};
use crate::error::{Error, Result};

/// nsys and schema version of the real export whose DDL we copy.
pub const PRODUCT_VERSION: &str = "2026.2.1.210";
pub const SCHEMA_VERSION: &str = "3.25.0";

/// Per-context local-memory reservation reported on kernel rows (value seen on H100 in
/// mfu_2gpu_before.sqlite).
pub(super) const LOCAL_MEMORY_TOTAL: i64 = 250_871_808;

fn err(b: &ExportBuilder, what: &str, e: rusqlite::Error) -> Error {
    Error::Write {
        what: format!("synthetic export {} ({what})", b.label()),
        detail: e.to_string(),
    }
}

pub(super) fn int(v: i64) -> Value {
    Value::Integer(v)
}
pub(super) fn opt(v: Option<i64>) -> Value {
    v.map_or(Value::Null, Value::Integer)
}
pub(super) fn text(s: &str) -> Value {
    Value::Text(s.to_owned())
}
pub(super) fn opt_text(s: &Option<String>) -> Value {
    s.as_ref().map_or(Value::Null, |s| Value::Text(s.clone()))
}
pub(super) fn u(v: impl Into<u64>) -> Value {
    Value::Integer(v.into() as i64)
}

/// Column names written apart by spaces, one by one.
pub(super) fn names(list: &str) -> Vec<&str> {
    list.split_whitespace().collect()
}

/// Inserts `rows` into `table`, naming the columns (so column order in the DDL never matters).
pub(super) fn insert(
    conn: &Connection,
    b: &ExportBuilder,
    table: &str,
    cols: &[&str],
    rows: impl IntoIterator<Item = Vec<Value>>,
) -> Result<()> {
    // Tables are created only when they get rows: never prepare against an absent one.
    let mut rows = rows.into_iter().peekable();
    if rows.peek().is_none() {
        return Ok(());
    }
    let sql = format!(
        "INSERT INTO {table} ({}) VALUES ({})",
        cols.join(", "),
        vec!["?"; cols.len()].join(", ")
    );
    let mut st = conn.prepare(&sql).map_err(|e| err(b, table, e))?;
    for row in rows {
        debug_assert_eq!(row.len(), cols.len(), "{table}");
        st.execute(params_from_iter(row))
            .map_err(|e| err(b, table, e))?;
    }
    Ok(())
}

/// `YYYY-MM-DDTHH:MM:SS` of a UTC epoch time.
fn utc_text(utc_ns: i64) -> String {
    let c = crate::dates::from_unix_ns(utc_ns);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
        c.year, c.month, c.day, c.hour, c.minute, c.second
    )
}

/// Smallest shared-memory carveout (bytes) that holds a kernel's static + dynamic shared memory.
pub(super) fn smem_carveout(need: u32) -> i64 {
    const CARVEOUTS: [i64; 7] = [32_768, 65_536, 102_400, 135_168, 167_936, 200_704, 233_472];
    CARVEOUTS
        .iter()
        .copied()
        .find(|&c| c >= i64::from(need))
        .unwrap_or(233_472)
}

/// A stable, seed-independent GPU UUID in nsys's text form.
fn gpu_uuid(id: u32) -> String {
    let mut r = super::rng::Rng::new(0x4750_5555_4944 + u64::from(id));
    let (a, b) = (r.next_u64(), r.next_u64());
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xFFFF,
        a & 0xFFFF,
        b >> 48,
        b & 0xFFFF_FFFF_FFFF
    )
}

fn last_time(b: &ExportBuilder) -> i64 {
    let r = &b.rows;
    let ends = r
        .kernels
        .iter()
        .map(|k| k.at.end)
        .chain(r.memcpys.iter().map(|m| m.at.end))
        .chain(r.memsets.iter().map(|m| m.at.end))
        .chain(r.graph_traces.iter().map(|g| g.at.end))
        .chain(r.runtime.iter().map(|c| c.end))
        .chain(r.nvtx.iter().map(|n| n.end.unwrap_or(n.start)))
        .chain(r.mpi.other.iter().map(|m| m.end))
        .chain(r.metrics.iter().map(|m| m.timestamp));
    ends.max().unwrap_or(b.session.system_clock_ns)
}

pub fn to_bytes(b: &ExportBuilder) -> Result<Vec<u8>> {
    let mut conn = Connection::open_in_memory().map_err(|e| err(b, "open", e))?;
    let r = &b.rows;
    let mut tables: Vec<&str> = vec![
        "StringIds",
        "META_DATA_EXPORT",
        "META_DATA_CAPTURE",
        "ANALYSIS_DETAILS",
        "TARGET_INFO_SESSION_START_TIME",
        "TARGET_INFO_SYSTEM_ENV",
        "PROCESSES",
        "ThreadNames",
    ];
    let lazy: [(&str, bool); 12] = [
        ("TARGET_INFO_GPU", !r.gpus.is_empty()),
        ("TARGET_INFO_CUDA_STREAM", !r.streams.is_empty()),
        ("CUPTI_ACTIVITY_KIND_KERNEL", !r.kernels.is_empty()),
        ("CUPTI_ACTIVITY_KIND_MEMCPY", !r.memcpys.is_empty()),
        ("CUPTI_ACTIVITY_KIND_MEMSET", !r.memsets.is_empty()),
        ("CUPTI_ACTIVITY_KIND_RUNTIME", !r.runtime.is_empty()),
        (
            "CUPTI_ACTIVITY_KIND_GRAPH_TRACE",
            !r.graph_traces.is_empty(),
        ),
        ("NVTX_EVENTS", !r.nvtx.is_empty()),
        ("NVTX_PAYLOAD_SCHEMAS", !r.payload_schemas.is_empty()),
        ("NVTX_PAYLOAD_SCHEMA_ENTRIES", !r.payload_schemas.is_empty()),
        ("TARGET_INFO_GPU_METRICS", !r.metric_types.is_empty()),
        ("GPU_METRICS", !r.metrics.is_empty()),
    ];
    tables.extend(lazy.iter().filter(|(_, has)| *has).map(|(t, _)| *t));
    // The tables only some scenarios write, with the ENUM tables they refer to.
    for e in &r.extra {
        tables.push(e.table);
        tables.extend(ddl::enums_of(e.table));
    }
    tables.extend(super::mpi::tables(&r.mpi));
    // nsys writes every ENUM table, with its rows, whatever the capture holds.
    tables.extend(ddl::TABLES.iter().filter(|t| t.is_enum()).map(|t| t.name));
    {
        let tx = conn.transaction().map_err(|e| err(b, "transaction", e))?;
        for t in &tables {
            let d = ddl::table(t).ok_or_else(|| Error::Write {
                what: format!("synthetic export {}", b.label()),
                detail: format!("no DDL for table {t}"),
            })?;
            tx.execute_batch(d.script).map_err(|e| err(b, t, e))?;
        }
        fill(&tx, b)?;
        tx.commit().map_err(|e| err(b, "commit", e))?;
    }
    let data = conn.serialize("main").map_err(|e| err(b, "serialize", e))?;
    Ok(data.to_vec())
}

/// Every table of the export. Long: one insert per table, its columns and rows spelled out.
fn fill(c: &Connection, b: &ExportBuilder) -> Result<()> {
    let r = &b.rows;
    for e in &r.extra {
        insert(c, b, e.table, &names(e.columns), e.rows.iter().cloned())?;
    }
    let s = &b.session;
    insert(
        c,
        b,
        "StringIds",
        &["id", "value"],
        b.string_order
            .iter()
            .enumerate()
            .map(|(i, v)| vec![int(i as i64), text(v)]),
    )?;
    let meta = export_metadata(b);
    insert(
        c,
        b,
        "META_DATA_EXPORT",
        &["name", "value"],
        meta.iter().map(|(n, v)| vec![text(n), text(v)]),
    )?;
    let mut capture: Vec<(String, String)> = vec![
        ("DEVICE_ID".into(), "Local (CLI)".into()),
        ("CAPTURE_EVENT_TYPE".into(), "NvtxEvents".into()),
        ("CAPTURE_EVENT_TYPE".into(), "Cuda".into()),
        ("DEVICE_DISPLAY_NAME".into(), s.hostname.clone()),
    ];
    capture.extend(r.capture.iter().cloned());
    insert(
        c,
        b,
        "META_DATA_CAPTURE",
        &["name", "value"],
        capture.iter().map(|(n, v)| vec![text(n), text(v)]),
    )?;
    let stop = last_time(b) + 1_000_000;
    insert(
        c,
        b,
        "ANALYSIS_DETAILS",
        &["globalVid", "duration", "startTime", "stopTime"],
        [vec![
            int(GLOBAL_VID),
            int(stop - s.system_clock_ns),
            int(s.system_clock_ns),
            int(stop),
        ]],
    )?;
    let utc = utc_text(s.utc_epoch_ns);
    insert(
        c,
        b,
        "TARGET_INFO_SESSION_START_TIME",
        &["utcEpochNs", "utcTime", "localTime", "systemClockNs"],
        [vec![
            int(s.utc_epoch_ns),
            text(&utc),
            text(&utc),
            int(s.system_clock_ns),
        ]],
    )?;
    let env = system_env(b);
    insert(
        c,
        b,
        "TARGET_INFO_SYSTEM_ENV",
        &["globalVid", "devStateName", "name", "nameEnum", "value"],
        env.iter().map(|(n, e, v)| {
            vec![
                int(GLOBAL_VID),
                text("Local (CLI)"),
                text(n),
                int(*e),
                text(v),
            ]
        }),
    )?;
    insert(
        c,
        b,
        "PROCESSES",
        &["globalPid", "pid", "name"],
        r.processes
            .iter()
            .map(|p| vec![int(global_pid(p.pid)), u(p.pid), text(&p.name)]),
    )?;
    insert(
        c,
        b,
        "ThreadNames",
        &["nameId", "priority", "globalTid"],
        r.threads
            .iter()
            .map(|t| vec![int(t.name_id), int(20), int(t.global_tid)]),
    )?;
    fill_gpus(c, b)?;
    super::write_activity::fill(c, b)?;
    super::mpi::fill(c, b)
}

/// The rows of TARGET_INFO_SYSTEM_ENV as (name, nameEnum, value), in nameEnum order: the enum
/// numbers are those of the real 2026.2 export.
fn system_env(b: &ExportBuilder) -> Vec<(&'static str, i64, String)> {
    let mut env: Vec<(&str, i64, String)> = vec![
        ("CpuCores", 1, "64".into()),
        ("CpuArchitecture", 3, "x86_64".into()),
        ("NvDriverVersion", 205, "580.95.05".into()),
        ("HardwarePlatform", 600, "x86_64".into()),
        ("OsDescription", 605, "Ubuntu 22.04.5 LTS".into()),
    ];
    if let Some(vars) = &b.environment {
        let pairs: Vec<String> = vars.iter().map(|(k, v)| format!("{k}={v}")).collect();
        env.push(("DeviceEnvironment", 610, pairs.join(";")));
    }
    env.extend([
        ("CudaDriverVersion", 611, "13000".into()),
        ("Hostname", 619, b.session.hostname.clone()),
        ("HasNvtxEvents", 809, "1".into()),
        ("HasCudaEvents", 812, "1".into()),
        ("SupportsGpuMetrics", 849, "1".into()),
        ("SupportsNCCL", 925, "1".into()),
    ]);
    env
}

fn export_metadata(b: &ExportBuilder) -> Vec<(String, String)> {
    let (maj, rest) = SCHEMA_VERSION
        .split_once('.')
        .unwrap_or((SCHEMA_VERSION, "0.0"));
    let (min, mic) = rest.split_once('.').unwrap_or((rest, "0"));
    let input = format!("{}.nsys-rep", b.label());
    let output = format!("{}.sqlite", b.label());
    let mut m: Vec<(String, String)> = [
        ("EXPORT_PRODUCT_NAME", "NVIDIA Nsight Systems"),
        ("EXPORT_PRODUCT_VERSION", PRODUCT_VERSION),
        ("EXPORT_PRODUCT_DATE", "2026.2"),
        ("EXPORT_SCHEMA_VERSION", SCHEMA_VERSION),
        ("EXPORT_SCHEMA_VERSION_MAJOR", maj),
        ("EXPORT_SCHEMA_VERSION_MINOR", min),
        ("EXPORT_SCHEMA_VERSION_MICRO", mic),
        ("EXPORT_SCHEMA_VERSION_CKSUM", "306658267 182758"),
        ("EXPORT_PLATFORM", "linux-desktop"),
        ("EXPORT_ARCH", "x64"),
        ("EXPORT_TIME_UTC", "2026-05-26T08:00:00"),
        ("EXPORT_TIME_LOCAL", "2026-05-26T08:00:00 +0000 UTC"),
        ("EXPORT_HOST", &b.session.hostname),
        ("EXPORT_USER", ""),
        ("EXPORT_PARAM_EXPORT_TYPE", "SQLite"),
        ("EXPORT_PARAM_INPUT_FILE", &input),
        ("EXPORT_PARAM_OUTPUT_FILE", &output),
        ("EXPORT_PARAM_LAZY", "true"),
        // NVTX payloads are in jsonText, which nsys fills only with --include-json=true.
        ("EXPORT_PARAM_INCLUDE_JSON", "true"),
        ("EXPORT_PARAM_INCLUDE_BLOBS", "false"),
        ("EXPORT_PARAM_TIME_NORMALIZE", "false"),
        ("EXPORT_PARAM_TIME_SHIFT", "0"),
    ]
    .iter()
    .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
    .collect();
    m.extend(b.provenance.iter().cloned());
    m
}

/// TARGET_INFO_GPU and the CUDA streams.
fn fill_gpus(c: &Connection, b: &ExportBuilder) -> Result<()> {
    let cols = names(
        "vmId id name busLocation isDiscrete l2CacheSize totalMemory memoryBandwidth clockRate \
         smCount pwGpuId uuid luid chipName cuDevice revision nodeMask constantMemory maxIPC \
         maxRegistersPerBlock maxShmemPerBlock maxShmemPerBlockOptin maxShmemPerSm \
         maxRegistersPerSm threadsPerWarp asyncEngines maxWarpsPerSm maxBlocksPerSm \
         maxThreadsPerBlock maxBlockDimX maxBlockDimY maxBlockDimZ maxGridDimX maxGridDimY \
         maxGridDimZ computeMajor computeMinor smMajor smMinor",
    );
    let rows = b.rows.gpus.iter().map(|g| {
        let m = &g.model;
        let id = i64::from(g.id);
        let mut v = vec![
            int(GLOBAL_VID),
            int(id),
            text(&g.name),
            text(&format!("0000:{:02x}:00.0", 0x18 + 0x11 * id)),
            int(1),
            int(m.l2_cache),
            int(m.total_memory),
            int(m.memory_bandwidth),
            int(m.clock_rate),
            int(m.sm_count),
            int(id),
            text(&gpu_uuid(g.id)),
            int(0),
            text(m.chip),
            int(id),
            int(161),
            int(0),
        ];
        let int_max = i64::from(i32::MAX);
        v.extend(
            [
                65_536, 4, 65_536, 49_152, 232_448, 233_472, 65_536, 32, 3, 64, 32, 1024, 1024,
                1024, 64, int_max, 65_535, 65_535,
            ]
            .map(int),
        );
        v.extend([
            int(m.compute.0),
            int(m.compute.1),
            int(m.compute.0),
            int(m.compute.1),
        ]);
        v
    });
    insert(c, b, "TARGET_INFO_GPU", &cols, rows)?;
    insert(
        c,
        b,
        "TARGET_INFO_CUDA_STREAM",
        &names("streamId hwId vmId processId contextId priority flag"),
        b.rows.streams.iter().map(|s| {
            vec![
                u(s.stream),
                int(0),
                int(1),
                u(s.pid),
                u(s.context),
                int(s.priority),
                int(s.flag),
            ]
        }),
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn utc_text_and_carveouts() {
        // mfu_2gpu_before: utcEpochNs 1779782330176752435 ↔ utcTime 2026-05-26T07:58:50.
        assert_eq!(
            super::utc_text(1_779_782_330_176_752_435),
            "2026-05-26T07:58:50"
        );
        assert_eq!(super::smem_carveout(0), 32_768);
        // The real NCCL SendRecv row: 21568 static + 82240 dynamic → 135168 executed.
        assert_eq!(super::smem_carveout(21_568 + 82_240), 135_168);
    }
}
