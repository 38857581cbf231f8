//! What a scenario promises: exact values derived from the scenario's parameters by arithmetic
//! (not by counting the rows it wrote), so tests check the converter against the design.

use std::collections::BTreeMap;

use serde::Serialize;

/// Expected samples of one GPU metric on one GPU.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MetricSpec {
    pub gpu: u32,
    pub metric_id: i64,
    pub name: &'static str,
    pub samples: u64,
    /// Sum of the sampled values.
    pub sum: i64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScenarioSpec {
    pub name: &'static str,
    pub summary: &'static str,
    /// Expected `pipeline::Summary::counts` when every family is converted (families with no
    /// record are absent): kernel, memcpy, memset, cuda-api, nvtx-push-pop, nvtx-start-end,
    /// nvtx-mark, link-launch, link-memory.
    pub counts: BTreeMap<&'static str, u64>,
    /// Processes with events (Paraver tasks), in the order the converter must lay them out
    /// (by MPI rank), as pids.
    pub task_pids: Vec<u32>,
    /// Host threads with CUDA API calls or NVTX ranges/marks.
    pub host_threads: usize,
    /// GPU streams with kernels, memcpy or memset (Paraver GPU threads).
    pub gpu_streams: usize,
    pub gpus: usize,
    /// Kernel begins in the .prv: NCCL kernels (type 63000007) and compute kernels (63000006).
    pub nccl_kernels: u64,
    pub compute_kernels: u64,
    /// Rows of tables the core does not convert yet, and of the catalogue tables.
    pub table_rows: BTreeMap<&'static str, u64>,
    /// Per task: total duration of its compute kernels (ns). Exact: GPU timings do not depend
    /// on the seed.
    pub compute_ns: Vec<u64>,
    /// Per task: start of its first compute kernel minus that of task 0 (ns): the pipeline
    /// bubble, zero where every rank starts together.
    pub first_compute_offset_ns: Vec<i64>,
    pub metrics: Vec<MetricSpec>,
    /// CUDA graph replays (`cudaGraphLaunch` calls that ran a graph).
    pub graph_launches: u64,
    /// Kernel rows that are graph nodes (`graphNodeId` set): node-level graph tracing only.
    pub graph_node_kernels: u64,
}

impl ScenarioSpec {
    /// The spec of a scenario without GPU work: its processes (`task_pids`), threads, the
    /// records each family gives (`counts`) and the rows of its tables.
    pub fn host_only(
        name: &'static str,
        summary: &'static str,
        counts: BTreeMap<&'static str, u64>,
        task_pids: Vec<u32>,
        host_threads: usize,
        table_rows: &[(&'static str, u64)],
    ) -> ScenarioSpec {
        let tasks = task_pids.len();
        ScenarioSpec {
            name,
            summary,
            counts,
            task_pids,
            host_threads,
            gpu_streams: 0,
            gpus: 0,
            nccl_kernels: 0,
            compute_kernels: 0,
            table_rows: table_rows.iter().copied().collect(),
            compute_ns: vec![0; tasks],
            first_compute_offset_ns: vec![0; tasks],
            metrics: Vec::new(),
            graph_launches: 0,
            graph_node_kernels: 0,
        }
    }

    /// Load balance of the compute kernels: mean / max of `compute_ns`.
    pub fn load_balance(&self) -> f64 {
        let max = self.compute_ns.iter().copied().max().unwrap_or(0);
        if max == 0 {
            return 1.0;
        }
        let sum: u64 = self.compute_ns.iter().sum();
        sum as f64 / (self.compute_ns.len() as f64 * max as f64)
    }
}

/// Builds the `counts` map, leaving out zeros (the converter reports only families it saw).
pub fn counts(pairs: &[(&'static str, u64)]) -> BTreeMap<&'static str, u64> {
    pairs.iter().filter(|(_, n)| *n > 0).copied().collect()
}
