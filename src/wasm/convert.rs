//! The conversion as the worker runs it: the bundle (`crate::bundle`) is written to a sink that
//! hands the page 1 MiB chunks, tagged so the page can build both the archive and the trace file
//! from the same bytes (the .prv(.gz) entry is stored verbatim in the archive).

use std::io::{self, Write};

use js_sys::{Function, Uint8Array};
use serde::{Deserialize, Serialize};
use wasm_bindgen::JsValue;

use crate::bundle::zip::ZipSink;
use crate::bundle::{self, BundleNames, BundleOptions};
use crate::error::{Error, Result};
use crate::metrics::{MetricsOptions, WindowSpec};
use crate::options::{Chop, Family, Options};
use crate::pipeline::{Progress, Summary};

use super::errors::to_value;
use super::source::{open_all, Input};

/// Options as the page sends them.
#[derive(Deserialize, Default)]
#[serde(default)]
pub struct ConvertOptions {
    /// Family names (`kernel`, `cuda-api`...); absent or null = all present.
    pub families: Option<Vec<String>>,
    /// Gzip the .prv; default true.
    pub gzip: Option<bool>,
    /// Deflate level of the .prv.gz, 1 (fastest) to 9 (smallest); default
    /// [`TRACE_GZIP_LEVEL`](crate::paraver::TRACE_GZIP_LEVEL).
    pub gzip_level: Option<u32>,
    /// Base name of the outputs; default from the first input's name.
    pub stem: Option<String>,
    /// Compute the efficiency metrics (metrics.json); default true.
    pub metrics: Option<bool>,
    /// Measure the metrics inside the instances of this NVTX range (`NAME` or `NAME:N`).
    pub nvtx_range: Option<String>,
    /// What NCCL kernels count as: "communication" (default) or "useful".
    pub nccl_as: Option<String>,
    /// Keep only the time of this NVTX range in the trace (`NAME` or `NAME:N`).
    pub keep_nvtx_range: Option<String>,
    /// Keep only this time window in the trace (`START..END`, e.g. `1.5s..2s`).
    pub keep_window: Option<String>,
    /// Clock alignment of several reports: session-start (default), mpi-init, none.
    pub align: Option<String>,
    /// How tables are read: "auto" (pages read directly where possible, the default) or "sqlite"
    /// (every row through SQLite). The output is the same; for benchmarks and tests.
    pub read_pages: Option<String>,
}

/// Chunk tags: the whole stream is the archive; `trace` bytes are also the trace file.
const TAG_ZIP: &str = "zip";
const TAG_TRACE: &str = "trace";
/// The plain .prv, for the page's gzip worker (see [`convert_trace_elsewhere`]).
const TAG_PLAIN: &str = "prv";
const CHUNK: usize = 1 << 20;

/// Collects output into chunks and posts each to `on_chunk(tag, Uint8Array)`.
pub struct ChunkSink {
    on_chunk: Function,
    buf: Vec<u8>,
    tag: &'static str,
}

impl ChunkSink {
    fn new(on_chunk: &Function, tag: &'static str) -> ChunkSink {
        ChunkSink {
            on_chunk: on_chunk.clone(),
            buf: Vec::with_capacity(CHUNK + (64 << 10)),
            tag,
        }
    }

    fn post(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        // A copy into the JS heap; the worker transfers it to the page without another copy.
        let arr = Uint8Array::from(&self.buf[..]);
        self.buf.clear();
        self.on_chunk
            .call2(&JsValue::NULL, &JsValue::from_str(self.tag), &arr)
            .map(|_| ())
            .map_err(|e| io::Error::other(format!("handing output to the page failed: {e:?}")))
    }

    fn retag(&mut self, tag: &'static str) -> io::Result<()> {
        if tag != self.tag {
            self.post()?;
            self.tag = tag;
        }
        Ok(())
    }
}

impl Write for ChunkSink {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(data);
        if self.buf.len() >= CHUNK {
            self.post()?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.post()
    }
}

impl ZipSink for ChunkSink {
    fn stored_data_begin(&mut self, _name: &str) {
        // Errors here resurface on the next write, which posts again.
        let _ = self.retag(TAG_TRACE);
    }
    fn stored_data_end(&mut self) {
        let _ = self.retag(TAG_ZIP);
    }
}

#[derive(Serialize)]
struct ConvertResult<'a> {
    summary: &'a Summary,
    names: &'a BundleNames,
    bundle_name: String,
    readme: &'a str,
}

fn parse_options(options: JsValue) -> Result<ConvertOptions> {
    if options.is_undefined() || options.is_null() {
        return Ok(ConvertOptions::default());
    }
    serde_wasm_bindgen::from_value(options).map_err(|e| Error::Usage(format!("bad options: {e}")))
}

/// The conversion's and the bundle's options, from the page's.
fn options_of(options: JsValue, inputs: &[Input]) -> Result<(Options, BundleOptions)> {
    let o = parse_options(options)?;
    let mut opts = Options::default();
    if let Some(list) = &o.families {
        let fams = list
            .iter()
            .map(|s| s.parse::<Family>().map_err(Error::Usage))
            .collect::<Result<_>>()?;
        opts.families = Some(fams);
    }
    let nonempty = |o: &Option<String>| {
        o.as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    match (nonempty(&o.keep_nvtx_range), nonempty(&o.keep_window)) {
        (Some(_), Some(_)) => {
            return Err(Error::Usage(
                "keep either an NVTX range or a time window, not both".into(),
            ))
        }
        (Some(r), None) => opts.chop = Some(Chop::parse_nvtx(&r).map_err(Error::Usage)?),
        (None, Some(w)) => opts.chop = Some(Chop::parse_window(&w).map_err(Error::Usage)?),
        (None, None) => {}
    }
    if let Some(r) = nonempty(&o.read_pages) {
        opts.read_pages = r
            .parse()
            .map_err(|e| Error::Usage(format!("read_pages: {e}")))?;
    }
    if let Some(a) = nonempty(&o.align) {
        opts.align = a.parse().map_err(Error::Usage)?;
    }
    let labels: Vec<&str> = inputs.iter().map(|i| i.name.as_str()).collect();
    let stem = match &o.stem {
        Some(s) => bundle::stem_for(&[s.as_str()]),
        None => bundle::stem_for(&labels),
    };
    let metrics = if o.metrics.unwrap_or(true) {
        let mut m = MetricsOptions::default();
        if let Some(r) = o.nvtx_range.as_deref().filter(|r| !r.is_empty()) {
            m.window = Some(WindowSpec::parse(r).map_err(Error::Usage)?);
        }
        if let Some(n) = &o.nccl_as {
            m.nccl_as = n.parse().map_err(Error::Usage)?;
        }
        Some(m)
    } else {
        None
    };
    let level = match o.gzip_level {
        None => crate::paraver::TRACE_GZIP_LEVEL,
        Some(l @ 1..=9) => l,
        Some(l) => {
            return Err(Error::Usage(format!(
                "gzip_level must be 1 (fastest) to 9 (smallest), not {l}"
            )))
        }
    };
    let bopts = BundleOptions {
        stem,
        gzip: o.gzip.unwrap_or(true).then_some(level),
        metrics,
    };
    Ok((opts, bopts))
}

/// Reports progress to the page; its answer false cancels.
fn progress_to(on_progress: &Function) -> impl FnMut(&Progress) -> bool + '_ {
    |p: &Progress| {
        let v = to_value(p);
        // The page answers false to cancel; anything else (or an exception) goes on.
        !matches!(
            on_progress.call1(&JsValue::NULL, &v).map(|r| r.as_bool()),
            Ok(Some(false))
        )
    }
}

/// Runs the conversion; returns `{ summary, names, bundle_name, readme, pcf, row, metrics }`
/// (pcf/row as `Uint8Array`, metrics as the report's JSON text, or null when not asked for).
/// The archive and the trace arrive through `on_chunk`.
pub fn convert(
    inputs: &[Input],
    options: JsValue,
    on_chunk: &Function,
    on_progress: &Function,
) -> Result<JsValue> {
    let (opts, bopts) = options_of(options, inputs)?;
    let exports = open_all(inputs)?;
    let sink = ChunkSink::new(on_chunk, TAG_ZIP);
    let mut progress = progress_to(on_progress);
    let (done, sink) = bundle::write_bundle(&exports, &opts, &bopts, sink, &mut progress)?;
    result_of(&done, &bopts, sink)
}

/// Like [`convert`], for a page that gzips the trace in a second worker: the plain .prv goes to
/// `on_chunk` tagged "prv" as it is written, the archive (tagged "zip") stops before the trace
/// entry's data, and [`PendingConversion::finish`] writes the rest once the .prv.gz is made
/// (`crate::paraver::gzip::GzipStream`, the `TraceGzip` binding). The page puts the archive
/// together: what came before `finish`, the .prv.gz, what `finish` gives.
pub fn convert_trace_elsewhere(
    inputs: &[Input],
    options: JsValue,
    on_chunk: &Function,
    on_progress: &Function,
) -> Result<PendingConversion> {
    let (opts, bopts) = options_of(options, inputs)?;
    let exports = open_all(inputs)?;
    let mut plain = ChunkSink::new(on_chunk, TAG_PLAIN);
    let mut progress = progress_to(on_progress);
    let mut pending = bundle::write_bundle_trace_elsewhere(
        &exports,
        &opts,
        &bopts,
        ChunkSink::new(on_chunk, TAG_ZIP),
        &mut plain,
        &mut progress,
    )?;
    let posted = plain.post().and_then(|()| pending.get_mut().post());
    posted.map_err(|e| Error::write("the bundle", e))?;
    Ok(PendingConversion { pending, bopts })
}

/// A conversion waiting for its .prv.gz (see [`convert_trace_elsewhere`]).
pub struct PendingConversion {
    pending: bundle::PendingBundle<ChunkSink>,
    bopts: BundleOptions,
}

impl PendingConversion {
    /// Writes the rest of the archive for a .prv.gz of `size` bytes and CRC-32 `crc`; returns
    /// what [`convert`] returns.
    pub fn finish(self, crc: u32, size: u64) -> Result<JsValue> {
        let (done, sink) = self.pending.finish(crc, size)?;
        result_of(&done, &self.bopts, sink)
    }
}

/// The last chunk posted, and the result object of a conversion.
fn result_of(
    done: &bundle::Bundled,
    bopts: &BundleOptions,
    mut sink: ChunkSink,
) -> Result<JsValue> {
    sink.post().map_err(|e| Error::write("the bundle", e))?;
    let result = to_value(&ConvertResult {
        summary: &done.summary,
        names: &done.names,
        bundle_name: format!("{}.zip", bopts.stem),
        readme: &done.readme,
    });
    let set = |k: &str, v: &JsValue| js_sys::Reflect::set(&result, &k.into(), v);
    let metrics = match &done.metrics_json {
        Some(m) => JsValue::from_str(&String::from_utf8_lossy(m)),
        None => JsValue::NULL,
    };
    set("pcf", &Uint8Array::from(&done.pcf[..]))
        .and_then(|_| set("row", &Uint8Array::from(&done.row[..])))
        .and_then(|_| set("metrics", &metrics))
        .map_err(|_| Error::Usage("internal error: the result could not be built".into()))?;
    Ok(result)
}
