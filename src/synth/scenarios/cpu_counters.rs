//! `cpu_counters`: sampled CPU counters (`--cpu-core-events`, PERF_EVENT_CPU_RAW_EVENT) over 1 ms
//! of two threads of one process and a daemon of another, on a socket of 3 cores. Every 100 µs
//! each core counts cycles and instructions, and core 0's cache its misses. The schedule
//! (SCHED_EVENTS) moves the threads between cores so that each sample's thread is known by
//! design: [`expected`] works it out from the same plan with the attribution rule alone.
//!
//! Core 0 runs the main thread, then the daemon, then the worker; core 1 runs the worker until
//! it blocks (a sched-out with no sched-in after it: the worker keeps core 1's samples until the
//! main thread comes in, as nsys2prv 0.6 attributes), then the main thread; core 2 is never
//! scheduled: its samples go nowhere. Both threads of the process make CUDA calls, so the trace
//! has them whatever else is converted; the daemon only exists in the schedule.

use super::{builder, Scenario, T_INIT, T_WORK};
use crate::error::Result;
use crate::synth::builder::{ExportBuilder, Thread};
use crate::synth::ids::global_tid;
use crate::synth::spec::{counts, ScenarioSpec};
use rusqlite::types::Value;

const PID: u32 = 60_051;
const DAEMON_PID: u32 = 900;
const SAMPLES: i64 = 10;
const SAMPLE_NS: i64 = 100_000;
/// The threads of the plan: 0 main, 1 worker, 2 daemon.
const MAIN: usize = 0;
const WORKER: usize = 1;
const DAEMON: usize = 2;
/// Per CPU, (time after T_WORK, thread) of each sched-in, and the sched-outs (time, thread).
const SCHED_INS: [(i64, &[(i64, usize)]); 2] = [
    (0, &[(0, MAIN), (400_000, DAEMON), (600_000, WORKER)]),
    (1, &[(0, WORKER), (400_000, MAIN)]),
];
const SCHED_OUTS: [(i64, i64, usize); 4] = [
    (0, 400_000, MAIN),
    (0, 600_000, DAEMON),
    (1, 300_000, WORKER),
    (0, 1_000_000, WORKER),
];
/// Components (componentId, name, instance, parent): a socket, 3 cores, core 0's cache.
const COMPONENTS: [(i64, &str, i64, i64); 5] = [
    (1, "Socket", 0, 0),
    (2, "Core", 0, 1),
    (3, "Core", 1, 1),
    (4, "Cache", 0, 2),
    (5, "Core", 2, 1),
];
/// Events (id, name, description, unit) and which components count each.
const EVENTS: [(i64, &str, &str, &str, &[i64]); 3] = [
    (1, "cpu-cycles", "CPU cycles", "cycles", &[2, 3, 5]),
    (
        2,
        "instructions",
        "Instructions retired",
        "instructions",
        &[2, 3, 5],
    ),
    (3, "l1d-misses", "L1 data cache misses", "misses", &[4]),
];
const SAMPLE_COLUMNS: &str = "start end vmId componentId eventId count";
const SCHED_COLUMNS: &str = "start cpu isSchedIn globalTid";

/// Count of event `event` in sample `k` of component `component` (all different).
fn count(event: i64, component: i64, k: i64) -> i64 {
    event * 1_000_000 + component * 1_000 + k
}

/// CPU of a component: its own instance if a core, else its core's.
fn cpu_of(component: i64) -> Option<i64> {
    match component {
        2 | 4 => Some(0),
        3 => Some(1),
        5 => Some(2),
        _ => None,
    }
}

/// The thread that came in last on `cpu` at or before `t` (after T_WORK), if any.
fn running(cpu: i64, t: i64) -> Option<usize> {
    let (_, ins) = SCHED_INS.iter().find(|(c, _)| *c == cpu)?;
    ins.iter().rev().find(|(at, _)| *at <= t).map(|&(_, th)| th)
}

/// Per (thread of the plan, event id): the samples and the summed counts the converter must
/// attribute, the daemon's included (the trace has it only where the sched family is converted).
pub fn expected() -> std::collections::BTreeMap<(usize, i64), (u64, i64)> {
    let mut out = std::collections::BTreeMap::new();
    for &(event, .., components) in &EVENTS {
        for &c in components {
            for k in 0..SAMPLES {
                let mid = k * SAMPLE_NS + SAMPLE_NS / 2;
                let Some(thread) = cpu_of(c).and_then(|cpu| running(cpu, mid)) else {
                    continue;
                };
                let e = out.entry((thread, event)).or_insert((0, 0));
                e.0 += 1;
                e.1 += count(event, c, k);
            }
        }
    }
    out
}

fn schedule(b: &mut ExportBuilder, threads: &[i64; 3]) {
    let mut rows: Vec<(i64, i64, i64, i64)> = Vec::new();
    for (cpu, ins) in SCHED_INS {
        rows.extend(ins.iter().map(|&(t, th)| (T_WORK + t, cpu, 1, threads[th])));
    }
    rows.extend((SCHED_OUTS.iter()).map(|&(cpu, t, th)| (T_WORK + t, cpu, 0, threads[th])));
    rows.sort_unstable();
    for (start, cpu, is_in, gtid) in rows {
        let row = [start, cpu, is_in, gtid].map(Value::Integer).to_vec();
        b.extra_row("SCHED_EVENTS", SCHED_COLUMNS, row);
    }
}

fn counters(b: &mut ExportBuilder) {
    for (id, name, instance, parent) in COMPONENTS {
        let row = vec![
            Value::Integer(id),
            Value::Text(name.to_owned()),
            Value::Integer(instance),
            Value::Integer(parent),
        ];
        let cols = "componentId name instance parentComponentId";
        b.extra_row("TARGET_INFO_COMPONENT", cols, row);
    }
    for (id, name, description, unit, _) in EVENTS {
        let row = vec![
            Value::Integer(id),
            Value::Text(name.to_owned()),
            Value::Text(description.to_owned()),
            Value::Text(unit.to_owned()),
        ];
        let cols = "id name description unit";
        b.extra_row("TARGET_INFO_PERF_METRIC", cols, row);
    }
    for k in 0..SAMPLES {
        let start = T_WORK + k * SAMPLE_NS;
        for (event, .., components) in EVENTS {
            for &c in components {
                let row = [start, start + SAMPLE_NS, 0, c, event, count(event, c, k)];
                let row = row.map(Value::Integer).to_vec();
                b.extra_row("PERF_EVENT_CPU_RAW_EVENT", SAMPLE_COLUMNS, row);
            }
        }
    }
}

/// A CUDA call of `t` over the 1 ms (what puts the thread in the trace).
fn call(b: &mut ExportBuilder, t: Thread) {
    let corr = b.correlation(t.pid);
    b.runtime_call(t, T_WORK, 1_000_000, "cudaStreamSynchronize_v3020", corr);
}

pub fn build(seed: u64) -> Result<Scenario> {
    let mut b = builder("cpu_counters", seed, "node-cpu");
    b.capture_setting("PROCESS_0:COMMAND", "./solver");
    let p = b.add_process(PID, "solver", None, T_INIT);
    let main = b.main_thread(p);
    let worker = b.add_thread(p, PID + 1, "solver-worker");
    call(&mut b, main);
    call(&mut b, worker);
    let daemon = global_tid(DAEMON_PID, DAEMON_PID);
    schedule(&mut b, &[main.global_tid(), worker.global_tid(), daemon]);
    counters(&mut b);
    Ok(Scenario {
        spec: spec(),
        export: b,
    })
}

fn spec() -> ScenarioSpec {
    let samples: u64 = expected().values().map(|v| v.0).sum();
    let sched_ins = SCHED_INS.iter().map(|(_, i)| i.len() as u64).sum::<u64>();
    let raw = SAMPLES as u64 * EVENTS.iter().map(|e| e.4.len() as u64).sum::<u64>();
    ScenarioSpec::host_only(
        "cpu_counters",
        "CPU counter samples of 2 threads moving between 3 cores (PERF_EVENT_CPU_RAW_EVENT)",
        counts(&[
            ("cuda-api", 2),
            ("sched", sched_ins),
            ("cpu-counters", samples),
        ]),
        vec![DAEMON_PID, PID],
        3,
        &[
            ("PERF_EVENT_CPU_RAW_EVENT", raw),
            ("SCHED_EVENTS", sched_ins + SCHED_OUTS.len() as u64),
        ],
    )
}
