//! `nvtx_payloads`: one process whose library creates the NVTX domain `Trainer` and registers a
//! static payload schema (NVTX_PAYLOAD_SCHEMAS / ENTRIES: a uint64 step, a double loss, a
//! 16-byte C string phase); each of its 6 `train_step` push/pop ranges carries that payload,
//! rendered to `jsonText` as `nsys export --include-json true` writes it. Besides: a `Trainer`
//! range without payload and a default-domain range whose payload has a `Step` field too (not in
//! the domain a config would name). No GPU work.

use super::{builder, Scenario, T_INIT, T_WORK};
use crate::error::Result;
use crate::synth::builder::NvtxText;
use crate::synth::rows::PayloadSchema;
use crate::synth::spec::{counts, ScenarioSpec};

const PID: u32 = 60_081;
/// The domain id nsys gives the process's first created domain.
pub const DOMAIN_ID: i64 = 1;
pub const DOMAIN: &str = "Trainer";
/// Steps (ranges with a payload), 1 ms apart, 800 µs each.
pub const STEPS: u64 = 6;
const PERIOD: i64 = 1_000_000;
const STEP_NS: i64 = 800_000;
/// `NVTX_PAYLOAD_ENTRY_TYPE_SCHEMA_ID_STATIC_START`: the first id a library may give its schema.
const STATIC_START: i64 = 1 << 24;
/// Payload entry types (nvToolsExtPayload.h): uint64, double, C string (fixed size).
const T_UINT64: i64 = 18;
const T_DOUBLE: i64 = 20;
const T_CSTRING: i64 = 75;
/// The schema's entries: (type, name, byte offset).
pub const ENTRIES: [(i64, &str, i64); 3] = [
    (T_UINT64, "Step", 0),
    (T_DOUBLE, "Loss", 8),
    (T_CSTRING, "Phase", 16),
];

/// Step `k`'s payload fields: its number, its loss, its phase (every third step evaluates).
pub fn payload(k: u64) -> (u64, f64, &'static str) {
    let phase = if k % 3 == 2 { "eval" } else { "train" };
    (k + 1, 10.0 - 1.5 * k as f64, phase)
}

fn json(k: u64) -> String {
    let (step, loss, phase) = payload(k);
    format!("{{\"Step\":{step},\"Loss\":{loss:?},\"Phase\":\"{phase}\"}}")
}

pub fn build(seed: u64) -> Result<Scenario> {
    let mut b = builder("nvtx_payloads", seed, "node-train");
    b.capture_setting("PROCESS_0:COMMAND", "./train");
    let p = b.add_process(PID, "train", None, T_INIT);
    let main = b.main_thread(p);
    b.nvtx_domain_create(main, T_INIT + 100_000, DOMAIN_ID, DOMAIN);
    b.nvtx_payload_schema(PayloadSchema {
        domain_id: DOMAIN_ID,
        schema_id: STATIC_START + 1,
        payload_size: 32,
        entries: ENTRIES.to_vec(),
    });
    for k in 0..STEPS {
        let start = T_WORK + k as i64 * PERIOD;
        let name = NvtxText::Inline("train_step");
        b.nvtx_push_pop(main, start, start + STEP_NS, name, DOMAIN_ID, Some(json(k)))?;
    }
    let after = T_WORK + STEPS as i64 * PERIOD;
    let name = NvtxText::Inline("checkpoint");
    b.nvtx_push_pop(main, after, after + STEP_NS, name, DOMAIN_ID, None)?;
    let other = Some("{\"Step\":99}".to_owned());
    let name = NvtxText::Inline("log");
    b.nvtx_push_pop(main, after + PERIOD, after + PERIOD + 1000, name, 0, other)?;
    Ok(Scenario {
        spec: spec(),
        export: b,
    })
}

fn spec() -> ScenarioSpec {
    ScenarioSpec::host_only(
        "nvtx_payloads",
        "NVTX ranges of a library's own domain with schema'd payloads (jsonText)",
        counts(&[("nvtx-push-pop", STEPS + 2)]),
        vec![PID],
        1,
        &[("NVTX_PAYLOAD_SCHEMA_ENTRIES", ENTRIES.len() as u64)],
    )
}
