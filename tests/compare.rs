//! `prvsight compare` (src/metrics/compare.rs): the change of ln PE split exactly into the
//! factors' log changes, the verdict naming the factor that moved it, scale differences said,
//! and bad inputs refused; on the real before/after pair and the MPI runs.

mod common;

use std::path::PathBuf;

use common::shared_traces;
use prvsight::metrics::compare::compare;
use prvsight::nsys::Export;
use prvsight::{Error, Options};
use serde_json::Value;

fn report(paths: &[PathBuf]) -> Value {
    let exports: Vec<Export> = paths
        .iter()
        .map(|p| Export::open_path(p).unwrap())
        .collect();
    let r = prvsight::metrics::compute(&exports, &Options::default(), &Default::default()).unwrap();
    serde_json::from_str(&r.to_json().unwrap()).unwrap()
}

#[test]
fn the_change_of_pe_is_split_exactly_and_the_largest_factor_named() {
    let Some(dir) = shared_traces() else { return };
    let a = report(&[dir.join("mfu_2gpu_before.sqlite")]);
    let b = report(&[dir.join("mfu_2gpu_after.sqlite")]);
    let c = compare("before", &a, "after", &b).unwrap();
    assert_eq!(c.model, "device");
    let pe = &c.factors["parallel_efficiency"];
    let (pa, pb) = (
        a["efficiency"]["parallel_efficiency"].as_f64().unwrap(),
        b["efficiency"]["parallel_efficiency"].as_f64().unwrap(),
    );
    assert_eq!((pe.a, pe.b), (Some(pa), Some(pb)));
    let keys = [
        "load_balance",
        "communication_efficiency",
        "orchestration_efficiency",
    ];
    let sum: f64 = keys.iter().map(|k| c.factors[k].log_change.unwrap()).sum();
    assert!(
        (sum - (pb.ln() - pa.ln())).abs() < 1e-12,
        "{sum} vs {}",
        pb.ln() - pa.ln()
    );
    let shares: f64 = keys.iter().map(|k| c.factors[k].share.unwrap()).sum();
    assert!((shares - 1.0).abs() < 1e-9, "{shares}");
    let main = keys
        .iter()
        .max_by(|x, y| {
            let l = |k: &&&str| c.factors[**k].log_change.unwrap().abs();
            l(x).total_cmp(&l(y))
        })
        .unwrap();
    assert_eq!(c.verdict.main_factor, Some(*main));
    assert_eq!(
        c.verdict.direction,
        if pb > pa { "better" } else { "worse" }
    );
    let words = main.replace('_', " ");
    assert!(
        c.verdict
            .summary
            .starts_with(if pb > pa { "PE rose" } else { "PE fell" }),
        "{}",
        c.verdict.summary
    );
    assert!(
        c.verdict.summary.contains(&format!("mostly {words}")),
        "{}",
        c.verdict.summary
    );
    // Both have iterations: kernel time per iteration, each kernel in both top lists compared.
    assert_eq!(c.kernel_time, "per_iteration");
    let k = &c.kernels[0];
    assert_eq!(
        k.change_ns,
        Some(k.b_time_ns.unwrap() - k.a_time_ns.unwrap())
    );
    assert!(c
        .kernels
        .windows(2)
        .all(|w| match (w[0].change_ns, w[1].change_ns) {
            (Some(x), Some(y)) => x.abs() >= y.abs(),
            (_, None) => true,
            (None, Some(_)) => false,
        }));
    assert!(c.scale.is_empty(), "{:?}", c.scale);
}

#[test]
fn a_run_against_itself_is_unchanged_and_scale_differences_are_said() {
    let Some(dir) = shared_traces() else { return };
    let a = report(&[dir.join("mfu_2gpu_before.sqlite")]);
    let c = compare("a", &a, "a again", &a).unwrap();
    assert_eq!((c.verdict.direction, c.verdict.main_factor), ("same", None));
    assert!(
        c.verdict.summary.starts_with("PE is unchanged"),
        "{}",
        c.verdict.summary
    );
    let one = report(&[dir.join("nsightful_power_iteration.sqlite")]);
    let c = compare("2 GPUs", &a, "1 GPU", &one).unwrap();
    assert!(c.scale[0].starts_with("2 GPUs against 1"), "{:?}", c.scale);
    assert!(
        c.scale.iter().any(|s| s.contains("measured times differ")),
        "{:?}",
        c.scale
    );
}

#[test]
fn mpi_runs_compare_their_host_factors() {
    let Some(dir) = shared_traces() else { return };
    let ranks = |folder: &str| -> Vec<PathBuf> {
        (0..4)
            .map(|i| dir.join(format!("generated/{folder}/rank{i}.sqlite")))
            .collect()
    };
    let a = report(&ranks("mpi4"));
    let b = report(&ranks("mpi4_nsys2022.4"));
    let c = compare("2023", &a, "2022", &b).unwrap();
    assert_eq!(c.model, "host");
    assert_eq!(c.factors.len(), 3, "PE, LB, CommE");
    let sum = c.factors["load_balance"].log_change.unwrap()
        + c.factors["communication_efficiency"].log_change.unwrap();
    assert!((sum - c.factors["parallel_efficiency"].log_change.unwrap()).abs() < 1e-12);
    assert!(
        c.verdict.summary.starts_with("MPI PE"),
        "{}",
        c.verdict.summary
    );
    assert_eq!((c.a.iterations, c.b.iterations), (Some(20), Some(20)));
    assert_eq!((c.a.ranks, c.b.ranks), (4, 4));
}

#[test]
fn bad_inputs_are_refused_with_the_reason() {
    let not_a_report = serde_json::json!({"schema_version": 2});
    let a = serde_json::json!({"efficiency": {"gpus": 0}, "host": null});
    match compare("x.json", &not_a_report, "a", &a) {
        Err(Error::Usage(m)) => assert!(m.contains("x.json: not a prvsight metrics report"), "{m}"),
        other => panic!("{other:?}"),
    }
    match compare("cpu.json", &a, "cpu2.json", &a) {
        Err(Error::Usage(m)) => assert!(m.contains("no efficiency model in common"), "{m}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_cli_compares_reports_and_exports() {
    let Some(dir) = shared_traces() else { return };
    let bin = env!("CARGO_BIN_EXE_prvsight");
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let a = tmp.join(format!("compare-a-{}.json", std::process::id()));
    let out = std::process::Command::new(bin)
        .args(["metrics", "--json"])
        .arg(dir.join("mfu_2gpu_before.sqlite"))
        .output()
        .unwrap();
    std::fs::write(&a, &out.stdout).unwrap();
    let out = std::process::Command::new(bin)
        .arg("compare")
        .arg(&a)
        .arg(dir.join("mfu_2gpu_after.sqlite"))
        .arg("--json")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    for k in ["a", "b", "factors", "verdict", "model", "scale", "kernels"] {
        assert!(v.get(k).is_some(), "{k}");
    }
    let main = v["verdict"]["main_factor"].as_str().unwrap();
    assert!([
        "load_balance",
        "communication_efficiency",
        "orchestration_efficiency"
    ]
    .contains(&main));
    let text = std::process::Command::new(bin)
        .arg("compare")
        .arg(&a)
        .arg(dir.join("mfu_2gpu_after.sqlite"))
        .output()
        .unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.starts_with(v["verdict"]["summary"].as_str().unwrap()),
        "{text}"
    );
    let bad = std::process::Command::new(bin)
        .arg("compare")
        .arg(&a)
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"))
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("neither an export nor a metrics report"));
}
