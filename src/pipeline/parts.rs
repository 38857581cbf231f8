//! A conversion spread over several processes or machines (native builds): `prvsight convert
//! IN… --part K/N -o PART` converts the K-th of N shares of the inputs (consecutive inputs, in
//! order) into a part, and `prvsight merge PART… -o OUT.prv` joins every part into exactly the
//! bytes `prvsight convert IN… -o OUT.prv` writes (`--metrics`: the report `prvsight metrics
//! IN… --json` gives).
//!
//! Every part discovers every input (their headers, objects and time spans: the trace's
//! objects, clock alignment and rank numbering are global) and reads only its share's records,
//! which it writes in the whole conversion's order with the names interned around each
//! (pipeline/share.rs). The merge is a k-way merge of the parts' records into the sinks
//! (the Paraver writer, the metrics), one frame of each part in memory at a time; it writes
//! the .pcf and .row once, as the one conversion does.
//!
//! A part names its format, the prvsight that wrote it, its place (K of N) and the
//! conversion's fingerprint (inputs' names and sizes, the options that change records, the
//! trace), so that a merge refuses parts of another conversion or version, and a part missing
//! or given twice.
//!
//! One conversion of many inputs is made of parts too ([`groups`]): it reads them a group at
//! a time into temporary parts, which it merges.

mod format;
pub(crate) mod groups;
mod merge;
mod write;

pub use merge::{merge, PartInput};
pub use write::{write_part, PartOf, PartWritten};
