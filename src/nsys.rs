//! Reading Nsight Systems SQLite exports: the schema, discovery of what an export holds before
//! the stream starts, and one module per record family, which gives the query of its records and
//! decodes their rows (the reading engine, src/engine, gives the rows in time order).
//!
//! Modules import downwards only: `ids`, `schema`, `strings` and `export` at the bottom, then
//! `context` and `query` (what the families decode with and give), the families, `discover`,
//! and `cursor` on top, which calls each family's decoder.

pub mod context;
pub mod cpu_counters;
pub mod cuda_events;
pub mod cursor;
pub mod discover;
pub mod export;
pub mod gpu;
pub mod gpu_memory;
pub mod gpu_metrics;
pub mod host;
pub mod ids;
pub mod links;
pub mod mpi_bounds;
pub mod mpi_p2p;
pub mod nic;
pub mod nvtx;
pub mod openmp;
pub mod pthread;
pub mod query;
pub mod sched;
pub mod schema;
pub mod stream_busy;
pub mod strings;

pub use export::Export;
pub use schema::Schema;
pub use strings::StringCache;
