//! The Paraver sink: writes the .prv body as records stream in (sorted by time, see [`prv`]), then
//! the .pcf labels and the .row names once everything is known.

pub mod annotations;
#[cfg(not(target_family = "wasm"))]
pub mod background;
pub mod cfg;
pub mod check;
pub mod events;
pub mod gzip;
mod line;
pub mod mpi;
mod open_regions;
pub mod pcf;
mod pending;
pub mod prv;
pub mod row;
pub mod states;
pub mod window;
pub mod written;

pub use prv::ParaverWriter;

/// Deflate level of a .prv.gz unless asked otherwise (1 fastest … 9 smallest). Gzip of the .prv
/// was most of a bundle's time at level 6; on the 300 MB .prv of the 100 MB benchmark input,
/// flate2's pure-Rust deflate takes 5.6 s at level 6 and 1.2 s at level 2 for a 14 % larger
/// file (docs/PERFORMANCE.md). The trace stays on the user's disk, and Paraver reads either as
/// fast, so speed wins. (`prvsight convert --help` names the value.)
pub const TRACE_GZIP_LEVEL: u32 = 2;
