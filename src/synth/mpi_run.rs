//! An N-rank MPI+GPU run, one export per rank as `nsys profile -o report.%q{OMPI_COMM_WORLD_RANK}`
//! writes them: the benchmark of many inputs (docs/PERFORMANCE.md) and its tests.
//!
//! Ranks are spread over nodes (`ranks_per_node` a node, each rank on its own GPU of its node),
//! each capture with its own session start and the launcher's environment (Open MPI's rank
//! variables, as in the real captures of ../shared/traces/generated/mpi4). Every rank runs
//! `MPI_Init`, then per iteration an NVTX `step` range holding a batch copy and three kernels on
//! one stream, a `cudaStreamSynchronize`, an `MPI_Allreduce` and a ring exchange (`MPI_Send` to
//! rank r+1 then `MPI_Recv` from rank r−1, tag = iteration), then `MPI_Finalize`. Rank r's
//! kernels run `imbalance(r)` % longer, so the allreduce waits for the slowest.
//!
//! Times are planned on one global clock, seed-independent for the GPU and the synchronisations;
//! the seed moves the session starts and the host calls' jitter. Each rank is built alone from
//! the run's parameters (what it needs of the others is arithmetic), so a run of thousands of
//! ranks is written one file at a time.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::builder::{ExportBuilder, NvtxText, Session, StreamKind};
use super::names;
use super::rng::Rng;
use super::scenarios::sched::{ahead, Host};
use super::scenarios::{op, Op};
use crate::error::{Error, Result};

/// Session clock at each capture's start (raw timestamps count from it).
const T_SESSION: i64 = 1_000_000_000;
/// Global times: captures start within `SESSION_SPREAD`, processes appear at `T_PROCESS`,
/// `MPI_Init` returns everywhere at `T_INIT_END`, the first iteration starts at `T_ITER0`.
const SESSION_SPREAD: i64 = 40_000_000;
const T_PROCESS: i64 = 60_000_000;
const T_INIT_START: i64 = 80_000_000;
const T_INIT_END: i64 = 300_000_000;
const T_ITER0: i64 = 310_000_000;
const PERIOD: i64 = 1_500_000;
const FINALIZE_NS: i64 = 5_000_000;
/// Time the host has to issue an iteration's calls before its GPU work starts.
const HOST_LEAD: i64 = 150_000;
const MEMCPY_NS: i64 = 50_000;
const BATCH_BYTES: u64 = 4 << 20;
/// The allreduce's transfer once the last rank joined; `JOIN_SLACK` covers the host's jitter
/// between a stream's end and its rank's call.
const ALLREDUCE_NS: i64 = 30_000;
const JOIN_SLACK: i64 = 5_000;
const ALLREDUCE_BYTES: i64 = 4 << 20;
/// The ring: a send returns after `SEND_NS` (eager), the receive after `RECV_NS` more.
const SEND_NS: i64 = 20_000;
const RECV_NS: i64 = 30_000;
const MESSAGE_BYTES: i64 = 1 << 20;
/// Kernels of an iteration: (nominal duration, multiple of 100 ns so that scaled ones are exact).
const KERNEL_NS: [i64; 3] = [400_000, 100_000, 100_000];
const KERNEL_CALLS: u64 = KERNEL_NS.len() as u64;
/// CUDA API calls of an iteration: the copy, the launches, the synchronisation.
const API_CALLS: u64 = 1 + KERNEL_CALLS + 1;
const H100: &str = "NVIDIA H100 80GB HBM3";
/// The capture's start on the wall clock before each rank's spread (2026-05-28T20:26:40Z).
const UTC_BASE: i64 = 1_780_000_000_123_456_789;

/// The run's shape; the same parameters and seed give the same bytes.
#[derive(Clone, Copy, Debug)]
pub struct MpiRun {
    pub ranks: u32,
    pub ranks_per_node: u32,
    pub iterations: u32,
    pub seed: u64,
}

/// What converting all of a run's files must give.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct RunSpec {
    pub ranks: u32,
    pub nodes: u32,
    /// Expected `pipeline::Summary::counts` of all families (absent: none).
    pub counts: BTreeMap<&'static str, u64>,
    /// Pid of each rank's process, in rank order (the trace's task order).
    pub task_pids: Vec<u32>,
    /// Per rank: the total duration of its kernels (ns).
    pub compute_ns: Vec<u64>,
}

/// Percent by which rank `r`'s kernels run longer than nominal (0–20, spread over ranks).
fn imbalance(r: u32) -> i64 {
    // 13 is prime to 21: ranks 0–20 take every value once, then the cycle repeats.
    i64::from((r * 13) % 21)
}

fn kernels() -> [Op; 3] {
    [
        op(names::cublas_gemm("tn", "128x128x64", "1x1x1"), 0, 132, 384),
        op(names::elementwise_add(), 0, 46_800, 128),
        op(names::reduce_mean(), 0, 975, 32),
    ]
}

impl MpiRun {
    /// A run of `ranks` ranks, 4 a node, 10 iterations, seed 1.
    pub fn new(ranks: u32) -> MpiRun {
        MpiRun {
            ranks,
            ranks_per_node: 4,
            iterations: 10,
            seed: 1,
        }
    }

    fn check(&self) -> Result<()> {
        let ok = (1..=65_536).contains(&self.ranks)
            && (1..=8).contains(&self.ranks_per_node)
            && (1..=10_000).contains(&self.iterations);
        if ok {
            return Ok(());
        }
        Err(Error::Usage(format!(
            "an MPI run needs 1–65536 ranks, 1–8 a node and 1–10000 iterations (got {}, {}, {})",
            self.ranks, self.ranks_per_node, self.iterations
        )))
    }

    pub fn nodes(&self) -> u32 {
        self.ranks.div_ceil(self.ranks_per_node)
    }

    /// Rank `r`'s file name, numbered with as many digits as the last rank's so names sort.
    pub fn file_name(&self, r: u32) -> String {
        let width = (self.ranks - 1).max(1).to_string().len();
        format!("rank{r:0width$}.sqlite")
    }

    fn pid(&self, r: u32) -> u32 {
        let node = r / self.ranks_per_node;
        40_000 + 17 * (r % self.ranks_per_node) + node % 11
    }

    /// Kernel durations of rank `r`.
    fn durations(r: u32) -> [i64; 3] {
        KERNEL_NS.map(|d| d * (100 + imbalance(r)) / 100)
    }

    /// Global end of an iteration's GPU work on rank `r`, relative to the iteration's start.
    fn gpu_end(r: u32) -> i64 {
        HOST_LEAD + MEMCPY_NS + Self::durations(r).iter().sum::<i64>()
    }

    pub fn spec(&self) -> Result<RunSpec> {
        self.check()?;
        let (n, it) = (u64::from(self.ranks), u64::from(self.iterations));
        let ring = if self.ranks > 1 { 2 } else { 0 };
        let messages = if self.ranks > 1 { n * it } else { 0 };
        let pairs = [
            ("kernel", n * it * KERNEL_CALLS),
            ("memcpy", n * it),
            ("cuda-api", n * it * API_CALLS),
            ("mpi", n * (2 + it * (1 + ring))),
            ("nvtx-push-pop", n * it),
            ("mpi-message", messages),
            ("link-launch", n * it * KERNEL_CALLS),
            ("link-memory", n * it),
        ];
        Ok(RunSpec {
            ranks: self.ranks,
            nodes: self.nodes(),
            counts: super::spec::counts(&pairs),
            task_pids: (0..self.ranks).map(|r| self.pid(r)).collect(),
            compute_ns: (0..self.ranks)
                .map(|r| Self::durations(r).iter().sum::<i64>() as u64 * it)
                .collect(),
        })
    }

    /// The export of rank `r`.
    pub fn rank(&self, r: u32) -> Result<ExportBuilder> {
        self.check()?;
        let (mut b, shift) = self.capture(r);
        let p = b.add_process(self.pid(r), "solver", Some(r), T_PROCESS + shift);
        let main = b.main_thread(p);
        let gpus: Vec<_> = (0..self.ranks_per_node)
            .map(|g| b.add_gpu(g, H100))
            .collect();
        let local = (r % self.ranks_per_node) as usize;
        let stream = b.add_stream(p, gpus[local], 7, StreamKind::Default);
        let mut h = Host::new(main, T_INIT_START + shift, self.seed ^ u64::from(r));
        let init_start = h.pause(0, 2_000_000);
        b.mpi_other(main, init_start, T_INIT_END + shift, "MPI_Init");
        b.mpi_rank(main, r, self.ranks, T_INIT_END + shift - 1_000);
        // What the allreduce waits for: the slowest rank's GPU (the largest imbalance present).
        let slowest = (0..self.ranks.min(21))
            .map(Self::gpu_end)
            .max()
            .unwrap_or(0);
        for i in 0..self.iterations {
            let t0 = T_ITER0 + i64::from(i) * PERIOD + shift;
            h.resume_at(&b, t0)?;
            let step_start = h.t;
            let gpu_end = Self::compute(&mut b, &mut h, stream, r, t0)?;
            h.blocking_call(&mut b, "cudaStreamSynchronize_v3020", gpu_end)?;
            let joined = h.pause(800, 2_500);
            let reduced = t0 + slowest + JOIN_SLACK + ALLREDUCE_NS;
            let bytes = ALLREDUCE_BYTES;
            b.mpi_collective(main, joined, reduced, "MPI_Allreduce", None, bytes, bytes);
            h.resume_at(&b, reduced)?;
            self.ring(&mut b, &mut h, r, i)?;
            let step_end = h.pause(1_000, 3_000);
            let step = NvtxText::Registered("step");
            b.nvtx_push_pop(main, step_start, step_end, step, 0, None)?;
        }
        let fin = T_ITER0 + i64::from(self.iterations) * PERIOD + shift;
        h.resume_at(&b, fin)?;
        let fin_start = h.pause(0, 500_000);
        b.mpi_other(main, fin_start, fin + FINALIZE_NS, "MPI_Finalize");
        Ok(b)
    }

    /// Rank `r`'s capture before its process: session, provenance, the launcher's environment;
    /// and the shift from the global clock to the capture's raw timestamps.
    fn capture(&self, r: u32) -> (ExportBuilder, i64) {
        let mut rng = Rng::new(self.seed ^ (u64::from(r) << 32) ^ 0x004D_5049);
        let session_start = rng.range(0, SESSION_SPREAD / 1_000) * 1_000;
        let label = self.file_name(r).trim_end_matches(".sqlite").to_owned();
        let mut b = ExportBuilder::new(
            &label,
            Session {
                utc_epoch_ns: UTC_BASE + session_start,
                system_clock_ns: T_SESSION,
                hostname: format!("node{:04}", r / self.ranks_per_node),
            },
        );
        b.provenance(
            "SYNTHESIZED_BY",
            &format!(
                "prvsight synth mpi_run --ranks {} --ranks-per-node {} --iterations {} --seed {}",
                self.ranks, self.ranks_per_node, self.iterations, self.seed
            ),
        );
        let size = self.ranks.to_string();
        let (rank, local) = (r.to_string(), (r % self.ranks_per_node).to_string());
        b.environment(&[
            ("OMPI_COMM_WORLD_SIZE", &size),
            ("PMIX_RANK", &rank),
            ("OMPI_COMM_WORLD_RANK", &rank),
            ("OMPI_COMM_WORLD_LOCAL_RANK", &local),
            ("HOME", "/home/user"),
            ("PWD", "/home/user/run"),
            ("LANG", "C.UTF-8"),
        ]);
        // Raw timestamps count from the capture's own start.
        (b, T_SESSION - session_start)
    }

    /// An iteration's batch copy and kernels on `stream`, from `t0` (raw); returns the GPU's end.
    fn compute(
        b: &mut ExportBuilder,
        h: &mut Host,
        stream: super::builder::Stream,
        r: u32,
        t0: i64,
    ) -> Result<i64> {
        let mut gpu = t0 + HOST_LEAD;
        let c = h.call(b, "cudaMemcpyAsync_v3020", 4_000, 9_000);
        ahead(b, "batch copy", c, gpu)?;
        b.memcpy(stream, gpu, MEMCPY_NS, BATCH_BYTES, 1, 1, 2, c.corr)?;
        gpu += MEMCPY_NS;
        for (k, dur) in kernels().iter().zip(Self::durations(r)) {
            h.launch(b, stream, gpu, dur, k)?;
            gpu += dur;
        }
        Ok(gpu)
    }

    /// Iteration `i`'s ring exchange, the host at the allreduce's end: an eager send to the
    /// next rank, then the receive from the previous one (none with a single rank).
    fn ring(&self, b: &mut ExportBuilder, h: &mut Host, r: u32, i: u32) -> Result<()> {
        let n = self.ranks;
        if n == 1 {
            return Ok(());
        }
        let (main, tag, reduced) = (h.thread, i64::from(i), h.t);
        let send = h.pause(800, 2_500);
        let sent = reduced + SEND_NS;
        b.mpi_p2p(
            main,
            send,
            sent,
            "MPI_Send",
            (r + 1) % n,
            tag,
            MESSAGE_BYTES,
        );
        h.resume_at(b, sent)?;
        let recv = h.pause(800, 2_500);
        let done = sent + RECV_NS;
        let from = (r + n - 1) % n;
        b.mpi_p2p(main, recv, done, "MPI_Recv", from, tag, MESSAGE_BYTES);
        h.resume_at(b, done)
    }

    /// Writes every rank's export into `dir` (created if needed); returns the paths in rank order.
    pub fn write(&self, dir: &Path) -> Result<Vec<PathBuf>> {
        self.check()?;
        std::fs::create_dir_all(dir).map_err(|e| Error::write(dir.display(), e))?;
        (0..self.ranks)
            .map(|r| {
                let path = dir.join(self.file_name(r));
                self.rank(r)?.write_path(&path)?;
                Ok(path)
            })
            .collect()
    }
}
