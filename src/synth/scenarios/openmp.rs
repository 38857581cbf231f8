//! `openmp`: one process with 4 OpenMP threads (`--trace=openmp`), 3 parallel regions of 1 ms
//! forked by the main thread. In each, every thread runs its implicit task and ends it in the
//! region's implicit barrier; thread k reaches the barrier k·100 µs before the region ends (a
//! visible imbalance). Besides: an explicit task and a taskwait (kinds the family leaves out),
//! and the last barrier of thread 3 recorded with an end 10 s past its region (an interrupted
//! capture), which the converter ends with its region. No GPU work.

use super::{builder, Scenario, T_INIT, T_WORK};
use crate::error::Result;
use crate::synth::builder::{ExportBuilder, Thread};
use crate::synth::spec::{counts, ScenarioSpec};
use rusqlite::types::Value;

const PID: u32 = 60_041;
const THREADS: u32 = 4;
const REGIONS: i64 = 3;
const REGION_NS: i64 = 1_000_000;
/// Start to start of the regions.
const PERIOD: i64 = 2_000_000;
/// Time thread k spends in the implicit barrier: (k + 1)·STEP.
const STEP: i64 = 100_000;
/// ENUM_OPENMP_EVENT_KIND ids, ENUM_OPENMP_TASK_FLAG and ENUM_OPENMP_SYNC_REGION ids.
const KIND_PARALLEL: i64 = 28;
const KIND_TASK: i64 = 31;
const KIND_SYNC_REGION: i64 = 30;
const TASK_IMPLICIT: i64 = 2;
const TASK_EXPLICIT: i64 = 4;
const BARRIER_IMPLICIT: i64 = 2;
const TASKWAIT: i64 = 5;
/// ENUM_NSYS_EVENT_CLASS of OpenMP events (TRACE_PROCESS_EVENT_OPENMP).
const EVENT_CLASS: i64 = 78;

const REGION_COLUMNS: &str =
    "start end eventClass globalTid nameId eventKind parallelId parentTaskId";
const TASK_COLUMNS: &str = "start end eventClass globalTid nameId eventKind parallelId taskId kind";

/// Time thread `k` ends its implicit task (and enters the barrier) in region `r`.
fn barrier_start(r: i64, k: u32) -> i64 {
    region_start(r) + REGION_NS - i64::from(k + 1) * STEP
}

fn region_start(r: i64) -> i64 {
    T_WORK + r * PERIOD
}

/// A row of event kind `kind`'s table on thread `t` (`start, end, eventClass, globalTid,
/// nameId, eventKind` and then `ids`: `parallelId` and the table's own).
fn row(b: &mut ExportBuilder, kind: i64, t: Thread, span: (i64, i64), ids: &[i64]) {
    let (table, name, columns) = match kind {
        KIND_PARALLEL => ("OPENMP_EVENT_KIND_PARALLEL", "parallel", REGION_COLUMNS),
        KIND_TASK => ("OPENMP_EVENT_KIND_TASK", "task", TASK_COLUMNS),
        _ => ("OPENMP_EVENT_KIND_SYNC_REGION", "sync_region", TASK_COLUMNS),
    };
    let name = b.string(name);
    let head = [span.0, span.1, EVENT_CLASS, t.global_tid(), name, kind];
    let values = head.iter().chain(ids).map(|&v| Value::Integer(v)).collect();
    b.extra_row(table, columns, values);
}

pub fn build(seed: u64) -> Result<Scenario> {
    let mut b = builder("openmp", seed, "node-omp");
    b.capture_setting("PROCESS_0:COMMAND", "./stencil");
    let p = b.add_process(PID, "stencil", None, T_INIT);
    let mut threads = vec![b.main_thread(p)];
    for k in 1..THREADS {
        threads.push(b.add_thread(p, PID + k, "stencil"));
    }
    let mut task_id = 1;
    for r in 0..REGIONS {
        let (start, end) = (region_start(r), region_start(r) + REGION_NS);
        let parallel = r + 1;
        let region = [parallel, 0];
        row(&mut b, KIND_PARALLEL, threads[0], (start, end), &region);
        for (k, &t) in threads.iter().enumerate() {
            let k = k as u32;
            let enter = barrier_start(r, k);
            let implicit = [parallel, task_id, TASK_IMPLICIT];
            row(&mut b, KIND_TASK, t, (start + 5_000, enter), &implicit);
            // The last barrier of the last thread: an end the capture never saw.
            let last = r == REGIONS - 1 && k == THREADS - 1;
            let leave = if last { end + 10_000_000_000 } else { end };
            let barrier = [parallel, task_id, BARRIER_IMPLICIT];
            row(&mut b, KIND_SYNC_REGION, t, (enter, leave), &barrier);
            task_id += 1;
        }
    }
    // Kinds the family leaves out: an explicit task and a taskwait in the first region.
    let (t, s) = (threads[1], region_start(0) + 50_000);
    let (explicit, taskwait) = ([1, task_id, TASK_EXPLICIT], [1, task_id, TASKWAIT]);
    row(&mut b, KIND_TASK, t, (s, s + 20_000), &explicit);
    row(
        &mut b,
        KIND_SYNC_REGION,
        t,
        (s + 20_000, s + 25_000),
        &taskwait,
    );
    Ok(Scenario {
        spec: spec(),
        export: b,
    })
}

/// Time each thread spends in implicit barriers, in ns, as the converter must find it (the
/// capture-less end ended with its region).
pub fn barrier_ns_per_thread() -> Vec<i64> {
    (0..THREADS)
        .map(|k| {
            (0..REGIONS)
                .map(|r| region_start(r) + REGION_NS - barrier_start(r, k))
                .sum()
        })
        .collect()
}

fn spec() -> ScenarioSpec {
    let per_region = 1 + 2 * u64::from(THREADS);
    let per_thread = REGIONS as u64 * u64::from(THREADS) + 1;
    ScenarioSpec::host_only(
        "openmp",
        "4 OpenMP threads in 3 parallel regions with imbalanced implicit barriers (OMPT)",
        counts(&[("openmp", REGIONS as u64 * per_region)]),
        vec![PID],
        THREADS as usize,
        &[
            ("OPENMP_EVENT_KIND_PARALLEL", REGIONS as u64),
            ("OPENMP_EVENT_KIND_TASK", per_thread),
            ("OPENMP_EVENT_KIND_SYNC_REGION", per_thread),
        ],
    )
}
