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

/// Like [`convert`], for a page with a second worker that gzips the trace (the browser's only
/// way to a second core for this work): `on_chunk` gets the plain .prv tagged "prv" (for that
/// worker's [`TraceGzip`]) and the archive tagged "zip" up to the trace entry's data; the
/// returned handle's `finish(crc, size)` writes the rest of the archive once the .prv.gz is
/// made and returns what `convert` returns. The archive is then what came before `finish`, the
/// .prv.gz, and what `finish` gives: byte for byte `convert`'s.
#[wasm_bindgen]
pub fn convert_trace_elsewhere(
    inputs: Array,
    options: JsValue,
    on_chunk: &Function,
    on_progress: &Function,
) -> Result<PendingBundle, JsValue> {
    let inputs = source::inputs(&inputs).map_err(to_js)?;
    convert::convert_trace_elsewhere(&inputs, options, on_chunk, on_progress)
        .map(PendingBundle)
        .map_err(to_js)
}

/// A conversion waiting for its .prv.gz (see [`convert_trace_elsewhere`]).
#[wasm_bindgen]
pub struct PendingBundle(convert::PendingConversion);

#[wasm_bindgen]
impl PendingBundle {
    /// Writes the rest of the archive for a .prv.gz of `size` bytes and CRC-32 `crc` (what
    /// [`TraceGzip::finish`] reports); returns what [`convert`] returns.
    pub fn finish(self, crc: u32, size: f64) -> Result<JsValue, JsValue> {
        if !(size >= 0.0 && size <= 9_007_199_254_740_992.0 && size.fract() == 0.0) {
            return Err(to_js(crate::Error::Usage(format!(
                "bad .prv.gz size {size}"
            ))));
        }
        self.0.finish(crc, size as u64).map_err(to_js)
    }
}

/// The .prv.gz of a plain .prv handed over in pieces, in the page's gzip worker: the same
/// bytes as a conversion's own gzip at that level (`paraver::gzip::GzipStream`).
#[wasm_bindgen]
pub struct TraceGzip(crate::paraver::gzip::GzipStream);

#[wasm_bindgen]
impl TraceGzip {
    /// Gzip at `level` (1–9; absent: the default, [`crate::paraver::TRACE_GZIP_LEVEL`]).
    #[wasm_bindgen(constructor)]
    pub fn new(level: Option<u32>) -> Result<TraceGzip, JsValue> {
        let level = level.unwrap_or(crate::paraver::TRACE_GZIP_LEVEL);
        if !(1..=9).contains(&level) {
            return Err(to_js(crate::Error::Usage(format!(
                "gzip level must be 1 to 9, not {level}"
            ))));
        }
        Ok(TraceGzip(crate::paraver::gzip::GzipStream::new(level)))
    }

    /// Compresses a piece of the .prv; returns the compressed bytes ready so far.
    pub fn write(&mut self, plain: &[u8]) -> Result<js_sys::Uint8Array, JsValue> {
        let out = self.0.write(plain).map_err(gzip_failed)?;
        Ok(js_sys::Uint8Array::from(&out[..]))
    }

    /// Ends the stream: `{ bytes, crc, size }`, the last compressed bytes and the CRC-32 and
    /// size of all of them.
    pub fn finish(self) -> Result<JsValue, JsValue> {
        let (last, crc, size) = self.0.finish().map_err(gzip_failed)?;
        let out = js_sys::Object::new();
        let set = |k: &str, v: JsValue| js_sys::Reflect::set(&out, &k.into(), &v);
        set("bytes", js_sys::Uint8Array::from(&last[..]).into())
            .and_then(|_| set("crc", JsValue::from(crc)))
            .and_then(|_| set("size", JsValue::from(size as f64)))?;
        Ok(out.into())
    }
}

fn gzip_failed(e: std::io::Error) -> JsValue {
    to_js(crate::Error::write("the .prv.gz", e))
}
