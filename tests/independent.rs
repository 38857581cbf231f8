//! Our traces read by other people's tools: BSC's pertalde (`ptd comprovar -e`, PyPI) syntax-checks
//! every trace, and BSC's own `paramedir` loads each with every view its bundle ships.
//!
//! pertalde: `scripts/test.sh` installs it (a venv under target/) and sets `PRVSIGHT_PTD`; the
//! test runs wherever `ptd` is found (that variable, `target/ptd-venv/bin/ptd`, or the PATH).
//!
//! paramedir is not packaged: build it from BSC's paraver-kernel sources (github.com/
//! bsc-performance-tools/paraver-kernel; Debian: libboost-{date-time,serialization,
//! program-options,filesystem,system}-dev libxml2-dev zlib1g-dev autoconf automake libtool),
//! in a folder outside this repository: `sh ./bootstrap && ./configure --prefix=$HOME/paramedir
//! --with-boost=/usr --with-boost-libdir=/usr/lib/x86_64-linux-gnu && make -j2 && make install`,
//! then run `PARAMEDIR=$HOME/paramedir/bin/paramedir cargo test --release --test independent`.
//! paramedir exits 0 on most errors, so its output is scanned: any line but "... file written."
//! (and the warning that some of a view's event types are absent) is a failure, and so is a
//! missing output. docs/ROBUSTNESS.md records what was run and seen.

mod common;

#[path = "support/zipread.rs"]
mod zipread;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{data, shared_inputs};
use prvsight::bundle::{write_bundle, BundleOptions};
use prvsight::metrics::MetricsOptions;
use prvsight::nsys::Export;
use prvsight::Options;

/// Every input set to check: the bundled sample, the shared real exports (each alone, the MPI
/// ranks together) and the synthetic scenarios.
fn input_sets() -> Vec<(String, Vec<PathBuf>)> {
    let mut sets = vec![("sample".to_owned(), vec![data("testcuda_report1.sqlite")])];
    for set in shared_inputs().unwrap_or_default() {
        let name = set[0]
            .parent()
            .filter(|_| set.len() > 1)
            .unwrap_or(&set[0])
            .file_stem()
            .unwrap()
            .to_string_lossy()
            .replace('.', "_");
        sets.push((name, set));
    }
    let dir = out_dir("synth");
    for (scenario, _) in prvsight::synth::SCENARIOS {
        let path = dir.join(format!("{scenario}.sqlite"));
        let sc = prvsight::synth::build(scenario, 1).unwrap();
        sc.export.write_path(&path).unwrap();
        sets.push((format!("synth_{scenario}"), vec![path]));
    }
    sets
}

fn out_dir(what: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("independent-{}-{what}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Writes the bundle of `inputs` (plain .prv) into `dir/name/`; gives the trace and the cfgs.
fn unpacked_bundle(name: &str, inputs: &[PathBuf], dir: &Path) -> (PathBuf, Vec<PathBuf>) {
    let exports: Vec<Export> = inputs
        .iter()
        .map(|p| Export::open_path(p).unwrap())
        .collect();
    let bopts = BundleOptions {
        stem: name.to_owned(),
        gzip: None,
        metrics: Some(MetricsOptions::default()),
        timeline: None,
    };
    let (_, zip) = write_bundle(
        &exports,
        &Options::default(),
        &bopts,
        Vec::new(),
        &mut |_| true,
    )
    .unwrap();
    let mut trace = PathBuf::new();
    let mut cfgs = Vec::new();
    for e in zipread::read_zip(&zip).unwrap() {
        let path = dir.join(&e.name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &e.data).unwrap();
        if e.name.ends_with(".prv") {
            trace = path;
        } else if e.name.ends_with(".cfg") {
            cfgs.push(path);
        }
    }
    (trace, cfgs)
}

fn ptd() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PRVSIGHT_PTD") {
        return Some(PathBuf::from(p));
    }
    let venv = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/target/ptd-venv/bin/ptd"
    ));
    if venv.is_file() {
        return Some(venv);
    }
    Command::new("ptd")
        .arg("--version")
        .output()
        .ok()
        .map(|_| PathBuf::from("ptd"))
}

#[test]
fn pertalde_finds_every_trace_well_formed() {
    let Some(ptd) = ptd() else {
        eprintln!("SKIP: pertalde's ptd not found (scripts/test.sh installs it)");
        return;
    };
    let dir = out_dir("ptd");
    let mut checked = 0;
    for (name, inputs) in input_sets() {
        let (trace, _) = unpacked_bundle(&name, &inputs, &dir);
        let out = Command::new(&ptd)
            .args(["comprovar", "-e"])
            .arg(&trace)
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && said.trim().is_empty(),
            "{name}: ptd comprovar -e: {said}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        checked += 1;
    }
    assert!(checked >= 7, "{checked} traces checked");
}

#[test]
fn paramedir_loads_every_trace_with_every_view_of_its_bundle() {
    let Some(paramedir) = std::env::var_os("PARAMEDIR") else {
        eprintln!("SKIP: PARAMEDIR not set (see this file's doc for how to build BSC's paramedir)");
        return;
    };
    let dir = out_dir("paramedir");
    let mut useful_compared = 0;
    for (name, inputs) in input_sets() {
        let (trace, cfgs) = unpacked_bundle(&name, &inputs, &dir);
        assert!(!cfgs.is_empty(), "{name}: the bundle ships views");
        for cfg in cfgs {
            let stem = cfg.file_stem().unwrap().to_string_lossy().to_string();
            let result = dir.join(format!("{name}-{stem}.txt"));
            let out = Command::new(&paramedir)
                .arg(&trace)
                .arg(&cfg)
                .arg(&result)
                .output()
                .unwrap();
            let said = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            // A view of several event types, some absent here (NCCL kernels in a trace without
            // them), gets this warning and is computed from the rest.
            let complaints: Vec<&str> = said
                .lines()
                .filter(|l| {
                    !l.trim().is_empty()
                        && !l.ends_with("file written.")
                        && !l.ends_with("Some of the events specified in the filter doesn't appear in the trace.")
                })
                .collect();
            assert!(complaints.is_empty(), "{name} {stem}: {said}");
            let written = std::fs::read_dir(&dir).unwrap().any(|e| {
                let e = e.unwrap().file_name().to_string_lossy().to_string();
                e.starts_with(&format!("{name}-{stem}.txt"))
            });
            assert!(written, "{name} {stem}: paramedir wrote nothing: {said}");
            if stem == "useful_time" {
                useful_compared += same_useful_time(&name, &trace, &result);
            }
        }
    }
    // The sample, fuser, isc25icon, nsightful, mfu ×2 (2 each) and the synthetic runs' GPUs.
    assert!(
        useful_compared >= 8,
        "{useful_compared} tasks' useful time compared"
    );
}

/// paramedir's useful time per task (useful_time.cfg, column 1) is the metrics' useful time of
/// the task's GPU, to the nanosecond, where the task has one GPU and T is the whole trace.
/// Gives the number of tasks compared.
fn same_useful_time(name: &str, trace: &Path, result: &Path) -> usize {
    let metrics = trace.parent().unwrap().join("metrics.json");
    let m: serde_json::Value = serde_json::from_slice(&std::fs::read(metrics).unwrap()).unwrap();
    if !m["window"]["mpi_start_ns"].is_null() {
        return 0;
    }
    let text = std::fs::read_to_string(result).unwrap();
    // Rows after the header: a task's name, then its time at value 0 and at value 1.
    let rows: Vec<Vec<&str>> = text
        .lines()
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .map(|l| l.split('\t').collect())
        .collect();
    let mut compared = 0;
    for r in m["ranks"].as_array().unwrap() {
        let gpus = r["gpus"].as_array().unwrap();
        if gpus.len() != 1 {
            continue;
        }
        let task = r["process"].as_u64().unwrap() as usize;
        let useful = r["device"]["useful_ns"].as_u64().unwrap();
        let paramedir: f64 = rows[task][2].trim().parse().unwrap();
        assert_eq!(paramedir, useful as f64, "{name}: task {task} useful time");
        compared += 1;
    }
    compared
}
