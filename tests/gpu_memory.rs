//! The `gpu-memory` family (issue 43, nsys2prv 0.6 parity) on the synthetic `gpu_memory` export
//! (no public export has CUDA_GPU_MEMORY_USAGE_EVENTS): one instant per device memory change on a
//! GPU stream of the process, 66500001/2 = bytes allocated/freed as nsys2prv 0.6 numbers them,
//! 66500003 = what the process has in use after it; counts equal SQL; alone it still converts;
//! a process with no stream on that GPU gets one; the JSON has the counter.

mod common;

use std::path::PathBuf;

use common::{convert, count_prv, mutated, sql_count};
use prvsight::model::ThreadKind;
use prvsight::options::Family;
use prvsight::synth::scenarios::gpu_memory::in_use_after_each;
use prvsight::Options;

const MIB: u64 = 1 << 20;
const DEVICE_ROWS: &str = "SELECT count(*) FROM CUDA_GPU_MEMORY_USAGE_EVENTS WHERE memKind = 2";

/// The scenario's export, or one changed by `sql`, in a file of its own.
fn export(name: &str, sql: Option<&str>) -> PathBuf {
    let bytes = prvsight::synth::build("gpu_memory", 1)
        .unwrap()
        .export
        .to_bytes()
        .unwrap();
    let bytes = match sql {
        Some(sql) => mutated(&bytes, sql),
        None => bytes,
    };
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("gpu-memory-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.sqlite"));
    std::fs::write(&path, bytes).unwrap();
    path
}

/// (type, value) of the `66500001..3` events, in trace order.
fn memory_events(prv: &str) -> Vec<(u64, u64)> {
    prv.lines()
        .filter(|l| l.starts_with("2:"))
        .flat_map(|l| {
            let f: Vec<u64> = l.split(':').map(|x| x.parse().unwrap()).collect();
            f[6..].chunks(2).map(|p| (p[0], p[1])).collect::<Vec<_>>()
        })
        .filter(|(ty, _)| (66_500_001..=66_500_003).contains(ty))
        .collect()
}

#[test]
fn device_memory_changes_become_instants_with_the_memory_in_use() {
    let path = export("plain", None);
    let c = convert(std::slice::from_ref(&path), &Options::default()).unwrap();
    let rows = sql_count(&path, DEVICE_ROWS);
    assert_eq!(
        rows, 6,
        "the scenario's device memory rows (a pinned one is not)"
    );
    assert_eq!(c.summary.counts.get("gpu-memory"), Some(&rows));
    let events = memory_events(&c.prv);
    let in_use: Vec<u64> = (events.iter())
        .filter(|e| e.0 == 66_500_003)
        .map(|e| e.1)
        .collect();
    let expected: Vec<u64> = in_use_after_each()
        .iter()
        .map(|m| *m as u64 * MIB)
        .collect();
    assert_eq!(in_use, expected);
    let allocated: Vec<u64> = events
        .iter()
        .filter(|e| e.0 == 66_500_001)
        .map(|e| e.1 / MIB)
        .collect();
    assert_eq!(allocated, [256, 512, 64, 128]);
    let freed: Vec<u64> = events
        .iter()
        .filter(|e| e.0 == 66_500_002)
        .map(|e| e.1 / MIB)
        .collect();
    assert_eq!(freed, [512, 64]);
    // On the process's one GPU stream (thread 2 of task 1), never reset to 0: instants.
    assert!(c
        .prv
        .lines()
        .filter(|l| l.contains(":665000"))
        .all(|l| l.starts_with("2:0:1:1:2:")));
    assert!(!events.iter().any(|e| e.1 == 0));
    for ty in ["66500001", "66500002", "66500003"] {
        assert!(
            c.pcf.contains(&format!("    {ty}    GPU memory")),
            "{ty} declared"
        );
    }
}

#[test]
fn alone_or_without_a_stream_it_still_converts() {
    let path = export("alone", None);
    let opts = Options {
        families: Some([Family::GpuMemory].into_iter().collect()),
        ..Options::default()
    };
    let c = convert(std::slice::from_ref(&path), &opts).unwrap();
    assert_eq!(c.summary.counts.len(), 1);
    assert_eq!(c.summary.counts.get("gpu-memory"), Some(&6));
    let o = &c.summary.trace.objects;
    assert_eq!(
        o.threads.len(),
        1,
        "one stream of the process for its memory"
    );
    assert!(matches!(o.threads[0].kind, ThreadKind::GpuStream { .. }));
    assert!(count_prv(&c.prv).sorted);

    // A second process that only allocates on the GPU: a stream of its own, idle all along.
    let other = export(
        "other",
        Some(
            "INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS (start, globalPid, deviceId, contextId, \
             address, pc, bytes, memKind, memoryOperationType) SELECT start + 1, \
             (1 << 48) | (4242 << 24), deviceId, contextId, address, pc, bytes, memKind, \
             memoryOperationType FROM CUDA_GPU_MEMORY_USAGE_EVENTS",
        ),
    );
    let c = convert(std::slice::from_ref(&other), &Options::default()).unwrap();
    assert_eq!(c.summary.counts.get("gpu-memory"), Some(&12));
    let o = &c.summary.trace.objects;
    assert_eq!(o.processes.len(), 2);
    let streams = |p: usize| {
        (o.threads.iter())
            .filter(|t| t.process == p && matches!(t.kind, ThreadKind::GpuStream { .. }))
            .count()
    };
    assert_eq!((streams(0), streams(1)), (1, 1));
}

#[test]
fn the_json_has_a_counter_per_change() {
    let path = export("json", None);
    let exports = [prvsight::nsys::Export::open_path(&path).unwrap()];
    let mut buf = Vec::new();
    {
        let mut w = prvsight::chrome::ChromeWriter::new(Box::new(&mut buf));
        prvsight::pipeline::run(&exports, &Options::default(), &mut [&mut w], &mut |_| true)
            .unwrap();
    }
    let v: serde_json::Value = serde_json::from_slice(&buf).unwrap();
    let counters: Vec<u64> = (v["traceEvents"].as_array().unwrap().iter())
        .filter(|e| e["cat"] == "gpu-memory")
        .map(|e| {
            assert_eq!(e["ph"], "C");
            assert_eq!(e["name"], "GPU0 memory in use");
            e["args"]["bytes"].as_u64().unwrap() / MIB
        })
        .collect();
    let expected: Vec<u64> = in_use_after_each().iter().map(|m| *m as u64).collect();
    assert_eq!(counters, expected);
}
