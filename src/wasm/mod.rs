//! The browser face: wasm-bindgen bindings over the same pipeline as the CLI (no second
//! implementation). The page never calls these directly: `www/worker.js` does, in a dedicated
//! Worker (FileReaderSync, which the Blob VFS needs, exists only there), and `www/bridge.js` is
//! the page's one typed door to that worker.
//!
//! Inputs are `{ name, data }` objects where `data` is a `File`/`Blob` (read through the
//! read-only VFS, never copied whole into wasm memory) or a `Uint8Array` (Node, tests).
//! Errors are thrown as `{ kind, message, hint }` objects (see [`errors`]).

pub mod convert;
pub mod errors;
pub mod inspect;
pub mod source;

use js_sys::{Array, Function};
use wasm_bindgen::prelude::*;

use errors::{to_js, to_value};

thread_local! {
    static LAST_PANIC: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// A panic shows as a readable message in the console instead of "unreachable", and is kept
/// for [`last_panic`] so the page can show it too.
#[wasm_bindgen(start)]
pub fn start() {
    std::panic::set_hook(Box::new(|info| {
        console_error_panic_hook::hook(info);
        LAST_PANIC.with(|p| *p.borrow_mut() = Some(info.to_string()));
    }));
}

/// The message of the last panic (a bug), if any: the worker adds it to the error it reports.
#[wasm_bindgen]
pub fn last_panic() -> Option<String> {
    LAST_PANIC.with(|p| p.borrow_mut().take())
}

/// prvsight's version.
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_owned()
}

/// What the exports hold (see [`inspect::InspectReport`]). Throws `{kind, message, hint}` when
/// a file cannot be opened as an export.
#[wasm_bindgen]
pub fn inspect(inputs: Array) -> Result<JsValue, JsValue> {
    let inputs = source::inputs(&inputs).map_err(to_js)?;
    let exports = source::open_all(&inputs).map_err(to_js)?;
    let sizes: Vec<u64> = inputs
        .iter()
        .map(|i| {
            i.data
                .dyn_ref::<web_sys::Blob>()
                .map(|b| b.size() as u64)
                .or_else(|| {
                    i.data
                        .dyn_ref::<js_sys::Uint8Array>()
                        .map(|a| a.length() as u64)
                })
                .unwrap_or(0)
        })
        .collect();
    let report = inspect::inspect(&exports, &sizes).map_err(to_js)?;
    Ok(to_value(&report))
}

/// Converts the exports into one trace and its bundle. `options`: `{ families?: string[],
/// gzip?: bool, stem?: string }`. `on_chunk(tag, Uint8Array)` receives the archive in order
/// (`tag` "trace" marks the bytes that are also the trace file); `on_progress({phase,
/// records_done, records_estimate})` returns false to cancel. Returns the summary, file names,
/// README text, and the .pcf/.row bytes.
#[wasm_bindgen]
pub fn convert(
    inputs: Array,
    options: JsValue,
    on_chunk: &Function,
    on_progress: &Function,
) -> Result<JsValue, JsValue> {
    let inputs = source::inputs(&inputs).map_err(to_js)?;
    convert::convert(&inputs, options, on_chunk, on_progress).map_err(to_js)
}
