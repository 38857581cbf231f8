//! The split conversion from the command line: `convert --part K/N` and `merge` write the bytes
//! and metrics of one `convert` and `metrics --json`, and scripts/slurm/convert-array.sh submits
//! the parts and a merge that waits for them (run here with a stand-in for `sbatch`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use prvsight::synth::mpi_run::MpiRun;

fn prvsight(args: &[&dyn AsRef<std::ffi::OsStr>]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_prvsight"))
        .args(args.iter().map(|a| a.as_ref()))
        .output()
        .unwrap()
}

fn ok(out: Output) -> Output {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn dir(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("parts-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The files of trace `stem` (.prv.gz, .pcf, .row), read.
fn trace(stem: &Path) -> Vec<Vec<u8>> {
    ["prv.gz", "pcf", "row"]
        .iter()
        .map(|ext| std::fs::read(stem.with_extension(ext)).unwrap())
        .collect()
}

/// One conversion of `inputs` into `d/whole.*`, and its metrics JSON.
fn whole(d: &Path, inputs: &[PathBuf]) -> (Vec<Vec<u8>>, Vec<u8>) {
    let mut args: Vec<&dyn AsRef<std::ffi::OsStr>> = vec![&"convert", &"-q", &"-o"];
    let out = d.join("whole.prv.gz");
    args.push(&out);
    args.extend(inputs.iter().map(|p| p as &dyn AsRef<std::ffi::OsStr>));
    ok(prvsight(&args));
    let mut args: Vec<&dyn AsRef<std::ffi::OsStr>> = vec![&"metrics", &"--json"];
    args.extend(inputs.iter().map(|p| p as &dyn AsRef<std::ffi::OsStr>));
    let metrics = ok(prvsight(&args)).stdout;
    (trace(&d.join("whole")), metrics)
}

#[test]
fn parts_merge_into_the_bytes_and_metrics_of_one_conversion() {
    let d = dir("cli");
    let inputs = MpiRun::new(6).write(&d.join("ranks")).unwrap();
    let (whole_trace, whole_metrics) = whole(&d, &inputs);
    let part = |k: usize| d.join(format!("part{k}.prvpart"));
    for k in 1..=3 {
        let which = format!("{k}/3");
        let out = part(k);
        let mut args: Vec<&dyn AsRef<std::ffi::OsStr>> =
            vec![&"convert", &"--part", &which, &"-o", &out];
        args.extend(inputs.iter().map(|p| p as &dyn AsRef<std::ffi::OsStr>));
        let said = String::from_utf8(ok(prvsight(&args)).stderr).unwrap();
        assert!(
            said.contains(&format!("(part {k}/3: 2 of 6 inputs, ")),
            "{said}"
        );
    }
    let (merged, metrics) = (d.join("merged.prv.gz"), d.join("merged.json"));
    ok(prvsight(&[
        &"merge",
        &part(3),
        &part(1),
        &part(2),
        &"-o",
        &merged,
        &"--metrics",
        &metrics,
    ]));
    assert!(
        trace(&d.join("merged")) == whole_trace,
        "the merged trace differs"
    );
    assert!(
        std::fs::read(&metrics).unwrap() == whole_metrics,
        "the metrics differ"
    );

    // Refusals: one clear message, exit code 2 for what the user gave wrong.
    let refused = prvsight(&[&"merge", &part(1), &part(3), &"-o", &d.join("no.prv")]);
    assert_eq!(refused.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&refused.stderr),
        "prvsight: error: part 2/3 of this conversion is missing: merge takes all 3 parts\n"
    );
    assert!(!d.join("no.prv").exists());
    for (args, says) in [
        (
            vec!["--part", "0/3", "-o", "x"],
            "--part takes K/N with 1 ≤ K ≤ N",
        ),
        (
            vec!["--part", "2/3"],
            "--part writes a part: give its name with -o",
        ),
    ] {
        let mut all: Vec<&dyn AsRef<std::ffi::OsStr>> = vec![&"convert", &inputs[0]];
        all.extend(args.iter().map(|a| a as &dyn AsRef<std::ffi::OsStr>));
        let out = prvsight(&all);
        assert_eq!(out.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&out.stderr).contains(says));
    }
}

/// A stand-in for `sbatch`: records its arguments, refuses a job whose dependency has not
/// run, runs an array's tasks (in turn) or the job, and prints the job's id.
const SBATCH: &str = r#"#!/usr/bin/env bash
set -euo pipefail
printf '%s\n' "$*" >> "$STATE/calls"
id=$(( $(cat "$STATE/next" 2>/dev/null || echo 1000) + 1 ))
echo "$id" > "$STATE/next"
array='' wrap='' dep=''
for a in "$@"; do
  case $a in
    --array=*) array=${a#--array=} ;;
    --wrap=*) wrap=${a#--wrap=} ;;
    --dependency=afterok:*) dep=${a#--dependency=afterok:} ;;
  esac
done
if [ -n "$dep" ] && ! grep -qx "done $dep" "$STATE/jobs"; then echo "job $dep has not run" >&2; exit 1; fi
if [ -n "$array" ]; then
  for ((k = ${array%-*}; k <= ${array#*-}; k++)); do
    SLURM_ARRAY_TASK_ID=$k bash -c "$wrap" >> "$STATE/out" 2>&1
  done
else
  bash -c "$wrap" >> "$STATE/out" 2>&1
fi
echo "done $id" >> "$STATE/jobs"
echo "$id;cluster"
"#;

#[test]
fn slurm_script_submits_the_parts_and_a_merge_that_waits_for_them() {
    let d = dir("slurm");
    let inputs = MpiRun::new(5).write(&d.join("ranks with space")).unwrap();
    let (whole_trace, whole_metrics) = whole(&d, &inputs);
    let state = d.join("state");
    std::fs::create_dir_all(&state).unwrap();
    let sbatch = d.join("sbatch");
    std::fs::write(&sbatch, SBATCH).unwrap();
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scripts/slurm/convert-array.sh"
    );
    let out = Command::new("bash")
        .arg(script)
        .args(["-n", "3", "-o", "out/run.prv.gz", "-m", "out/run.json"])
        .args(["-s", "-p test --time=5"])
        .args(&inputs)
        .current_dir(&d)
        .env("PRVSIGHT", env!("CARGO_BIN_EXE_prvsight"))
        .env("SBATCH", format!("bash {}", sbatch.display()))
        .env("STATE", &state)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said}{}{}",
        String::from_utf8_lossy(&out.stderr),
        std::fs::read_to_string(state.join("out")).unwrap_or_default()
    );
    assert!(
        said.starts_with("parts: job 1001 (array 1-3, logs in "),
        "{said}"
    );
    assert!(said.contains("; merge: job 1002 -> "), "{said}");
    let calls = std::fs::read_to_string(state.join("calls")).unwrap();
    let calls: Vec<&str> = calls.lines().collect();
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert!(
        calls[0].starts_with("--parsable -p test --time=5 --job-name=prvsight-parts --array=1-3")
    );
    assert!(
        calls[1].contains("--dependency=afterok:1001"),
        "{}",
        calls[1]
    );
    let parts = d.join("out/run.prv.gz.parts");
    for k in 1..=3 {
        assert!(parts.join(format!("part-{k}.prvpart")).is_file());
    }
    assert!(
        trace(&d.join("out/run")) == whole_trace,
        "the merged trace differs"
    );
    assert!(std::fs::read(d.join("out/run.json")).unwrap() == whole_metrics);
}

#[test]
fn inputs_read_in_groups_convert_alike_and_a_temporary_folder_that_fails_is_named() {
    let d = dir("groups");
    let inputs = MpiRun::new(5).write(&d.join("ranks")).unwrap();
    let (whole_trace, whole_metrics) = whole(&d, &inputs);
    let out = d.join("grouped.prv.gz");
    let mut args: Vec<&dyn AsRef<std::ffi::OsStr>> =
        vec![&"convert", &"-q", &"--read-groups", &"2", &"-o", &out];
    args.extend(inputs.iter().map(|p| p as &dyn AsRef<std::ffi::OsStr>));
    ok(prvsight(&args));
    assert!(
        trace(&d.join("grouped")) == whole_trace,
        "grouped trace differs"
    );
    let mut args: Vec<&dyn AsRef<std::ffi::OsStr>> =
        vec![&"metrics", &"--json", &"--read-groups", &"2"];
    args.extend(inputs.iter().map(|p| p as &dyn AsRef<std::ffi::OsStr>));
    assert!(
        ok(prvsight(&args)).stdout == whole_metrics,
        "grouped metrics differ"
    );
    // Nothing is left in the temporary folder; one that cannot be written is named.
    let tmp = d.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let mut args: Vec<&dyn AsRef<std::ffi::OsStr>> =
        vec![&"metrics", &"--json", &"--read-groups", &"3"];
    args.extend(inputs.iter().map(|p| p as &dyn AsRef<std::ffi::OsStr>));
    let run_in = |tmp: &Path| {
        Command::new(env!("CARGO_BIN_EXE_prvsight"))
            .args(args.iter().map(|a| a.as_ref()))
            .env("TMPDIR", tmp)
            .output()
            .unwrap()
    };
    assert!(ok(run_in(&tmp)).stdout == whole_metrics);
    assert_eq!(
        std::fs::read_dir(&tmp).unwrap().count(),
        0,
        "temporary parts left"
    );
    let failed = run_in(&d.join("no-such-folder"));
    assert!(!failed.status.success());
    let why = String::from_utf8_lossy(&failed.stderr);
    assert!(
        why.contains("no-such-folder") && why.contains("TMPDIR sets where they go"),
        "{why}"
    );
}
