//! The Paraver sink: writes the .prv body as records stream in (sorted by time, see [`prv`]), then
//! the .pcf labels and the .row names once everything is known.

pub mod cfg;
pub mod check;
pub mod events;
pub mod mpi;
pub mod pcf;
pub mod prv;
pub mod row;
pub mod states;
pub mod window;

pub use prv::ParaverWriter;
