//! prvsight: Nsight Systems SQLite exports → Paraver traces and GPU efficiency metrics.
//!
//! Flow, one direction: [`nsys`] reads exports → [`model`] is the time-ordered record stream →
//! sinks ([`paraver`], [`chrome`], metrics) → faces (the `prvsight` CLI, the wasm bindings).

pub mod bundle;
pub mod chrome;
pub mod civil;
#[cfg(not(target_family = "wasm"))]
pub mod drop_behind;
pub mod engine;

/// Hash maps keyed by our own ids and names (no untrusted-key DoS to defend against): a fast,
/// fixed-seed hasher instead of SipHash, which the profile showed at ~4 % of a conversion.
pub(crate) type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::FixedState>;
pub(crate) type FastSet<K> = std::collections::HashSet<K, foldhash::fast::FixedState>;
pub mod error;
pub mod metrics;
pub mod model;
pub mod nsys;
pub mod options;
pub mod paraver;
pub mod pipeline;
pub mod sqlfile;
#[cfg(not(target_family = "wasm"))]
pub mod staged;
#[cfg(not(target_family = "wasm"))]
pub mod synth;
pub mod verify;
pub mod vfs;
#[cfg(all(target_family = "wasm", target_os = "unknown"))]
pub mod wasm;

pub use error::{Error, Result};
pub use options::{Family, Options};
