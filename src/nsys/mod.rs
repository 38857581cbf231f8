//! Reading Nsight Systems SQLite exports: schema detection, then one module per record family.
//! Each family module gives the SQL of its time-ordered cursor and decodes its rows into model
//! records; discovery finds the resources before the stream starts.
//!
//! Time order: exports carry no indexes, so `ORDER BY start` (and the window functions that give
//! the lookahead to the next event on a stream or thread) is a full sort. Where a table's rows come
//! in per-stream/per-thread sorted runs — as nsys writes them — `partitioned` reads those runs by
//! rowid range and merges them in Rust instead, and `links` joins calls to GPU operations by a
//! merge on correlation ids; both give exactly the SQL path's rows in the SQL path's order, and
//! fall back to it table by table (`Summary::sorted_by_sql` says where).
//!
//! Memory: the sort-free readers hold one small batch per run in progress, and the rowids of
//! the sparse runs (at most 2 MiB per table; `partitioned::SPARSE`). The SQL path's sorts
//! spill: natively the connection sets `temp_store = FILE`, so SQLite's external merge sort goes
//! to temporary files beyond its page cache. The Rust side keeps only open intervals and
//! per-resource state.

pub mod cuda_events;
pub mod cursor;
pub mod direct;
pub mod discover;
pub mod export;
pub mod gpu;
pub mod gpu_memory;
pub mod gpu_metrics;
pub mod host;
pub mod ids;
pub mod interleave;
pub mod keyed;
pub mod links;
pub mod mpi_bounds;
pub mod mpi_p2p;
pub mod nvtx;
pub mod openmp;
pub mod partitioned;
pub mod pthread;
pub mod scanset;
pub mod sched;
pub mod schema;
pub mod select;
#[cfg(not(target_family = "wasm"))]
pub mod shipped;
pub mod stream_busy;
pub mod strings;

pub use export::Export;
pub use schema::Schema;
pub use strings::StringCache;
