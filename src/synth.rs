//! Synthetic Nsight Systems SQLite exports for what no public export holds: NCCL collectives,
//! several GPUs and ranks, CUDA graphs, GPU metrics.
//!
//! The files are schema-faithful: every table is created with the verbatim CREATE statement of a
//! real nsys 2026.2.1 (schema 3.25.0) export or, for the tables no real file has, of NVIDIA's schema
//! reference ([`ddl`]); ids are encoded as nsys encodes them ([`ids`], StringIds, per-process
//! correlation ids shared by an API call and its GPU work, `_v7000` API suffixes, eventClass 0/1).
//! [`ExportBuilder`] is the API to describe a capture; [`scenarios`] builds ready-made ones, each
//! with the [`ScenarioSpec`] of exact values a conversion must reproduce. The same scenario and
//! seed always give the same bytes; the seed moves only host-side timings.
//!
//! Native only (`prvsight synth SCENARIO -o out.sqlite`, tests, benchmarks).
//!
//! ```
//! use prvsight::synth::{names, ExportBuilder, NvtxText, Session, StreamKind};
//! let mut b = ExportBuilder::new(
//!     "tiny",
//!     Session { utc_epoch_ns: 1_780_000_000_000_000_000, system_clock_ns: 0, hostname: "node0".into() },
//! );
//! let p = b.add_process(4242, "python3", Some(0), 1_000);
//! let t = b.main_thread(p);
//! let gpu = b.add_gpu(0, "NVIDIA H100 80GB HBM3");
//! let s = b.add_stream(p, gpu, 7, StreamKind::Default);
//! let corr = b.correlation(p.pid);
//! b.runtime_call(t, 10_000, 5_000, "cudaLaunchKernel_v7000", corr);
//! let k = names::elementwise_add();
//! b.kernel(s, 20_000, 40_000, &k, [46_800, 1, 1], [128, 1, 1], corr, None)?;
//! b.nvtx_push_pop(t, 9_000, 70_000, NvtxText::Inline("step"), 0, None)?;
//! let ex = prvsight::nsys::Export::from_bytes(&b.to_bytes()?, "tiny.sqlite")?;
//! assert_eq!(ex.schema.schema_version.as_deref(), Some("3.25.0"));
//! # Ok::<(), prvsight::Error>(())
//! ```

pub mod builder;
pub mod ddl;
pub mod ids;
pub mod mpi;
pub mod mpi_run;
pub mod names;
pub mod nccl;
pub mod rng;
pub mod rows;
pub mod scenarios;
pub mod spec;
mod write;
mod write_activity;

pub use builder::{ExportBuilder, Gpu, NvtxText, Process, Session, Stream, StreamKind, Thread};
pub use rows::{GpuModel, KernelDef};
pub use scenarios::{build, Scenario, SCENARIOS};
pub use spec::{MetricSpec, ScenarioSpec};
pub use write::{PRODUCT_VERSION, SCHEMA_VERSION};
