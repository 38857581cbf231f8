//! The core's errors as plain JS objects `{ kind, message, hint }`: the page shows the message
//! (it names the file and the cause) and the hint (what to do about it).

use serde::Serialize;
use wasm_bindgen::JsValue;

use crate::error::Error;

#[derive(Serialize)]
pub struct JsError {
    /// Stable machine-readable kind: not-sqlite, not-nsys, schema, read, bad-data, write,
    /// unreadable, usage, cancelled, internal.
    pub kind: &'static str,
    pub message: String,
    pub hint: &'static str,
}

pub fn describe(e: &Error) -> JsError {
    let (kind, hint) = match e {
        Error::Unreadable { .. } => (
            "unreadable",
            "The browser could not read the file. Choose it again; if it is on a network or removable drive, copy it to the local disk first.",
        ),
        Error::NotSqlite { .. } => (
            "not-sqlite",
            "Run `nsys export --type sqlite report.nsys-rep` (or File > Export in the Nsight Systems GUI) and drop the .sqlite it writes. If the file was copied or downloaded, copy it again: it may be incomplete.",
        ),
        Error::NotNsysExport { .. } => (
            "not-nsys",
            "This database was not written by Nsight Systems. Export the report with `nsys export --type sqlite` and give that file.",
        ),
        Error::Schema { .. } => (
            "schema",
            "The export's layout is one prvsight does not read (a very old or very new Nsight Systems?). Export again with a current nsys, and report the nsys version if it persists.",
        ),
        Error::Read { .. } => (
            "read",
            "Part of the file could not be read. It may be damaged: export it again from the .nsys-rep.",
        ),
        Error::BadData { .. } => (
            "bad-data",
            "The export holds nothing this page can turn into a trace. Check the capture options (e.g. nsys profile --trace=cuda,nvtx) and the record families chosen.",
        ),
        Error::Write { .. } => (
            "write",
            "The outputs could not be kept. Close other tabs to free memory, choose fewer record families, or use the prvsight command line for very large runs.",
        ),
        Error::Usage(_) => ("usage", "Check the files and options chosen."),
        Error::Cancelled => ("cancelled", "Nothing was written. Convert again when ready."),
        #[allow(unreachable_patterns)]
        _ => ("internal", "This is a bug in prvsight; please report it with the message."),
    };
    JsError {
        kind,
        message: e.to_string(),
        hint,
    }
}

pub fn to_js(e: Error) -> JsValue {
    to_value(&describe(&e))
}

/// A value as the plain JS object its JSON gives. Through JSON rather than serde-wasm-bindgen:
/// some fields (UTC session starts in ns) exceed 2^53, which serde-wasm-bindgen refuses and
/// JSON.parse just rounds, and maps become plain objects.
pub fn to_value<T: Serialize>(v: &T) -> JsValue {
    serde_json::to_string(v)
        .ok()
        .and_then(|s| js_sys::JSON::parse(&s).ok())
        .unwrap_or_else(|| JsValue::from_str("internal error: a result could not be passed to JS"))
}
