//! Memory transfers per GPU and direction (src/metrics/transfers.rs) against SQL on real exports:
//! counts, bytes, time and the device's memory bandwidth.

mod common;

use common::shared_traces;
use prvsight::nsys::Export;
use prvsight::Options;

fn sql_i64(path: &std::path::Path, q: &str) -> i64 {
    let c = rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .unwrap();
    c.query_row(q, [], |r| r.get::<_, Option<i64>>(0))
        .unwrap()
        .unwrap_or(0)
}

#[test]
fn transfers_per_direction_match_sql() {
    let Some(dir) = shared_traces() else { return };
    // copyKind 1 HtoD, 2 DtoH, 8 DtoD, 10 PtoP, 11-13 unified.
    let kinds = [
        ("memcpy_htod", "1"),
        ("memcpy_dtoh", "2"),
        ("memcpy_dtod", "8"),
        ("memcpy_unified", "11, 12, 13"),
    ];
    let mut rows_checked = 0;
    for file in [
        "isc25icon_gpu.sqlite",
        "testcuda_report1.sqlite",
        "nsightful_power_iteration.sqlite",
    ] {
        let path = dir.join(file);
        let ex = Export::open_path(&path).unwrap();
        let r =
            prvsight::metrics::compute(&[ex], &Options::default(), &Default::default()).unwrap();
        let v: serde_json::Value = serde_json::from_str(&r.to_json().unwrap()).unwrap();
        let rows = v["transfers"].as_array().unwrap();
        for (direction, copy_kinds) in kinds {
            let q = |what: &str| {
                sql_i64(&path, &format!("SELECT {what} FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind IN ({copy_kinds})"))
            };
            let count = q("count(*)");
            let row = rows.iter().find(|t| t["direction"] == direction);
            let Some(row) = row else {
                assert_eq!(count, 0, "{file} {direction}");
                continue;
            };
            assert_eq!(row["count"].as_i64().unwrap(), count, "{file} {direction}");
            assert_eq!(
                row["bytes"].as_i64().unwrap(),
                q("sum(bytes)"),
                "{file} {direction}"
            );
            assert_eq!(
                row["time_ns"].as_i64().unwrap(),
                q("sum(\"end\" - start)"),
                "{file} {direction}"
            );
            let bw = sql_i64(&path, "SELECT memoryBandwidth FROM TARGET_INFO_GPU LIMIT 1");
            assert_eq!(row["device_bandwidth_bytes_per_s"].as_i64().unwrap(), bw);
            let achieved = row["bandwidth_bytes_per_s"].as_f64().unwrap();
            let want = q("sum(bytes)") as f64 * 1e9 / q("sum(\"end\" - start)") as f64;
            assert!((achieved - want).abs() <= 1e-9 * want, "{file} {direction}");
            rows_checked += 1;
        }
    }
    // isc25icon: DtoH and unified; testcuda: HtoD and DtoH; nsightful: DtoH.
    assert_eq!(rows_checked, 5);
}
