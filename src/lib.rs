//! prvsight: Nsight Systems SQLite exports → Paraver traces and GPU efficiency metrics.
//!
//! Flow, one direction: [`engine`] reads a table's rows in time order, [`nsys`] makes them records
//! → [`model`] is the time-ordered record stream → sinks ([`paraver`], [`chrome`], [`timeline`],
//! metrics) → faces (the `prvsight` CLI, the wasm bindings).

pub mod bundle;
pub mod chrome;
pub mod dates;
pub mod engine;
#[cfg(not(target_family = "wasm"))]
pub mod page_cache;

/// Hash maps keyed by our own ids and names (no untrusted-key DoS to defend against): a fast,
/// fixed-seed hasher instead of SipHash, which showed in the profile.
pub(crate) type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::FixedState>;
pub(crate) type FastSet<K> = std::collections::HashSet<K, foldhash::fast::FixedState>;
#[cfg(not(target_family = "wasm"))]
pub mod atomic_output;
pub mod error;
pub mod metrics;
pub mod model;
pub mod nsys;
pub mod nvtx_config;
pub mod options;
pub mod paraver;
pub mod pipeline;
pub mod sqlfile;
#[cfg(not(target_family = "wasm"))]
pub mod synth;
pub mod timeline;
pub mod verify;
pub mod vfs;
#[cfg(all(target_family = "wasm", target_os = "unknown"))]
pub mod wasm;

pub use error::{Error, Result};
pub use options::{Family, Options};
#[cfg(not(target_family = "wasm"))]
pub use pipeline::parts;
