//! The conversion as the worker runs it: the bundle (`crate::bundle`) is written to a sink that
//! hands the page 1 MiB chunks, tagged so the page can build both the archive and the trace file
//! from the same bytes (the .prv(.gz) entry is stored verbatim in the archive).

use std::io::{self, Write};

use js_sys::{Function, Uint8Array};
use serde::{Deserialize, Serialize};
use wasm_bindgen::JsValue;

use crate::bundle::zip::ZipSink;
use crate::bundle::{self, BundleNames, BundleOptions, BundleWriter};
use crate::error::{Error, Result};
use crate::metrics::{MetricsOptions, WindowSpec};
use crate::nsys::Export;
use crate::options::{Chop, Family, Options};
use crate::pipeline::{Header, Planned, ProgressFn, SplitReader, SplitWriter};
use crate::pipeline::{Progress, Summary};
use crate::timeline::TimelineOptions;

use super::errors::to_value;
use super::source::Input;
use super::warm_start;

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
    /// Build the timeline's summary in the same pass; default true.
    pub timeline: Option<bool>,
    /// Also write the trace's Chrome/Perfetto JSON in the same pass, to `on_chunk` tagged
    /// "json" (the bytes of `prvsight convert -o NAME.json`); default false.
    pub json: Option<bool>,
    /// Measure the metrics inside the instances of this NVTX range (`NAME` or `NAME:N`).
    pub nvtx_range: Option<String>,
    /// What NCCL kernels count as: "communication" (default) or "useful".
    pub nccl_as: Option<String>,
    /// Measured time with MPI: "mpi" (TALP's window, the default) or "trace".
    pub elapsed: Option<String>,
    /// Iterations: "auto" (default), "none", or the NVTX range name that marks them.
    pub iterations: Option<String>,
    /// Measure the metrics inside this time window of the trace (`START..END`), as the page
    /// does when it keeps one iteration.
    pub metrics_window: Option<String>,
    /// Keep only the time of this NVTX range in the trace (`NAME` or `NAME:N`).
    pub keep_nvtx_range: Option<String>,
    /// Keep only this time window in the trace (`START..END`, e.g. `1.5s..2s`).
    pub keep_window: Option<String>,
    /// Clock alignment of several reports: session-start (default), mpi-init, none.
    pub align: Option<String>,
    /// How tables are read: "auto" (pages read directly where possible, the default) or "sqlite"
    /// (every row through SQLite). The output is the same; for benchmarks and tests.
    pub read_pages: Option<String>,
    /// The text of an `--nvtx-config` TOML file (NVTX payload fields as events), and its name.
    pub nvtx_config: Option<String>,
    pub nvtx_config_name: Option<String>,
}

/// Chunk tags: the whole stream is the archive; `trace` bytes are also the trace file.
const TAG_ZIP: &str = "zip";
const TAG_TRACE: &str = "trace";
/// The plain .prv, for the page's gzip worker (see [`WritingSession`]).
const TAG_PLAIN: &str = "prv";
/// The Chrome/Perfetto JSON, a file of its own beside the archive.
const TAG_JSON: &str = "json";
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
    /// The Chrome/Perfetto JSON's file name and what it holds, where it was asked for.
    json: Option<JsonResult<'a>>,
}

#[derive(Serialize)]
struct JsonResult<'a> {
    name: String,
    stats: &'a crate::chrome::ChromeStats,
}

/// Where the page wants the Chrome/Perfetto JSON (its `json` option): chunks tagged "json".
fn json_dest(options: &JsValue, on_chunk: &Function) -> Result<Option<Box<dyn Write>>> {
    let wanted = parse_options(options.clone())?.json == Some(true);
    Ok(wanted.then(|| Box::new(ChunkSink::new(on_chunk, TAG_JSON)) as Box<dyn Write>))
}

fn parse_options(options: JsValue) -> Result<ConvertOptions> {
    if options.is_undefined() || options.is_null() {
        return Ok(ConvertOptions::default());
    }
    serde_wasm_bindgen::from_value(options).map_err(|e| Error::Usage(format!("bad options: {e}")))
}

/// The conversion's and the bundle's options, from the page's.
fn options_of(options: JsValue, labels: &[&str]) -> Result<(Options, BundleOptions)> {
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
    if let Some(text) = &o.nvtx_config {
        let name = o.nvtx_config_name.as_deref().unwrap_or("the NVTX config");
        opts.nvtx_payloads = Some(crate::nvtx_config::NvtxConfig::parse(name, text)?);
    }
    if let Some(r) = nonempty(&o.read_pages) {
        opts.read_pages = r
            .parse()
            .map_err(|e| Error::Usage(format!("read_pages: {e}")))?;
    }
    if let Some(a) = nonempty(&o.align) {
        opts.align = a.parse().map_err(Error::Usage)?;
    }
    let stem = match &o.stem {
        Some(s) => bundle::stem_for(&[s.as_str()]),
        None => bundle::stem_for(labels),
    };
    let metrics = if o.metrics.unwrap_or(true) {
        let mut m = MetricsOptions::default();
        if let Some(r) = o.nvtx_range.as_deref().filter(|r| !r.is_empty()) {
            m.window = Some(WindowSpec::parse(r).map_err(Error::Usage)?);
        }
        if let Some(n) = &o.nccl_as {
            m.nccl_as = n.parse().map_err(Error::Usage)?;
        }
        if let Some(e) = nonempty(&o.elapsed) {
            m.elapsed = e.parse().map_err(Error::Usage)?;
        }
        if let Some(w) = nonempty(&o.metrics_window) {
            if let crate::options::Chop::Window { start, end } =
                crate::options::Chop::parse_window(&w).map_err(Error::Usage)?
            {
                m.time_window = Some((start, end));
            }
        }
        if let Some(i) = nonempty(&o.iterations) {
            m.iterations =
                crate::metrics::iterations::IterationSource::parse(&i).map_err(Error::Usage)?;
        }
        Some(m)
    } else {
        None
    };
    let level = gzip_level(o.gzip_level)?;
    let bopts = BundleOptions {
        stem,
        gzip: o.gzip.unwrap_or(true).then_some(level),
        metrics,
        timeline: match o.timeline.unwrap_or(true) {
            true => Some(TimelineOptions {
                nccl_as: match &o.nccl_as {
                    Some(n) => n.parse().map_err(Error::Usage)?,
                    None => Default::default(),
                },
                ..TimelineOptions::default()
            }),
            false => None,
        },
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
/// `inspected`: the inputs are those of the last kept inspection (see [`super::warm_start`]).
pub fn convert(
    inputs: &[Input],
    options: JsValue,
    on_chunk: &Function,
    on_progress: &Function,
    inspected: bool,
) -> Result<JsValue> {
    // The last conversion's timeline goes before this one builds its own.
    super::timeline::keep(None);
    let json = json_dest(&options, on_chunk)?;
    let (opts, bopts) = options_of(options, &labels_of(inputs))?;
    let taken = warm_start::exports_for(inputs, inspected)?;
    let sink = ChunkSink::new(on_chunk, TAG_ZIP);
    let mut progress = progress_to(on_progress);
    let (done, sink) = bundle::write_bundle_and_json(
        &taken.exports,
        &opts,
        taken.planned,
        &bopts,
        sink,
        json,
        &mut progress,
    )?;
    result_of(done, &bopts, sink)
}

fn labels_of(inputs: &[Input]) -> Vec<&str> {
    inputs.iter().map(|i| i.name.as_str()).collect()
}

/// The page's `gzip_level` (absent: [`crate::paraver::TRACE_GZIP_LEVEL`]), checked: the
/// options of a conversion, and the level the workers that deflate the .prv are given.
pub fn gzip_level(level: Option<u32>) -> Result<u32> {
    match level {
        None => Ok(crate::paraver::TRACE_GZIP_LEVEL),
        Some(l @ 1..=9) => Ok(l),
        Some(l) => Err(Error::Usage(format!(
            "gzip_level must be 1 (fastest) to 9 (smallest), not {l}"
        ))),
    }
}

/// Sets `fields` on the JS object `obj` (results the page reads by name).
pub fn set_fields(obj: &JsValue, fields: &[(&str, JsValue)]) -> std::result::Result<(), JsValue> {
    for (k, v) in fields {
        js_sys::Reflect::set(obj, &JsValue::from_str(k), v)?;
    }
    Ok(())
}

/// [`warm_start::read_ahead`] with the page's options.
pub fn read_ahead(inputs: &[Input], options: JsValue) -> Result<bool> {
    let (opts, _) = options_of(options, &labels_of(inputs))?;
    warm_start::read_ahead(inputs, &opts)
}

self_cell::self_cell!(
    /// The exports and the reader that borrows them (self_cell: no hand-written unsafe); the
    /// reader is `None` once finished.
    struct ReaderOverExports {
        owner: Vec<Export>,
        #[not_covariant]
        dependent: OpenReader,
    }
);

/// The dependent of [`ReaderOverExports`]: a reader over the exports, until it is finished.
type OpenReader<'c> = Option<SplitReader<'c>>;

/// The reading side of a conversion split over the page's workers (see `pipeline::SplitReader`):
/// the exports, open for as long as the reader reads them.
pub struct ReadingSession {
    reader: ReaderOverExports,
    header: String,
    /// What the session took from the inspection before it ([`warm_start::Taken::reused`]).
    reused: &'static str,
}

impl ReadingSession {
    /// Opens the inputs, plans and opens every cursor; `on_progress` and `inspected` as for
    /// [`convert`].
    pub fn open(
        inputs: &[Input],
        options: JsValue,
        on_progress: &Function,
        inspected: bool,
    ) -> Result<ReadingSession> {
        let (opts, _) = options_of(options, &labels_of(inputs))?;
        if let Some(ahead) = warm_start::reading_for(inputs, inspected, &opts) {
            return Ok(ahead);
        }
        let taken = warm_start::exports_for(inputs, inspected)?;
        let reused = taken.reused(&opts);
        Self::open_exports(
            taken.exports,
            taken.planned,
            &opts,
            reused,
            &mut progress_to(on_progress),
        )
    }

    /// A session over `exports` (the inspection's), opened before the conversion asks for it
    /// ([`warm_start::read_ahead`]); `reused` says so.
    pub fn from_exports(
        exports: Vec<Export>,
        planned: Option<Planned>,
        opts: &Options,
        reused: &'static str,
    ) -> Result<ReadingSession> {
        Self::open_exports(exports, planned, opts, reused, &mut |_: &Progress| true)
    }

    fn open_exports(
        exports: Vec<Export>,
        planned: Option<Planned>,
        opts: &Options,
        reused: &'static str,
        progress: &mut ProgressFn,
    ) -> Result<ReadingSession> {
        let mut header = None;
        let reader = ReaderOverExports::try_new(exports, |exports| {
            let (reader, h) = SplitReader::open_planned(exports, opts, planned, progress)?;
            header = Some(h);
            Ok::<_, Error>(Some(reader))
        })?;
        let header = serde_json::to_string(&header).map_err(|e| {
            Error::Usage(format!(
                "internal error: the header could not be written: {e}"
            ))
        })?;
        Ok(ReadingSession {
            reader,
            header,
            reused,
        })
    }

    /// What the session took from the inspection before it: "files and plan, read ahead",
    /// "files and plan", "files" or "nothing".
    pub fn reused(&self) -> &'static str {
        self.reused
    }

    /// What the writing side begins with (`pipeline::Header`), as JSON.
    pub fn header(&self) -> &str {
        &self.header
    }

    /// Rows of the selected tables (the progress's estimate).
    pub fn estimate(&self) -> u64 {
        (self.reader).with_dependent(|_, r| r.as_ref().map_or(0, SplitReader::estimate))
    }

    /// The next batch of at most `max` records; `None` at the end.
    pub fn next_batch(&mut self, max: usize) -> Result<Option<Vec<u8>>> {
        (self.reader).with_dependent_mut(|_, r| match r.as_mut() {
            Some(r) => r.next_batch(max),
            None => Ok(None),
        })
    }

    /// The summary, as JSON, once every batch was taken.
    pub fn finish(&mut self) -> Result<String> {
        let summary = (self.reader)
            .with_dependent_mut(|_, r| r.take().map(SplitReader::finish))
            .ok_or_else(|| Error::Usage("the reader was finished already".into()))?;
        serde_json::to_string(&summary).map_err(|e| {
            Error::Usage(format!(
                "internal error: the summary could not be written: {e}"
            ))
        })
    }

    /// The exports back (the reader that borrowed them closed): for a conversion that reads
    /// them otherwise.
    pub fn into_exports(self) -> Vec<Export> {
        self.reader.into_owner()
    }
}

/// The writing side of a split conversion: the bundle's sinks, fed the reader's batches; the
/// plain .prv goes to `on_chunk` tagged "prv" (for the gzip worker), the archive tagged "zip".
pub struct WritingSession {
    writer: Option<BundleWriter<'static, ChunkSink>>,
    split: Option<SplitWriter>,
    bopts: BundleOptions,
}

impl WritingSession {
    /// `labels`: the inputs' names (they name the outputs); `header`: the reader's, as JSON.
    pub fn begin(
        labels: &[&str],
        options: JsValue,
        header: &str,
        on_chunk: &Function,
    ) -> Result<WritingSession> {
        super::timeline::keep(None);
        let json = json_dest(&options, on_chunk)?;
        let (opts, bopts) = options_of(options, labels)?;
        let header: Header = serde_json::from_str(header).map_err(|e| {
            Error::Usage(format!("internal error: a bad header from the reader: {e}"))
        })?;
        let plain = ChunkSink::new(on_chunk, TAG_PLAIN);
        let mut writer = BundleWriter::new(
            ChunkSink::new(on_chunk, TAG_ZIP),
            Box::new(plain),
            &opts,
            &bopts,
        )?;
        if let Some(dest) = json {
            writer.json_to(dest);
        }
        writer
            .get_mut()
            .post()
            .map_err(|e| Error::write("the bundle", e))?;
        let split = SplitWriter::begin(header, &mut writer.sinks())?;
        Ok(WritingSession {
            writer: Some(writer),
            split: Some(split),
            bopts,
        })
    }

    /// Delivers a batch; returns the records delivered so far.
    pub fn feed(&mut self, batch: &[u8]) -> Result<u64> {
        match (self.split.as_mut(), self.writer.as_mut()) {
            (Some(split), Some(writer)) => split.feed(batch, &mut writer.sinks()),
            _ => Err(Error::Usage("the writer was finished already".into())),
        }
    }

    /// Finishes the sinks with the reader's summary (JSON); the bundle then waits for its .prv.gz.
    pub fn finish(&mut self, summary: &str) -> Result<PendingConversion> {
        let (Some(split), Some(mut writer)) = (self.split.take(), self.writer.take()) else {
            return Err(Error::Usage("the writer was finished already".into()));
        };
        let summary: Summary = serde_json::from_str(summary).map_err(|e| {
            Error::Usage(format!(
                "internal error: a bad summary from the reader: {e}"
            ))
        })?;
        split.finish(&mut writer.sinks())?;
        Ok(PendingConversion {
            pending: writer.finish(summary),
            bopts: self.bopts.clone(),
        })
    }
}

/// A conversion waiting for its .prv.gz (see [`WritingSession::finish`]).
pub struct PendingConversion {
    pending: bundle::PendingBundle<ChunkSink>,
    bopts: BundleOptions,
}

impl PendingConversion {
    /// Writes the rest of the archive for a .prv.gz of `size` bytes and CRC-32 `crc`; returns
    /// what [`convert`] returns.
    pub fn finish(self, crc: u32, size: u64) -> Result<JsValue> {
        let (done, sink) = self.pending.finish(crc, size)?;
        result_of(done, &self.bopts, sink)
    }
}

/// The last chunk posted, and the result object of a conversion; its timeline is kept for the
/// page's frames (`timeline`: its description, or null).
fn result_of(
    mut done: bundle::Bundled,
    bopts: &BundleOptions,
    mut sink: ChunkSink,
) -> Result<JsValue> {
    sink.post().map_err(|e| Error::write("the bundle", e))?;
    let result = to_value(&ConvertResult {
        summary: &done.summary,
        names: &done.names,
        bundle_name: format!("{}.zip", bopts.stem),
        readme: &done.readme,
        json: done.json.as_ref().map(|stats| JsonResult {
            name: format!("{}.json", bopts.stem),
            stats,
        }),
    });
    let metrics = match &done.metrics_json {
        Some(m) => JsValue::from_str(&String::from_utf8_lossy(m)),
        None => JsValue::NULL,
    };
    let timeline = done.timeline.take();
    let timeline_info = match &timeline {
        Some(t) => to_value(&t.info()),
        None => JsValue::NULL,
    };
    super::timeline::keep(timeline);
    set_fields(
        &result,
        &[
            ("pcf", Uint8Array::from(&done.pcf[..]).into()),
            ("row", Uint8Array::from(&done.row[..]).into()),
            ("metrics", metrics),
            ("timeline", timeline_info),
        ],
    )
    .map_err(|_| Error::Usage("internal error: the result could not be built".into()))?;
    Ok(result)
}
