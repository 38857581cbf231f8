//! Reading Nsight Systems SQLite exports: schema detection, then one module per record family.
//! Each family module gives the SQL of its time-ordered cursor and decodes its rows into model
//! records; discovery finds the resources before the stream starts.
//!
//! Memory: exports carry no indexes, so every `ORDER BY start` (and the window functions that give
//! the lookahead to the next event on a stream or thread) is a sort that SQLite performs in its
//! temporary store. Natively the connection sets `temp_store = FILE`, so SQLite's external merge
//! sort spills to temporary files beyond its page cache: memory stays bounded whatever the table
//! size. The Rust side keeps only open intervals and per-resource state.

pub mod cursor;
pub mod discover;
pub mod export;
pub mod gpu;
pub mod gpu_metrics;
pub mod host;
pub mod ids;
pub mod links;
pub mod mpi_p2p;
pub mod nvtx;
pub mod partitioned;
pub mod sched;
pub mod schema;
pub mod strings;

pub use export::Export;
pub use schema::Schema;
pub use strings::StringCache;
