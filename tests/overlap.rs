//! Records of one row that overlap (kernels of one stream launched by graph or stream capture,
//! memory operations, a driver call inside a runtime call): the row shows the one that started
//! last, then the one still running again, so that each stream's kernel time in the trace is the
//! union of its kernels in the export. Checked on synthetic overlaps with exact event sequences,
//! and with `prvsight check --against` (verify.rs) on every real export.

mod common;

use std::path::PathBuf;

use common::{convert, shared_inputs, Converted};
use prvsight::nsys::Export;
use prvsight::paraver::check::{check_readers, CheckOptions};
use prvsight::synth::{names, ExportBuilder, Session, StreamKind};
use prvsight::Options;

const KERNEL: u64 = 63_000_006;
const MEMORY_OP: u64 = 63_000_001;
const CUDA_API: u64 = 63_000_000;

/// One stream: kernels A [1000, 2000) and B [1500, 3000) cross; D [4500, 5000) runs inside C
/// [4000, 7000); memcpy M [8000, 9000) holds memset S [8200, 8400) and is crossed by kernel E
/// [8800, 9500). The host thread: a runtime call [500, 3500) around a driver call [600, 900).
fn overlapping_export(dir: &std::path::Path) -> PathBuf {
    let mut b = ExportBuilder::new(
        "overlaps",
        Session {
            utc_epoch_ns: 1_780_000_000_000_000_000,
            system_clock_ns: 0,
            hostname: "node0".into(),
        },
    );
    let p = b.add_process(4242, "python3", None, 100);
    let t = b.main_thread(p);
    let gpu = b.add_gpu(0, "NVIDIA H100 80GB HBM3");
    let s = b.add_stream(p, gpu, 7, StreamKind::Default);
    let outer = b.correlation(p.pid);
    b.runtime_call(t, 500, 3000, "cudaGraphLaunch_v10000", outer);
    let inner = b.correlation(p.pid);
    b.runtime_call(t, 600, 300, "cuLaunchKernel", inner);
    let kernels = [
        (1000, 1000, names::elementwise_add()),
        (1500, 1500, names::layer_norm()),
        (4000, 3000, names::flash_fwd()),
        (4500, 500, names::elementwise_add()),
        (8800, 700, names::layer_norm()),
    ];
    for (start, dur, k) in kernels {
        b.kernel(s, start, dur, &k, [1, 1, 1], [128, 1, 1], outer, None)
            .unwrap();
    }
    b.memcpy(s, 8000, 1000, 4096, 1, 0, 2, outer).unwrap();
    b.memset(s, 8200, 200, 1024, 0, outer).unwrap();
    let path = dir.join(format!("overlaps-{}.sqlite", std::process::id()));
    b.write_path(&path).unwrap();
    path
}

/// The values of `ty` on row (task, thread), in order, as (time, value).
fn values_on_row(prv: &str, task: u64, thread: u64, ty: u64) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    for line in prv.lines().filter(|l| l.starts_with("2:")) {
        let f: Vec<u64> = line.split(':').map(|x| x.parse().unwrap()).collect();
        if (f[3], f[4]) != (task, thread) {
            continue;
        }
        for p in f[6..].chunks(2) {
            if p[0] == ty {
                out.push((f[5], p[1]));
            }
        }
    }
    out
}

/// The name value (name id + 100) the .pcf gives `label` under type `ty`.
fn value_of(pcf: &str, ty: u64, label: &str) -> u64 {
    let section = pcf
        .split("EVENT_TYPE")
        .find(|s| s.contains(&format!(" {ty} ")))
        .unwrap_or_else(|| panic!("type {ty} is in the .pcf"));
    section
        .lines()
        .find_map(|l| {
            let (v, rest) = l.trim().split_once(char::is_whitespace)?;
            (rest.trim() == label).then(|| v.parse().unwrap())
        })
        .unwrap_or_else(|| panic!("{label} is a value of {ty}"))
}

/// Checks the trace and holds it against its exports: every GPU stream agrees.
fn assert_streams_agree(out: &Converted, inputs: &[PathBuf], what: &str) -> usize {
    let report = check_readers(
        out.prv.as_bytes(),
        &out.pcf,
        &out.row,
        &CheckOptions::default(),
    );
    assert!(report.is_ok(), "{what}: {report}");
    let exports: Vec<Export> = inputs
        .iter()
        .map(|p| Export::open_path(p).unwrap())
        .collect();
    let streams = prvsight::verify::against_exports(&report, &out.row, &exports).unwrap();
    for s in &streams {
        assert!(s.agrees(), "{what}: {s:?}");
    }
    streams.len()
}

#[test]
fn overlapping_records_show_the_latest_then_the_one_still_running() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let input = overlapping_export(&dir);
    let out = convert(std::slice::from_ref(&input), &Options::default()).unwrap();
    // Task 1: the host thread is thread 1, the stream thread 2; time 0 is the first record (500).
    let name = |ty, k: &prvsight::synth::KernelDef| value_of(&out.pcf, ty, &k.demangled);
    let (add, norm, flash) = (
        name(KERNEL, &names::elementwise_add()),
        name(KERNEL, &names::layer_norm()),
        name(KERNEL, &names::flash_fwd()),
    );
    assert_eq!(
        values_on_row(&out.prv, 1, 2, KERNEL),
        [
            (500, add),
            (1000, norm),
            (2500, 0),
            (3500, flash),
            (4000, add),
            (4500, flash),
            (6500, 0),
            (8300, norm),
            (9000, 0),
        ]
    );
    assert_eq!(
        values_on_row(&out.prv, 1, 2, MEMORY_OP),
        [(7500, 2), (7700, 20), (7900, 2), (8500, 0)],
        "memcpy HtoD (2), the memset (20) inside it, the memcpy again"
    );
    let (graph, launch) = (
        value_of(&out.pcf, CUDA_API, "cudaGraphLaunch"),
        value_of(&out.pcf, CUDA_API, "cuLaunchKernel"),
    );
    assert_eq!(
        values_on_row(&out.prv, 1, 1, CUDA_API),
        [(0, graph), (100, launch), (400, graph), (3000, 0)]
    );
    assert_eq!(assert_streams_agree(&out, &[input], "overlaps"), 1);
}

#[test]
fn every_real_exports_streams_show_the_exports_kernel_and_memory_time() {
    let Some(inputs) = shared_inputs() else {
        return;
    };
    let mut streams = 0;
    for set in &inputs {
        let what = format!(
            "{:?}",
            set.iter()
                .map(|p| p.file_name().unwrap())
                .collect::<Vec<_>>()
        );
        let out = convert(set, &Options::default()).unwrap();
        streams += assert_streams_agree(&out, set, &what);
    }
    // testcuda 4 streams, mfu before/after and isc25icon 2 each, fuser, nsightful and
    // weatherbench2 (its memset) 1 each.
    assert_eq!(streams, 13);
}
