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

/// Deflate level of a .prv.gz unless asked otherwise (1 fastest … 9 smallest): gzip is most of a
/// bundle's time, and level 2 is several times faster than 6 for a slightly larger file that
/// Paraver reads as fast. (`prvsight convert --help` names the value.)
pub const TRACE_GZIP_LEVEL: u32 = 2;
