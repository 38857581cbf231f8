//! The views of the nsys2prv 0.6 families and of the POP model (cfgs/families/, cfgs/model/):
//! each parses cleanly with a description, applies with no finding to the trace it is meant for
//! (the shipped sample, the synthetic `gpu_memory`, `openmp`, `cpu_counters`, `nic` and
//! `ddp4` exports), does not apply where its types are absent, and, where `PARAMEDIR` names BSC's
//! paramedir, loads there and computes.

use std::path::{Path, PathBuf};
use std::process::Command;

use prvsight::nsys::Export;
use prvsight::paraver::cfg::{self, check_cfg, TraceFacts};
use prvsight::paraver::check::{check_readers, CheckOptions};
use prvsight::paraver::ParaverWriter;
use prvsight::pipeline;
use prvsight::Options;

/// Each view, the trace it is meant for, and one it does not apply to.
const VIEWS: &[(&str, Trace, Trace)] = &[
    ("families/cuda_events.cfg", Trace::Sample, Trace::GpuMemory),
    ("families/pthread_calls.cfg", Trace::Sample, Trace::Ddp4),
    ("families/gpu_memory.cfg", Trace::GpuMemory, Trace::Sample),
    ("families/openmp_barriers.cfg", Trace::OpenMp, Trace::Sample),
    (
        "families/cpu_counters.cfg",
        Trace::CpuCounters,
        Trace::Sample,
    ),
    (
        "families/nic_bytes_sent.cfg",
        Trace::Nic,
        Trace::CpuCounters,
    ),
    ("model/device_state.cfg", Trace::Ddp4, Trace::GpuMemory),
    ("model/nccl_bandwidth.cfg", Trace::Ddp4, Trace::Sample),
    ("model/sm_occupancy.cfg", Trace::GpuMemory, Trace::OpenMp),
];

#[derive(Clone, Copy, Debug, PartialEq)]
enum Trace {
    /// tests/data/testcuda_report1.sqlite: CUDA events and pthread calls.
    Sample,
    /// The synthetic `gpu_memory` export: GPU memory usage, kernels, no memory operations.
    GpuMemory,
    /// The synthetic `ddp4` export: compute and NCCL kernels with payloads, memory operations.
    Ddp4,
    /// The synthetic `openmp` export: OpenMP regions, no GPU.
    OpenMp,
    /// The synthetic `cpu_counters` export: CPU counter samples on two threads, no GPU.
    CpuCounters,
    /// The synthetic `nic` export: an InfiniBand and an Ethernet NIC's metrics.
    Nic,
}

/// A folder of its own for each call (tests run in parallel and write the same names).
fn dir() -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("cfgs-families-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The export of `t`, as a file (in `folder` where it is made here).
fn export(t: Trace, folder: &Path) -> PathBuf {
    let scenario = match t {
        Trace::Sample => {
            return PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/data/testcuda_report1.sqlite"
            ))
        }
        Trace::GpuMemory => "gpu_memory",
        Trace::Ddp4 => "ddp4",
        Trace::OpenMp => "openmp",
        Trace::CpuCounters => "cpu_counters",
        Trace::Nic => "nic",
    };
    let path = folder.join(format!("{scenario}.sqlite"));
    let built = prvsight::synth::build(scenario, 1).unwrap();
    built.export.write_path(&path).unwrap();
    path
}

/// Converts `t` to `NAME.prv/.pcf/.row` in the test folder; the trace's facts and its .prv.
fn convert(t: Trace) -> (TraceFacts, PathBuf) {
    let folder = dir();
    let exports = vec![Export::open_path(&export(t, &folder)).unwrap()];
    let (mut prv, mut pcf, mut row) = (Vec::new(), Vec::new(), Vec::new());
    {
        let mut w = ParaverWriter::new(Box::new(&mut prv), Box::new(&mut pcf), Box::new(&mut row));
        pipeline::run(&exports, &Options::default(), &mut [&mut w], &mut |_| true).unwrap();
    }
    let base = folder.join(format!("{t:?}"));
    for (ext, bytes) in [("prv", &prv), ("pcf", &pcf), ("row", &row)] {
        std::fs::write(base.with_extension(ext), bytes).unwrap();
    }
    let pcf = String::from_utf8(pcf).unwrap();
    let row = String::from_utf8(row).unwrap();
    let report = check_readers(&prv[..], &pcf, &row, &CheckOptions::default());
    assert!(report.is_ok(), "{t:?}: {report}");
    (TraceFacts::from_report(&report), base.with_extension("prv"))
}

fn read_view(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("cfgs")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn each_view_applies_to_the_trace_it_is_meant_for_only() {
    for &(name, meant, other) in VIEWS {
        let text = read_view(name);
        assert!(text.starts_with("#ParaverCFG\n# prvsight view: "), "{name}");
        let c = cfg::parse(&text);
        assert!(c.problems.is_empty(), "{name}: {:#?}", c.problems);
        assert!(
            c.description
                .as_deref()
                .is_some_and(|d| d.len() > 30 && !d.contains('\n')),
            "{name}: a one-line description"
        );
        let (facts, _) = convert(meant);
        let problems = check_cfg(&c, &facts);
        assert!(problems.is_empty(), "{name} on {meant:?}: {problems:#?}");
        let (facts, _) = convert(other);
        assert!(!cfg::cfg_applies(&c, &facts), "{name} applies to {other:?}");
    }
}

#[test]
fn the_bundle_lists_them_in_the_readme() {
    let readme = read_view("README.md");
    for &(name, ..) in VIEWS {
        assert!(
            readme.contains(&format!("`{name}`")),
            "cfgs/README.md misses {name}"
        );
        assert!(
            prvsight::bundle::cfgs().iter().any(|(p, _)| *p == name),
            "{name} is not embedded"
        );
    }
}

/// paramedir (BSC's command-line Paraver) loads each view on its trace and writes values: the
/// expected ones where the scenario fixes them.
#[test]
fn paramedir_computes_each_view_on_its_trace() {
    let Some(paramedir) = std::env::var_os("PARAMEDIR") else {
        eprintln!("SKIP: PARAMEDIR not set (tests/independent.rs says how to build paramedir)");
        return;
    };
    for &(name, meant, _) in VIEWS {
        let (_, prv) = convert(meant);
        let out = prv.with_file_name(format!("{}.txt", name.replace('/', "_")));
        let run = Command::new(&paramedir)
            .arg(&prv)
            .arg(
                Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("cfgs")
                    .join(name),
            )
            .arg(&out)
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&run.stdout).into_owned()
            + &String::from_utf8_lossy(&run.stderr);
        // paramedir exits 0 on most errors: anything but the file written and the warning
        // that one of two alternative types is absent is a failure.
        for line in said.lines().filter(|l| !l.trim().is_empty()) {
            assert!(
                line.ends_with("file written.")
                    || line.contains("Some of the events specified in the filter"),
                "{name} on {meant:?}: paramedir said {line:?}"
            );
        }
        if name == "families/openmp_barriers.cfg" {
            // A histogram: per thread, its time in implicit barriers (the scenario's).
            let table = std::fs::read_to_string(&out).unwrap();
            let rows = table.lines().skip(1).take_while(|l| !l.trim().is_empty());
            let times: Vec<f64> = rows
                .map(|l| l.split('\t').nth(1).unwrap().trim().parse().unwrap())
                .collect();
            let expected = prvsight::synth::scenarios::openmp::barrier_ns_per_thread();
            let expected: Vec<f64> = expected.iter().map(|&n| n as f64).collect();
            assert_eq!(times, expected, "{name}: {table}");
            continue;
        }
        let written = std::fs::read_to_string(out.with_extension("txt.csv"))
            .unwrap_or_else(|e| panic!("{name}: paramedir wrote nothing ({e}): {said}"));
        let values: Vec<f64> = (written.lines())
            .map(|l| l.split('\t').nth(3).unwrap().parse().unwrap())
            .collect();
        let max = values.iter().copied().fold(0.0, f64::max);
        match name {
            // Device state reaches 2 (computing); the memory in use its peak, 960 MiB.
            "model/device_state.cfg" => assert_eq!(max, 2.0, "{name}"),
            "families/gpu_memory.cfg" => assert_eq!(max, 960.0 * 1048576.0, "{name}"),
            // Event ids 1 and 2 of the sample.
            "families/cuda_events.cfg" => assert_eq!(max, 2.0, "{name}"),
            // The largest count: core 0's cache misses in the last sample (3e6 + 4e3 + 9).
            "families/cpu_counters.cfg" => assert_eq!(max, 3_004_009.0, "{name}"),
            // The GEMMs' 384 threads of 168 registers and 213196 B of shared memory: one block
            // per SM, 12 of 64 warps; 0 between kernels.
            "model/sm_occupancy.cfg" => {
                assert!(
                    values.iter().all(|&v| v == 0.0 || v == 18.75),
                    "{name}: {values:?}"
                );
                assert_eq!(max, 18.75, "{name}");
            }
            // The InfiniBand NIC's peak: 6 MB sent in a millisecond.
            "families/nic_bytes_sent.cfg" => assert_eq!(max, 6_000_000.0, "{name}"),
            _ => assert!(max > 0.0, "{name}: nothing computed"),
        }
    }
}
