//! The Paraver trace checker: one minimal hand-written bad trace per rule (each differs from a good
//! trace by one fault and must produce exactly that problem), good traces that pass, and every
//! real export converted by prvsight passing with full state coverage.

use std::io::Write;
use std::path::{Path, PathBuf};

use prvsight::nsys::Export;
use prvsight::paraver::check::{check_files, check_readers, CheckOptions, Report};
use prvsight::paraver::events;
use prvsight::paraver::ParaverWriter;
use prvsight::pipeline::{self, Summary};
use prvsight::Options;

#[path = "../common/mod.rs"]
mod common;
mod real_exports;
mod synthetic;

/// 2 tasks × 1 thread on one node with 2 CPUs; a kernel event region, one message, full states.
const PRV: &str = "#Paraver (01/01/2024 at 00:00):1000_ns:1(2):1:2(1:1,1:1),0
1:0:1:1:1:0:400:1
1:0:1:2:1:0:1000:0
2:0:1:1:1:100:50000:5:50001:64
3:1:1:1:1:150:150:2:1:2:1:300:300:64:7
2:0:1:1:1:200:50000:0:50001:0
1:0:1:1:1:400:1000:5
";

const PCF: &str = "DEFAULT_OPTIONS

LEVEL               THREAD
UNITS               NANOSEC

STATES
0    Idle
1    Running
5    Synchronization

STATES_COLOR
0    {117,195,255}
1    {0,0,255}

EVENT_TYPE
0    50000    CUDA kernel
VALUES
0      End
5      gemm

EVENT_TYPE
1    50001    Block size
";

const ROW: &str = "LEVEL CPU SIZE 2
node0 cpu1
node0 cpu2

LEVEL NODE SIZE 1
node0

LEVEL TASK SIZE 2
rank 0
rank 1

LEVEL THREAD SIZE 2
THREAD 1.1.1
THREAD 1.2.1
";

fn run(prv: &str, pcf: &str, row: &str, coverage: bool) -> Report {
    let opts = CheckOptions {
        require_full_state_coverage: coverage,
        ..CheckOptions::default()
    };
    check_readers(prv.as_bytes(), pcf, row, &opts)
}

fn check(prv: &str, pcf: &str, row: &str) -> Report {
    run(prv, pcf, row, true)
}

/// Exactly one problem, and it says `needle`.
#[track_caller]
fn only_problem(r: &Report, needle: &str) {
    assert_eq!(
        r.problems.len(),
        1,
        "expected one problem containing {needle:?}, got {:#?}",
        r.problems
    );
    assert!(
        r.problems[0].contains(needle),
        "problem {:?} does not contain {needle:?}",
        r.problems[0]
    );
}

/// `PRV` with one line replaced (1-based line number).
fn with_line(n: usize, new: &str) -> String {
    let mut lines: Vec<&str> = PRV.lines().collect();
    lines[n - 1] = new;
    lines.join("\n") + "\n"
}

fn with_header(h: &str) -> String {
    with_line(1, h)
}
