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
pub mod timeline;
pub mod warm_start;

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

/// Compares two runs given as their metrics reports (the `metrics` of two conversions, or a
/// metrics.json the user added): `{a, b, model, factors, verdict: {main_factor, direction,
/// summary}, scale, kernel_time, kernels}` (docs/METRICS.md, "Comparing two runs"). Throws
/// `{kind, message, hint}` when a report is not one or the runs share no efficiency model.
#[wasm_bindgen]
pub fn compare(a_label: &str, a: JsValue, b_label: &str, b: JsValue) -> Result<JsValue, JsValue> {
    let read = |label: &str, v: JsValue| -> Result<serde_json::Value, JsValue> {
        serde_wasm_bindgen::from_value(v).map_err(|e| {
            to_js(crate::Error::Usage(format!(
                "{label}: not a metrics report ({e})"
            )))
        })
    };
    let (va, vb) = (read(a_label, a)?, read(b_label, b)?);
    let c = crate::metrics::compare::compare(a_label, &va, b_label, &vb).map_err(to_js)?;
    Ok(to_value(&c))
}

/// prvsight's version.
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_owned()
}

/// What the exports hold (see [`inspect::InspectReport`]). Throws `{kind, message, hint}` when
/// a file cannot be opened as an export. `keep`: keep the exports open, with the conversion's
/// plan made for the inspection, for the conversion that follows (see [`warm_start`]; its `inspected`
/// argument says it is of these files).
#[wasm_bindgen]
pub fn inspect(inputs: Array, keep: Option<bool>) -> Result<JsValue, JsValue> {
    // Before opening: the files kept from the last inspection are not held with these.
    warm_start::forget();
    let inputs = source::inputs(&inputs).map_err(to_js)?;
    let exports = source::open_all(&inputs).map_err(to_js)?;
    let sizes: Vec<u64> = inputs.iter().map(source::input_size).collect();
    let (report, planned) = inspect::inspect(&exports, &sizes).map_err(to_js)?;
    if keep == Some(true) {
        warm_start::keep(warm_start::Inspected::new(&inputs, exports, planned));
    }
    Ok(to_value(&report))
}

/// Converts the exports into one trace and its bundle. `options`: `{ families?: string[],
/// gzip?: bool, stem?: string }`. `on_chunk(tag, Uint8Array)` receives the archive in order
/// (`tag` "trace" marks the bytes that are also the trace file); `on_progress({phase,
/// records_done, records_estimate})` returns false to cancel. Returns the summary, file names,
/// README text, and the .pcf/.row bytes. `inspected`: these are the very files of the last
/// [`inspect`] with `keep` (its exports and plan are then used where they fit; see [`warm_start`]).
#[wasm_bindgen]
pub fn convert(
    inputs: Array,
    options: JsValue,
    on_chunk: &Function,
    on_progress: &Function,
    inspected: Option<bool>,
) -> Result<JsValue, JsValue> {
    let inputs = source::inputs(&inputs).map_err(to_js)?;
    convert::convert(
        &inputs,
        options,
        on_chunk,
        on_progress,
        inspected == Some(true),
    )
    .map_err(to_js)
}

/// Opens, ahead of the click, the reading session of a split conversion of `inputs` (the very
/// files of the last inspection, kept) with `options`; false where nothing was kept for them.
/// The conversion's [`ReaderSession`] then starts from it where its options are the same (see
/// [`warm_start::read_ahead`]). Throws as [`ReaderSession`]'s constructor would.
#[wasm_bindgen]
pub fn read_ahead(inputs: Array, options: JsValue) -> Result<bool, JsValue> {
    let inputs = source::inputs(&inputs).map_err(to_js)?;
    convert::read_ahead(&inputs, options).map_err(to_js)
}

/// The reading side of a conversion split over the page's workers (the reader worker): opens
/// the inputs, plans and opens every cursor (`on_progress` as for [`convert`]); then
/// `next_batch(max)` gives the records as batches of bytes for a [`WriterSession`], and
/// `finish()` the summary the writer ends with.
#[wasm_bindgen]
pub struct ReaderSession(convert::ReadingSession);

#[wasm_bindgen]
impl ReaderSession {
    /// `inspected` as for [`convert`].
    #[wasm_bindgen(constructor)]
    pub fn new(
        inputs: Array,
        options: JsValue,
        on_progress: &Function,
        inspected: Option<bool>,
    ) -> Result<ReaderSession, JsValue> {
        let inputs = source::inputs(&inputs).map_err(to_js)?;
        convert::ReadingSession::open(&inputs, options, on_progress, inspected == Some(true))
            .map(ReaderSession)
            .map_err(to_js)
    }

    /// What the reader took from the last inspection (see [`warm_start`]): "files and plan, read
    /// ahead" (the session opened before, [`read_ahead`]), "files and plan", "files" (the
    /// options plan otherwise) or "nothing" (other files, or none kept).
    pub fn reused(&self) -> String {
        self.0.reused().to_owned()
    }

    /// What the writer begins with (JSON).
    pub fn header(&self) -> String {
        self.0.header().to_owned()
    }

    /// Rows of the selected tables: about how many records will come.
    pub fn estimate(&self) -> f64 {
        self.0.estimate() as f64
    }

    /// The next batch of at most `max` records, or `undefined` at the end.
    pub fn next_batch(&mut self, max: u32) -> Result<Option<js_sys::Uint8Array>, JsValue> {
        let batch = self.0.next_batch(max as usize).map_err(to_js)?;
        Ok(batch.map(|b| js_sys::Uint8Array::from(&b[..])))
    }

    /// The conversion's summary (JSON), once every batch was taken.
    pub fn finish(&mut self) -> Result<String, JsValue> {
        self.0.finish().map_err(to_js)
    }
}

/// The writing side of a split conversion (the writer worker): the bundle's sinks, fed the
/// reader's batches; the archive goes to `on_chunk` tagged "zip", the plain .prv tagged "prv"
/// for [`TraceSegments`], and the whole is byte for byte [`convert`]'s.
#[wasm_bindgen]
pub struct WriterSession(convert::WritingSession);

#[wasm_bindgen]
impl WriterSession {
    /// `labels`: the inputs' file names (they name the outputs); `header`: the reader's.
    #[wasm_bindgen(constructor)]
    pub fn new(
        labels: Vec<String>,
        options: JsValue,
        header: &str,
        on_chunk: &Function,
    ) -> Result<WriterSession, JsValue> {
        let labels: Vec<&str> = labels.iter().map(String::as_str).collect();
        convert::WritingSession::begin(&labels, options, header, on_chunk)
            .map(WriterSession)
            .map_err(to_js)
    }

    /// Delivers a batch of the reader's; returns how many records were delivered so far.
    pub fn feed(&mut self, batch: &[u8]) -> Result<f64, JsValue> {
        self.0.feed(batch).map(|n| n as f64).map_err(to_js)
    }

    /// Ends the sinks with the reader's summary; the bundle then waits for its .prv.gz.
    pub fn finish(&mut self, summary: &str) -> Result<PendingBundle, JsValue> {
        self.0.finish(summary).map(PendingBundle).map_err(to_js)
    }
}

/// A bundle waiting for its .prv.gz (see [`WriterSession::finish`]).
#[wasm_bindgen]
pub struct PendingBundle(convert::PendingConversion);

#[wasm_bindgen]
impl PendingBundle {
    /// Writes the rest of the archive for a .prv.gz of `size` bytes and CRC-32 `crc` (what
    /// [`TraceJoin::finish`] reports); returns what [`convert`] returns.
    pub fn finish(self, crc: u32, size: f64) -> Result<JsValue, JsValue> {
        let size = js_length(".prv.gz size", size)?;
        self.0.finish(crc, size).map_err(to_js)
    }
}

/// [`convert::gzip_level`], thrown to the page.
fn gzip_level(level: Option<u32>) -> Result<u32, JsValue> {
    convert::gzip_level(level).map_err(to_js)
}

/// A JS object of `fields` ([`convert::set_fields`]).
fn object(fields: &[(&str, JsValue)]) -> Result<JsValue, JsValue> {
    let out = JsValue::from(js_sys::Object::new());
    convert::set_fields(&out, fields)?;
    Ok(out)
}

/// A length from the page: whole and exact in an f64 (2^53), as a JS number carries it.
fn js_length(what: &str, n: f64) -> Result<u64, JsValue> {
    if (0.0..=9_007_199_254_740_992.0).contains(&n) && n.fract() == 0.0 {
        Ok(n as u64)
    } else {
        Err(to_js(crate::Error::Usage(format!("bad {what} {n}"))))
    }
}

/// Deflates segments of the plain .prv in a page worker, one after another
/// (`paraver::gzip::SegmentDeflate`): the page cuts the .prv at every [`segment_bytes`] and
/// hands each segment to whichever worker is free; a [`TraceJoin`] puts them together.
#[wasm_bindgen]
pub struct TraceSegments {
    deflate: crate::paraver::gzip::SegmentDeflate,
    out: Vec<u8>,
}

/// Plain bytes per segment of the .prv.gz (the last one may be shorter).
#[wasm_bindgen]
pub fn segment_bytes() -> f64 {
    crate::paraver::gzip::SEGMENT_BYTES as f64
}

#[wasm_bindgen]
impl TraceSegments {
    /// Deflate at `level` (1–9; absent: the default).
    #[wasm_bindgen(constructor)]
    pub fn new(level: Option<u32>) -> Result<TraceSegments, JsValue> {
        Ok(TraceSegments {
            deflate: crate::paraver::gzip::SegmentDeflate::new(gzip_level(level)?),
            out: Vec::new(),
        })
    }

    /// Deflates a piece of the open segment (its bytes are kept until [`end`](Self::end):
    /// one message and one Blob per segment in the page instead of one per piece).
    pub fn write(&mut self, plain: &[u8]) -> Result<(), JsValue> {
        self.deflate
            .write(plain, &mut self.out)
            .map_err(gzip_failed)
    }

    /// Ends the segment: `{ bytes, plain_crc, plain_len, crc, len }`, all its deflated bytes,
    /// the CRC-32 and length of its plain bytes and of its deflated bytes (for
    /// [`TraceJoin::segment`]). The next write starts the next segment.
    pub fn end(&mut self) -> Result<JsValue, JsValue> {
        let ended = self.deflate.end(&mut self.out);
        let bytes = js_sys::Uint8Array::from(&self.out[..]);
        self.out.clear();
        let sums = ended.map_err(gzip_failed)?;
        object(&[
            ("bytes", bytes.into()),
            ("plain_crc", sums.plain.crc.into()),
            ("plain_len", (sums.plain.len as f64).into()),
            ("crc", sums.deflated.crc.into()),
            ("len", (sums.deflated.len as f64).into()),
        ])
    }
}

/// The .prv.gz put together from its segments in order (`paraver::gzip::Join`): its header,
/// then each segment's sums, then its end — byte for byte the .prv.gz of a conversion.
#[wasm_bindgen]
pub struct TraceJoin {
    join: Option<crate::paraver::gzip::Join>,
    header: Vec<u8>,
}

#[wasm_bindgen]
impl TraceJoin {
    #[wasm_bindgen(constructor)]
    pub fn new(level: Option<u32>) -> Result<TraceJoin, JsValue> {
        let (join, header) = crate::paraver::gzip::Join::new(gzip_level(level)?);
        Ok(TraceJoin {
            join: Some(join),
            header: header.to_vec(),
        })
    }

    /// The .prv.gz's first bytes, before its first segment's.
    pub fn header(&self) -> js_sys::Uint8Array {
        js_sys::Uint8Array::from(&self.header[..])
    }

    /// The next segment, as [`TraceSegments::end`] summed it up.
    pub fn segment(
        &mut self,
        plain_crc: u32,
        plain_len: f64,
        crc: u32,
        len: f64,
    ) -> Result<(), JsValue> {
        use crate::paraver::gzip::{SegmentSums, Sum};
        let sums = SegmentSums {
            plain: Sum {
                crc: plain_crc,
                len: js_length("segment length", plain_len)?,
            },
            deflated: Sum {
                crc,
                len: js_length("deflated segment length", len)?,
            },
        };
        self.joining()?.segment(&sums);
        Ok(())
    }

    /// Ends the .prv.gz: `{ bytes, crc, size }`, its last bytes, and the CRC-32 and size of all
    /// of it (for [`PendingBundle::finish`]).
    pub fn finish(&mut self) -> Result<JsValue, JsValue> {
        let (tail, sum) = self.join.take().ok_or_else(finished_already)?.finish();
        object(&[
            ("bytes", js_sys::Uint8Array::from(&tail[..]).into()),
            ("crc", sum.crc.into()),
            ("size", (sum.len as f64).into()),
        ])
    }

    fn joining(&mut self) -> Result<&mut crate::paraver::gzip::Join, JsValue> {
        self.join.as_mut().ok_or_else(finished_already)
    }
}

fn finished_already() -> JsValue {
    to_js(crate::Error::Usage(
        "the .prv.gz was finished already".into(),
    ))
}

fn gzip_failed(e: std::io::Error) -> JsValue {
    to_js(crate::Error::write("the .prv.gz", e))
}
