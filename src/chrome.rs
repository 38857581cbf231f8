//! The Chrome/Perfetto sink: the record stream as a JSON file in the Chrome Trace Event Format,
//! which Perfetto UI (ui.perfetto.dev) and chrome://tracing open. Fed by the same single pass as
//! the Paraver writer, with the same cut (`-t`, `--window`/`--nvtx-range`, `--min-duration`);
//! written as the records come, so memory does not grow with the trace. What maps to what:
//! docs/TRACE-FORMAT.md, "Chrome/Perfetto JSON".

mod events;
mod flows;
mod json;
mod lanes;
mod out;
mod writer;

pub use writer::{ChromeStats, ChromeWriter};
