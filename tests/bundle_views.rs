//! The bundle's Paraver views apply to the trace they ship with: every cfg in the archive passes
//! the cfg checker (what `prvsight check TRACE --cfg CFG` runs) on the archive's own trace, the
//! views left out would not, NVTX push/pop views follow the domains that hold ranges, and the
//! README lists both. The writer's account of its body, which picks the views, is what the
//! checker finds in the files.

#![cfg(not(target_family = "wasm"))]

mod common;
#[path = "support/zipread.rs"]
mod zipread;

use std::collections::BTreeMap;
use std::io::Read;
use std::path::PathBuf;

use prvsight::bundle::{self, write_bundle, BundleOptions, Bundled};
use prvsight::nsys::Export;
use prvsight::options::Chop;
use prvsight::paraver::cfg::{self, Severity, TraceFacts};
use prvsight::paraver::check::{check_readers, CheckOptions};
use prvsight::paraver::ParaverWriter;
use prvsight::pipeline;
use prvsight::Options;

fn sample() -> PathBuf {
    common::data("testcuda_report1.sqlite")
}

/// The bundle of `exports` (gzipped trace, no metrics), with its entries by path under the
/// folder.
fn bundle_of(exports: &[Export], opts: &Options) -> (Bundled, BTreeMap<String, Vec<u8>>) {
    let bopts = BundleOptions {
        stem: "t".into(),
        gzip: Some(prvsight::paraver::TRACE_GZIP_LEVEL),
        metrics: None,
        timeline: None,
    };
    let (done, bytes) = write_bundle(exports, opts, &bopts, Vec::new(), &mut |_| true).unwrap();
    let entries = zipread::read_zip(&bytes).unwrap();
    let files = entries
        .into_iter()
        .map(|e| (e.name.strip_prefix("t/").unwrap().to_owned(), e.data))
        .collect();
    (done, files)
}

fn open(paths: &[PathBuf]) -> Vec<Export> {
    paths
        .iter()
        .map(|p| Export::open_path(p).unwrap())
        .collect()
}

/// The facts of the archive's trace as `prvsight check` reads them from the three files.
fn facts_of_files(files: &BTreeMap<String, Vec<u8>>) -> TraceFacts {
    let mut prv = Vec::new();
    flate2::read::GzDecoder::new(&files["t.prv.gz"][..])
        .read_to_end(&mut prv)
        .unwrap();
    let pcf = String::from_utf8(files["t.pcf"].clone()).unwrap();
    let row = String::from_utf8(files["t.row"].clone()).unwrap();
    let report = check_readers(&prv[..], &pcf, &row, &CheckOptions::default());
    assert!(report.is_ok(), "{report}");
    TraceFacts::from_report(&report)
}

/// Checks the bundle of `paths`; gives the .cfg files it ships and the ones it leaves out.
fn check_bundle(paths: &[PathBuf]) -> (Vec<String>, Vec<String>) {
    let what = paths[0].display();
    let (done, files) = bundle_of(&open(paths), &Options::default());
    let facts = facts_of_files(&files);
    let shipped: Vec<String> = (files.keys())
        .filter_map(|p| p.strip_prefix("cfgs/"))
        .filter(|p| p.ends_with(".cfg"))
        .map(str::to_owned)
        .collect();
    for name in &shipped {
        let text = String::from_utf8(files[&format!("cfgs/{name}")].clone()).unwrap();
        let findings = cfg::assess_cfg(&cfg::parse(&text), &facts);
        let errors: Vec<_> = (findings.iter())
            .filter(|f| f.severity == Severity::Error)
            .collect();
        assert!(
            errors.is_empty(),
            "{what}: {name} does not apply: {errors:#?}"
        );
    }
    let left_out: Vec<String> = done.views.left_out.iter().map(|(p, _)| p.clone()).collect();
    for (name, why) in &done.views.left_out {
        let text = bundle::cfgs().iter().find(|(p, _)| p == name).unwrap().1;
        assert!(
            !cfg::cfg_applies(&cfg::parse(text), &facts),
            "{what}: {name} left out but applies"
        );
        assert!(
            done.readme.contains(&format!("  {name}: {why}\n")),
            "{what}: {}",
            done.readme
        );
    }
    // Every static view is either shipped or left out; the rest shipped are NVTX domain views.
    for (p, _) in bundle::cfgs().iter().filter(|(p, _)| p.ends_with(".cfg")) {
        assert!(
            shipped.iter().any(|s| s == p) != left_out.iter().any(|s| s == p),
            "{what}: {p}"
        );
    }
    for s in shipped
        .iter()
        .filter(|s| !bundle::cfgs().iter().any(|(p, _)| p == s))
    {
        assert!(s.starts_with("nvtx_pushpop_"), "{what}: {s}");
    }
    let listed = done.readme.split("Views in cfgs/").nth(1).unwrap_or("");
    for s in &shipped {
        assert!(listed.contains(s.as_str()), "{what}: README misses {s}");
    }
    assert!(files.contains_key("cfgs/README.md"), "{what}");
    (shipped, left_out)
}

#[test]
fn every_cfg_of_the_sample_bundle_applies_to_its_trace() {
    let (shipped, left_out) = check_bundle(&[sample()]);
    // 4 kernels, memcpys and API calls, CUDA events and pthread calls: no NCCL, no NVTX, no
    // GPU memory usage, no OpenMP, no CPU counters, no NIC metrics.
    assert_eq!(
        left_out,
        [
            "comm_compute_overlap.cfg",
            "families/cpu_counters.cfg",
            "families/gpu_memory.cfg",
            "families/nic_bytes_sent.cfg",
            "families/openmp_barriers.cfg",
            "model/nccl_bandwidth.cfg",
            "nccl_kernels.cfg",
            "nvtx_pushpop.cfg",
            "nvtx_startend.cfg"
        ]
    );
    assert_eq!(shipped.len(), 19, "{shipped:?}");
}

/// The NVTX push/pop views each real export's bundle ships, by input (a folder for ranks).
fn nvtx_views_of(first_input: &str) -> &'static [&'static str] {
    match first_input {
        "fuser_report1_a.sqlite" => &["nvtx_pushpop.cfg"],
        "nsightful_power_iteration.sqlite" => &["nvtx_pushpop.cfg", "nvtx_pushpop_CCCL.cfg"],
        "isc25icon_gpu.sqlite" => &["nvtx_pushpop_STDPAR.cfg"],
        "mfu_2gpu_after.sqlite" | "mfu_2gpu_before.sqlite" => {
            &["nvtx_pushpop.cfg", "nvtx_pushpop_NCCL.cfg"]
        }
        "nvtx_demo_nsys2022.4.sqlite" => &["nvtx_pushpop.cfg", "nvtx_pushpop_MyDomain.cfg"],
        // Ranks converted together (named by their folder).
        "mpi4/" => &["nvtx_pushpop.cfg", "nvtx_pushpop_app.cfg"],
        // nsys 2022.4 records MPI calls as ranges of an `MPI` domain.
        "mpi4_nsys2022.4/" => &[
            "nvtx_pushpop.cfg",
            "nvtx_pushpop_MPI.cfg",
            "nvtx_pushpop_app.cfg",
        ],
        _ => &[],
    }
}

#[test]
fn every_cfg_of_each_real_bundle_applies_to_its_trace() {
    let Some(inputs) = common::shared_inputs() else {
        return;
    };
    for paths in inputs {
        let (shipped, left_out) = check_bundle(&paths);
        let first = paths[0].file_name().unwrap().to_str().unwrap();
        eprintln!(
            "{first} (+{}): ships {shipped:?}, leaves out {left_out:?}",
            paths.len() - 1
        );
        let nvtx: Vec<&str> = (shipped.iter())
            .map(String::as_str)
            .filter(|s| s.starts_with("nvtx_pushpop"))
            .collect();
        let key = match paths.len() {
            1 => first.to_owned(),
            _ => format!(
                "{}/",
                paths[0]
                    .parent()
                    .unwrap()
                    .file_name()
                    .unwrap()
                    .to_str()
                    .unwrap()
            ),
        };
        assert_eq!(nvtx, nvtx_views_of(&key), "{key}");
    }
}

/// The views of the bundle for an export whose push/pop ranges are all in domain `STDPAR`.
#[test]
fn ranges_in_a_named_domain_only_get_its_view_on_9700() {
    use prvsight::synth::{ExportBuilder, NvtxText, Session};
    let mut b = ExportBuilder::new(
        "named",
        Session {
            utc_epoch_ns: 1_780_000_000_000_000_000,
            system_clock_ns: 0,
            hostname: "node0".into(),
        },
    );
    let p = b.add_process(4242, "app", None, 1_000);
    let t = b.main_thread(p);
    b.nvtx_domain_create(t, 2_000, 7, "STDPAR");
    b.nvtx_push_pop(t, 10_000, 90_000, NvtxText::Inline("outer"), 7, None)
        .unwrap();
    b.nvtx_push_pop(t, 20_000, 30_000, NvtxText::Inline("inner"), 7, None)
        .unwrap();
    let ex = Export::from_bytes(&b.to_bytes().unwrap(), "named.sqlite").unwrap();
    let (done, files) = bundle_of(&[ex], &Options::default());
    let facts = facts_of_files(&files);
    assert_eq!(
        facts.event_types.keys().copied().collect::<Vec<_>>(),
        [9700, 9701, 9702]
    );
    let text = String::from_utf8(files["cfgs/nvtx_pushpop_STDPAR.cfg"].clone()).unwrap();
    let c = cfg::parse(&text);
    let selected: Vec<(u64, &str)> = (c.windows.iter())
        .map(|w| (w.evt_types[0], w.evt_type_labels[0].as_str()))
        .collect();
    assert_eq!(
        selected,
        [
            (9700, "NVTX push/pop ranges, domain STDPAR"),
            (9701, "NVTX push/pop ranges, domain STDPAR, nesting level 1")
        ]
    );
    assert_eq!(cfg::check_cfg(&c, &facts), Vec::<String>::new());
    for (name, data) in files.iter().filter(|(p, _)| p.ends_with(".cfg")) {
        let types = cfg::parse(&String::from_utf8_lossy(data)).required_event_types();
        assert!(!types.contains(&9600), "{name} selects 9600");
    }
    assert!(!files.contains_key("cfgs/nvtx_pushpop.cfg"));
    assert!(
        done.readme.contains("  nvtx_pushpop.cfg: window 1 'NVTX ranges (innermost)': event type 9600 is not declared in the trace's .pcf\n"),
        "{}",
        done.readme
    );
}

/// What the writer says it wrote, with and without a time window, is what the checker reads.
#[test]
fn the_writers_account_of_its_body_is_what_the_checker_finds() {
    let mut inputs = vec![vec![sample()]];
    if let Some(shared) = common::shared_inputs() {
        inputs.extend(shared);
    }
    for paths in inputs {
        let whole = common::convert(&paths, &Options::default()).unwrap();
        let end = whole.summary.trace.end_time;
        for chop in [
            None,
            Some(Chop::Window {
                start: end / 3,
                end: end / 3 * 2,
            }),
        ] {
            let opts = Options {
                chop: chop.clone(),
                ..Options::default()
            };
            let (mut prv, mut pcf, mut row) = (Vec::new(), Vec::new(), Vec::new());
            let written = {
                let mut w =
                    ParaverWriter::new(Box::new(&mut prv), Box::new(&mut pcf), Box::new(&mut row));
                pipeline::run(&open(&paths), &opts, &mut [&mut w], &mut |_| true).unwrap();
                w.written()
            };
            let (pcf, row) = (
                String::from_utf8(pcf).unwrap(),
                String::from_utf8(row).unwrap(),
            );
            let report = check_readers(&prv[..], &pcf, &row, &CheckOptions::default());
            let what = format!("{} {chop:?}", paths[0].display());
            assert_eq!(written.body.event_types, report.stats.event_types, "{what}");
            assert_eq!(written.body.states, report.stats.states, "{what}");
            assert_eq!(written.body.comm_tags, report.stats.comm_tags, "{what}");
            assert_eq!(
                TraceFacts::from_written(&written, &pcf),
                TraceFacts::from_report(&report),
                "{what}"
            );
        }
    }
}

/// `prvsight check TRACE --cfg CFG` passes for every cfg of a bundle written by `prvsight bundle`.
#[test]
fn the_cli_check_accepts_every_cfg_of_the_cli_bundle() {
    let exe = env!("CARGO_BIN_EXE_prvsight");
    let dir = std::env::temp_dir().join(format!("prvsight-bundle-views-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let zip = dir.join("s.zip");
    let out = std::process::Command::new(exe)
        .arg("bundle")
        .arg(sample())
        .arg("-o")
        .arg(&zip)
        .arg("-q")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let entries = zipread::read_zip(&std::fs::read(&zip).unwrap()).unwrap();
    let mut cfgs = Vec::new();
    for e in &entries {
        let path = dir.join(&e.name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &e.data).unwrap();
        if e.name.ends_with(".cfg") {
            cfgs.push(path);
        }
    }
    // The sample's views (tests/bundle.rs): those of its kernels, copies, API calls, CUDA
    // events, pthread calls, the device state and the SM occupancy.
    assert_eq!(cfgs.len(), 19);
    let mut check = std::process::Command::new(exe);
    check.arg("check").arg(dir.join("s/s.prv.gz"));
    for c in &cfgs {
        check.arg("--cfg").arg(c);
    }
    let out = check.output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert_eq!(text.matches(": applies").count(), 19, "{text}");
    std::fs::remove_dir_all(&dir).unwrap();
}
