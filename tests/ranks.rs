//! MPI ranks from the launcher's environment before MPI_RANKS and the NVTX thread name, and the
//! warnings about the inputs as a set: an export given twice, a rank claimed by two inputs.

mod common;
#[path = "support/zipread.rs"]
mod zipread;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{convert, shared_traces};
use prvsight::metrics::{self, MetricsOptions};
use prvsight::nsys::Export;
use prvsight::synth::{ExportBuilder, NvtxText, Session};
use prvsight::{pipeline, Options};

const UTC: i64 = 1_780_000_000_000_000_000;

/// A file of its own for `b` (tests run in parallel), in a folder of its own.
fn write(b: &ExportBuilder, name: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "ranks-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    b.write_path(&path).unwrap();
    path
}

/// One rank's export of a 2-node MPI run as nsys 2021.5 writes it: pid 5001 on `host`, its main
/// thread named `MPI Rank {nvtx_rank}` (the rank within the node), two MPI calls as NVTX ranges
/// of the `MPI` domain (20 + 40 µs), and the launcher's environment where given.
fn rank_export(
    host: &str,
    utc: i64,
    nvtx_rank: Option<u32>,
    env: &[(&str, &str)],
) -> ExportBuilder {
    let session = Session {
        utc_epoch_ns: utc,
        system_clock_ns: 0,
        hostname: host.into(),
    };
    let mut b = ExportBuilder::new(host, session);
    if !env.is_empty() {
        b.environment(env);
    }
    let p = b.add_process(5001, "app", nvtx_rank, 1_000);
    let t = b.main_thread(p);
    b.nvtx_domain_create(t, 2_000, 1, "MPI");
    let calls = [
        ("MPI_Barrier", 10_000, 30_000),
        ("MPI_Allreduce", 50_000, 90_000),
    ];
    for (name, start, end) in calls {
        b.nvtx_push_pop(t, start, end, NvtxText::Registered(name), 1, None)
            .unwrap();
    }
    b
}

/// Open MPI's and PMIx's rank variables for `rank`, among others, as in generated/mpi4.
fn open_mpi(rank: &'static str) -> [(&'static str, &'static str); 5] {
    [
        ("OMPI_COMM_WORLD_SIZE", "2"),
        ("PMIX_RANK", rank),
        ("OMPI_COMM_WORLD_RANK", rank),
        ("OMPI_COMM_WORLD_LOCAL_RANK", "0"),
        ("HOME", "/home/user"),
    ]
}

/// The TASK level of a .row.
fn tasks(row: &str) -> Vec<&str> {
    let mut lines = row.lines().skip_while(|l| !l.starts_with("LEVEL TASK"));
    lines.next();
    lines.take_while(|l| !l.is_empty()).collect()
}

/// A task: (pid, host, rank).
type Task = (u32, String, Option<u32>);

/// The tasks of the plan of `exports`, and the plan's warnings.
fn planned(exports: &[Export]) -> (Vec<Task>, Vec<String>) {
    let plan = pipeline::plan(exports, &Options::default()).unwrap();
    let o = &plan.trace.objects;
    let tasks = o
        .processes
        .iter()
        .map(|p| (p.pid, o.hosts[p.host].name.clone(), p.rank))
        .collect();
    (tasks, plan.warnings)
}

fn open(paths: &[&Path]) -> Vec<Export> {
    paths
        .iter()
        .map(|p| Export::open_path(p).unwrap())
        .collect()
}

/// The metrics report's JSON for `paths`.
fn metrics_json(paths: &[&Path]) -> serde_json::Value {
    let r = metrics::compute(
        &open(paths),
        &Options::default(),
        &MetricsOptions::default(),
    );
    serde_json::from_str(&r.unwrap().to_json().unwrap()).unwrap()
}

#[test]
fn environment_ranks_outrank_per_node_thread_names() {
    let a = write(
        &rank_export("node0", UTC, Some(0), &open_mpi("0")),
        "a.sqlite",
    );
    let b = write(
        &rank_export("node1", UTC + 250_000, Some(0), &open_mpi("1")),
        "b.sqlite",
    );
    let out = convert(&[a.clone(), b.clone()], &Options::default()).unwrap();
    assert_eq!(
        tasks(&out.row),
        [
            "rank 0: app (pid 5001, node0)",
            "rank 1: app (pid 5001, node1)"
        ]
    );
    assert_eq!(out.summary.warnings, Vec::<String>::new());
    let v = metrics_json(&[&a, &b]);
    let ranks = v["host"]["ranks"].as_array().unwrap();
    let got: Vec<(u64, u64, &str, u64, u64)> = ranks
        .iter()
        .map(|r| {
            let n = |k: &str| r[k].as_u64().unwrap();
            (
                n("process"),
                n("rank"),
                r["host"].as_str().unwrap(),
                n("mpi_calls"),
                n("mpi_ns"),
            )
        })
        .collect();
    assert_eq!(
        got,
        [(0, 0, "node0", 2, 60_000), (1, 1, "node1", 2, 60_000)]
    );
    assert_eq!(v["warnings"], serde_json::json!([]));
}

#[test]
fn two_inputs_claiming_one_rank_warn() {
    let a = write(&rank_export("node0", UTC, Some(0), &[]), "a.sqlite");
    let b = write(
        &rank_export("node1", UTC + 250_000, Some(0), &[]),
        "b.sqlite",
    );
    let out = convert(&[a.clone(), b.clone()], &Options::default()).unwrap();
    assert_eq!(
        tasks(&out.row),
        [
            "rank 0: app (pid 5001, node0)",
            "rank 0: app (pid 5001, node1)"
        ]
    );
    let want = format!(
        "{} and {} both claim MPI rank 0: their tasks carry the same rank (ranks come from the \
         launcher's environment, else MPI_RANKS, else the NVTX thread name `MPI Rank N`, which \
         some nsys versions number per node)",
        a.display(),
        b.display()
    );
    assert_eq!(out.summary.warnings, std::slice::from_ref(&want));
    assert_eq!(
        metrics_json(&[&a, &b])["warnings"],
        serde_json::json!([want])
    );
}

#[test]
fn the_same_export_given_twice_warns_once() {
    let rank0 = rank_export("node0", UTC, Some(0), &open_mpi("0"));
    let p = write(&rank0, "r0.sqlite");
    let dir = p.parent().unwrap();
    let warning = |a: &Path, b: &Path, why: &str| {
        format!(
            "{} and {} are {why}: the same export given twice, so its processes appear twice in the trace",
            a.display(),
            b.display()
        )
    };
    let same_file = "the same file";
    let same_capture = "the same capture (same session start, host and processes)";
    // One path twice, or two spellings of it.
    let (_, w) = planned(&open(&[&p, &p]));
    assert_eq!(w, [warning(&p, &p, same_file)]);
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    let spelled = dir.join("sub/../r0.sqlite");
    let (tasks, w) = planned(&open(&[&p, &spelled]));
    assert_eq!(w, [warning(&p, &spelled, same_file)]);
    // Still converted: both copies are tasks, with the rank the file says.
    assert_eq!(tasks, vec![(5001, "node0".to_owned(), Some(0)); 2]);
    // A copy of the file, and the bytes twice as the browser opens them (no path).
    let copy = dir.join("copy.sqlite");
    std::fs::copy(&p, &copy).unwrap();
    let (_, w) = planned(&open(&[&p, &copy]));
    assert_eq!(w, [warning(&p, &copy, same_capture)]);
    let bytes = std::fs::read(&p).unwrap();
    let picked: Vec<Export> = ["r0.sqlite", "r0 (1).sqlite"]
        .iter()
        .map(|l| Export::from_bytes(&bytes, l).unwrap())
        .collect();
    let (_, w) = planned(&picked);
    assert_eq!(
        w,
        [warning(
            Path::new("r0.sqlite"),
            Path::new("r0 (1).sqlite"),
            same_capture
        )]
    );
    // Another capture of the same host and pid (a later session) is no copy: only its rank clashes.
    let later = write(
        &rank_export("node0", UTC + 1, Some(0), &open_mpi("0")),
        "later.sqlite",
    );
    let (_, w) = planned(&open(&[&p, &later]));
    assert_eq!(w.len(), 1);
    assert!(w[0].contains("both claim MPI rank 0"), "{w:?}");
}

#[test]
fn the_environment_names_only_the_process_it_can_be_about() {
    // nsys around a launcher of two processes (torchrun): the environment is the launcher's.
    let mut b = rank_export("node0", UTC, None, &open_mpi("3"));
    let other = b.add_process(6001, "worker", None, 1_000);
    let t = b.main_thread(other);
    b.nvtx_push_pop(t, 5_000, 8_000, NvtxText::Inline("step"), 0, None)
        .unwrap();
    let p = write(&b, "launcher.sqlite");
    let none = vec![
        (5001, "node0".to_owned(), None),
        (6001, "node0".to_owned(), None),
    ];
    assert_eq!(planned(&open(&[&p])).0, none);
    // Of two processes, the one that claims a rank gets the environment's (and comes first).
    let mut b = rank_export("node0", UTC, None, &open_mpi("2"));
    let ranked = b.add_process(6001, "worker", Some(0), 1_000);
    let t = b.main_thread(ranked);
    b.nvtx_push_pop(t, 5_000, 8_000, NvtxText::Inline("step"), 0, None)
        .unwrap();
    let p = write(&b, "claimed.sqlite");
    let want = vec![
        (6001, "node0".to_owned(), Some(2)),
        (5001, "node0".to_owned(), None),
    ];
    assert_eq!(planned(&open(&[&p])).0, want);
    // Slurm: srun's task 1 of 2, with no other rank anywhere.
    let slurm = [("SLURM_STEP_NUM_TASKS", "2"), ("SLURM_PROCID", "1")];
    let p = write(&rank_export("node1", UTC, None, &slurm), "slurm.sqlite");
    assert_eq!(
        planned(&open(&[&p])).0,
        [(5001, "node1".to_owned(), Some(1))]
    );
}

#[test]
fn environments_without_a_rank_are_no_error() {
    let cases = [
        // Untouched, the environment's rank 4 outranks the thread name's 0 (as the rest shows).
        "",
        // Not a number, then not text.
        "UPDATE TARGET_INFO_SYSTEM_ENV SET value = 'OMPI_COMM_WORLD_RANK=one;PMIX_RANK=' WHERE name = 'DeviceEnvironment'",
        "UPDATE TARGET_INFO_SYSTEM_ENV SET value = CAST('PMIX_RANK=3' AS BLOB) WHERE name = 'DeviceEnvironment'",
        // Two devices whose environments disagree.
        "INSERT INTO TARGET_INFO_SYSTEM_ENV SELECT globalVid + 1, devStateName, name, nameEnum, \
         'PMIX_RANK=5' FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'DeviceEnvironment'",
        // No row, then an older layout without the value column.
        "DELETE FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'DeviceEnvironment'",
        "DROP TABLE TARGET_INFO_SYSTEM_ENV; CREATE TABLE TARGET_INFO_SYSTEM_ENV (name TEXT, nameEnum INTEGER)",
    ];
    for sql in cases {
        let p = write(
            &rank_export("node0", UTC, Some(0), &open_mpi("4")),
            "r.sqlite",
        );
        rusqlite::Connection::open(&p)
            .unwrap()
            .execute_batch(sql)
            .unwrap();
        // Else the thread name's rank stands.
        let rank = if sql.is_empty() { 4 } else { 0 };
        assert_eq!(
            planned(&open(&[&p])).0,
            [(5001, "node0".to_owned(), Some(rank))],
            "{sql}"
        );
    }
}

#[test]
fn real_mpi4_ranks_stay_0_to_3() {
    let Some(base) = shared_traces() else { return };
    for dir in ["generated/mpi4", "generated/mpi4_nsys2022.4"] {
        let paths: Vec<PathBuf> = (0..4)
            .map(|r| base.join(format!("{dir}/rank{r}.sqlite")))
            .collect();
        let exports: Vec<Export> = paths
            .iter()
            .map(|p| Export::open_path(p).unwrap())
            .collect();
        let (tasks, warnings) = planned(&exports);
        let ranks: Vec<Option<u32>> = tasks.iter().map(|t| t.2).collect();
        assert_eq!(ranks, [Some(0), Some(1), Some(2), Some(3)], "{dir}");
        assert_eq!(warnings, Vec::<String>::new(), "{dir}");
    }
}

#[test]
fn cli_prints_the_input_warnings() {
    let exe = env!("CARGO_BIN_EXE_prvsight");
    let p = write(
        &rank_export("node0", UTC, Some(0), &open_mpi("0")),
        "twice.sqlite",
    );
    let want = format!(
        "prvsight: warning: {0} and {0} are the same file: the same export given twice, so its \
         processes appear twice in the trace\n",
        p.display()
    );
    let out_prv = p.with_file_name("twice.prv");
    let conv = std::process::Command::new(exe)
        .arg("convert")
        .args([&p, &p])
        .arg("-o")
        .arg(&out_prv)
        .arg("--quiet")
        .output()
        .unwrap();
    assert!(conv.status.success());
    assert_eq!(String::from_utf8_lossy(&conv.stderr), want);
    let row = std::fs::read_to_string(out_prv.with_extension("row")).unwrap();
    assert_eq!(
        tasks(&row),
        [
            "rank 0: app (pid 5001, node0)",
            "rank 0: app (pid 5001, node0) #2"
        ]
    );
    let met = std::process::Command::new(exe)
        .arg("metrics")
        .args([&p, &p])
        .arg("--json")
        .output()
        .unwrap();
    assert!(met.status.success());
    assert_eq!(String::from_utf8_lossy(&met.stderr), want);
    let v: serde_json::Value = serde_json::from_slice(&met.stdout).unwrap();
    let line = want.trim_end().strip_prefix("prvsight: warning: ").unwrap();
    assert_eq!(v["warnings"], serde_json::json!([line]));
    // The bundle: on the terminal, in its metrics.json and in its README.
    let zip = p.with_file_name("twice.zip");
    let bun = std::process::Command::new(exe)
        .arg("bundle")
        .args([&p, &p])
        .arg("-o")
        .arg(&zip)
        .arg("--quiet")
        .output()
        .unwrap();
    assert!(bun.status.success());
    assert_eq!(String::from_utf8_lossy(&bun.stderr), want);
    let entries = zipread::read_zip(&std::fs::read(&zip).unwrap()).unwrap();
    let entry = |name: &str| {
        let e = entries.iter().find(|e| e.name == format!("twice/{name}"));
        String::from_utf8(e.unwrap().data.clone()).unwrap()
    };
    let v: serde_json::Value = serde_json::from_str(&entry("metrics.json")).unwrap();
    assert_eq!(v["warnings"], serde_json::json!([line]));
    assert!(entry("README.txt").contains(&format!("Note: {line}\n")));
}
