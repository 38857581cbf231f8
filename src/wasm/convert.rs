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
const CHUNK: usize = 1 << 20;

/// Collects output into chunks and posts each to `on_chunk(tag, Uint8Array)`.
struct ChunkSink<'a> {
    on_chunk: &'a Function,
    buf: Vec<u8>,
    tag: &'static str,
}

impl ChunkSink<'_> {
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

impl Write for ChunkSink<'_> {
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

impl ZipSink for ChunkSink<'_> {
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

/// Runs the conversion; returns `{ summary, names, bundle_name, readme, pcf, row, metrics }`
/// (pcf/row as `Uint8Array`, metrics as the report's JSON text, or null when not asked for). The archive and the
/// trace arrive through `on_chunk`.
pub fn convert(
    inputs: &[Input],
    options: JsValue,
    on_chunk: &Function,
    on_progress: &Function,
) -> Result<JsValue> {
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
    let exports = open_all(inputs)?;
    let sink = ChunkSink {
        on_chunk,
        buf: Vec::with_capacity(CHUNK + (64 << 10)),
        tag: TAG_ZIP,
    };
    let mut progress = |p: &Progress| {
        let v = to_value(p);
        // The page answers false to cancel; anything else (or an exception) goes on.
        !matches!(
            on_progress.call1(&JsValue::NULL, &v).map(|r| r.as_bool()),
            Ok(Some(false))
        )
    };
    let (done, mut sink) = bundle::write_bundle(&exports, &opts, &bopts, sink, &mut progress)?;
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
