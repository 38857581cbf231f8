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

pub mod builder;
pub mod ddl;
pub mod ids;
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
