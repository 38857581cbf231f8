//! `nic`: NIC metrics (`--nic-metrics`, NET_NIC_METRIC) of a host with two ConnectX-6 NICs, one
//! InfiniBand (mlx5_0), one Ethernet (mlx5_1), sampled every millisecond for 10 ms while one
//! process waits in a CUDA call. Each NIC reports its link's four traffic metrics (bytes and
//! packets received and sent), named as nsys names them in TARGET_INFO_NETWORK_METRICS; the
//! InfiniBand NIC's bytes sent ramp up to a peak in the middle, the rest are constant.

use super::{builder, Scenario, T_INIT, T_WORK};
use crate::error::Result;
use crate::synth::builder::ExportBuilder;
use crate::synth::ids::GLOBAL_VID;
use crate::synth::spec::{counts, ScenarioSpec};
use rusqlite::types::Value;

const PID: u32 = 60_061;
const SAMPLES: i64 = 10;
const SAMPLE_NS: i64 = 1_000_000;
/// The metric list nsys writes for ConnectX NICs (metricsListId 0): index, name, unit.
pub const METRICS: [(i64, &str, &str); 15] = [
    (0, "Eth: Bytes received", "bytes/ms"),
    (1, "Eth: Packets received", "packets/ms"),
    (2, "Eth: Bytes sent", "bytes/ms"),
    (3, "Eth: Packets sent", "packets/ms"),
    (4, "IB: Bytes received", "bytes/ms"),
    (5, "IB: Packets received", "packets/ms"),
    (6, "IB: Bytes sent", "bytes/ms"),
    (7, "IB: Packets sent", "packets/ms"),
    (8, "IB: CNPs received", "packets/ms"),
    (9, "IB: CNPs sent", "packets/ms"),
    (10, "IB: Send waits", "ticks/ms"),
    (11, "Eth: Avg. sent packet size", "bytes"),
    (12, "Eth: Avg. received packet size", "bytes"),
    (13, "IB: Avg. sent packet size", "bytes"),
    (14, "IB: Avg. received packet size", "bytes"),
];
/// The NICs: nicId, name, link layer (ENUM_NET_LINK_TYPE: 1 Ethernet, 2 InfiniBand), the metric
/// indexes it reports.
pub const NICS: [(i64, &str, i64, [i64; 4]); 2] = [
    (0, "mlx5_0", 2, [4, 5, 6, 7]),
    (1, "mlx5_1", 1, [0, 1, 2, 3]),
];
/// ENUM_NET_DEVICE_ID of ConnectX-6, ENUM_NET_VENDOR_ID of NVIDIA / Mellanox.
const CONNECTX6: i64 = 4123;
const NVIDIA: i64 = 5555;
/// The InfiniBand NIC's bytes sent per ms at sample `k` (peak at k = 5).
pub fn ib_bytes_sent(k: i64) -> i64 {
    1_000_000 * (5 - (k - 5).abs() + 1)
}

/// `globalId` of a NIC's samples.
pub fn global_id(nic: i64) -> i64 {
    GLOBAL_VID | 0x1000 | nic
}

/// Value of metric `idx` at sample `k`.
fn value(idx: i64, k: i64) -> i64 {
    match idx {
        6 => ib_bytes_sent(k),
        _ => 100 * (idx + 1),
    }
}

fn tables(b: &mut ExportBuilder) {
    for (idx, name, unit) in METRICS {
        let cols = "metricsListId metricsIdx name description unit";
        let row = vec![
            Value::Integer(0),
            Value::Integer(idx),
            Value::Text(name.to_owned()),
            Value::Text(name.to_owned()),
            Value::Text(unit.to_owned()),
        ];
        b.extra_row("TARGET_INFO_NETWORK_METRICS", cols, row);
    }
    for (nic, name, link, _) in NICS {
        let cols = "GUID stateName nicId name deviceId vendorId linkLayer";
        let row = vec![
            Value::Integer(0x08c0_eb03_0000_0000 + nic),
            Value::Text("Local (CLI)".to_owned()),
            Value::Integer(nic),
            Value::Text(name.to_owned()),
            Value::Integer(CONNECTX6),
            Value::Integer(NVIDIA),
            Value::Integer(link),
        ];
        b.extra_row("TARGET_INFO_NIC_INFO", cols, row);
        let row = vec![Value::Integer(nic), Value::Integer(global_id(nic))];
        b.extra_row("NIC_ID_MAP", "nicId globalId", row);
    }
}

fn samples(b: &mut ExportBuilder) {
    let cols = "start end globalId metricsListId metricsIdx value";
    for k in 0..SAMPLES {
        let start = T_WORK + k * SAMPLE_NS;
        for (nic, _, _, metrics) in NICS {
            for idx in metrics {
                let row = [
                    start,
                    start + SAMPLE_NS,
                    global_id(nic),
                    0,
                    idx,
                    value(idx, k),
                ];
                b.extra_row("NET_NIC_METRIC", cols, row.map(Value::Integer).to_vec());
            }
        }
    }
}

pub fn build(seed: u64) -> Result<Scenario> {
    let mut b = builder("nic", seed, "node-ib");
    b.capture_setting("PROCESS_0:COMMAND", "./allreduce");
    let p = b.add_process(PID, "allreduce", None, T_INIT);
    let main = b.main_thread(p);
    let corr = b.correlation(PID);
    let span = SAMPLES * SAMPLE_NS;
    b.runtime_call(main, T_WORK, span, "cudaStreamSynchronize_v3020", corr);
    tables(&mut b);
    samples(&mut b);
    Ok(Scenario {
        spec: spec(),
        export: b,
    })
}

fn spec() -> ScenarioSpec {
    let samples = SAMPLES as u64 * (NICS.len() * 4) as u64;
    ScenarioSpec::host_only(
        "nic",
        "NIC metrics of an InfiniBand and an Ethernet NIC every ms (NET_NIC_METRIC)",
        counts(&[("cuda-api", 1), ("nic", samples)]),
        vec![PID],
        1,
        &[("NET_NIC_METRIC", samples)],
    )
}
