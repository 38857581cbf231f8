//! The download bundle: one zip that opens with the standard tools of Linux, macOS and Windows,
//! holding everything needed to look at a run in Paraver:
//!
//! ```text
//! STEM/STEM.prv.gz   the trace (stored: it is already compressed)
//! STEM/STEM.pcf      STEM/STEM.row
//! STEM/cfgs/...      our Paraver views that apply to the trace (see [`views`])
//! STEM/metrics.json  the GPU efficiency report (when the metrics sink is built in)
//! STEM/README.txt    what the files are and how to open them in Paraver
//! ```
//!
//! The conversion streams straight into the archive in one pass: the trace is gzipped into the
//! first entry as records arrive, and the small files follow once the pass is over. The CLI
//! writes it to a file; the browser passes a sink that posts chunks to the page.

pub mod views;
pub mod zip;

use crate::chrome::{ChromeStats, ChromeWriter};
use crate::error::{Error, Result};
use crate::metrics::{MetricsOptions, MetricsReport, MetricsSink};
use crate::model::Sink;
use crate::nsys::Export;
use crate::options::Options;
use crate::paraver::cfg::TraceFacts;
use crate::paraver::gzip::GzipWriter;
use crate::paraver::written::Written;
use crate::paraver::ParaverWriter;
use crate::pipeline::{self, Planned, ProgressFn, Summary};
use crate::timeline::{Timeline, TimelineOptions, TimelineSink};
use views::Views;
use zip::{Method, ZipSink, ZipWriter};

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/cfgs.rs"));
}

/// Our Paraver configuration files: (path under cfgs/, content). A bundle ships those that
/// apply to its trace, and NVTX views of its own ([`views::views_for`]).
pub fn cfgs() -> &'static [(&'static str, &'static str)] {
    embedded::CFGS
}

/// How to name and pack the bundle.
#[derive(Clone, Debug)]
pub struct BundleOptions {
    /// Base name of the trace files and of the folder inside the archive.
    pub stem: String,
    /// Gzip the .prv at this level (1 fastest … 9 smallest; Paraver reads .prv.gz directly);
    /// `None` stores it plain.
    pub gzip: Option<u32>,
    /// Compute the efficiency metrics in the same pass and add metrics.json; `None` = no metrics.
    pub metrics: Option<MetricsOptions>,
    /// Build the timeline's summary in the same pass (the page draws it); `None` = no timeline.
    pub timeline: Option<TimelineOptions>,
}

/// File names inside the bundle and as individual downloads.
#[derive(Clone, Debug, serde::Serialize)]
pub struct BundleNames {
    pub folder: String,
    pub prv: String,
    pub pcf: String,
    pub row: String,
}

/// What a bundle conversion gives besides the archive: the summary and the small files, which
/// the page also offers one by one (the .prv is in the archive, verbatim).
pub struct Bundled {
    pub summary: Summary,
    pub names: BundleNames,
    pub pcf: Vec<u8>,
    pub row: Vec<u8>,
    pub readme: String,
    pub metrics: Option<MetricsReport>,
    /// `metrics` as written into the archive.
    pub metrics_json: Option<Vec<u8>>,
    /// The archive's cfgs/ folder, and the views left out of it.
    pub views: Views,
    /// What the page's timeline draws (not in the archive).
    pub timeline: Option<Timeline>,
    /// What the Chrome/Perfetto JSON written beside the archive holds, where one was asked for.
    pub json: Option<ChromeStats>,
}

impl BundleOptions {
    pub fn names(&self) -> BundleNames {
        let s = &self.stem;
        BundleNames {
            folder: s.clone(),
            prv: if self.gzip.is_some() {
                format!("{s}.prv.gz")
            } else {
                format!("{s}.prv")
            },
            pcf: format!("{s}.pcf"),
            row: format!("{s}.row"),
        }
    }
}

/// A file-name-safe stem for the bundle of these inputs: the first input's name without its
/// extension, plus how many more inputs there are (`rank0+3`). Idempotent, so the CLI given
/// `-o rank0+3.zip` names things exactly as the page does.
pub fn stem_for(labels: &[&str]) -> String {
    let Some(first) = labels.first() else {
        return "trace".into();
    };
    let base = first.rsplit(['/', '\\']).next().unwrap_or(first);
    let base = base
        .strip_suffix(".sqlite")
        .or_else(|| base.strip_suffix(".sqlite3"))
        .or_else(|| base.strip_suffix(".db"))
        .unwrap_or(base);
    let safe: String = base
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.+".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut stem = match safe.trim_matches('.') {
        "" => "trace".to_owned(),
        s => s.to_owned(),
    };
    if labels.len() > 1 {
        stem.push_str(&format!("+{}", labels.len() - 1));
    }
    stem
}

/// Converts `exports` into a bundle written to `out`, in one pass. Returns the sink (flushed).
pub fn write_bundle<W: ZipSink>(
    exports: &[Export],
    opts: &Options,
    bopts: &BundleOptions,
    out: W,
    progress: &mut ProgressFn,
) -> Result<(Bundled, W)> {
    write_bundle_planned(exports, opts, None, bopts, out, progress)
}

/// [`write_bundle`], starting from a plan made before (see [`pipeline::run_planned`]).
pub fn write_bundle_planned<W: ZipSink>(
    exports: &[Export],
    opts: &Options,
    planned: Option<Planned>,
    bopts: &BundleOptions,
    out: W,
    progress: &mut ProgressFn,
) -> Result<(Bundled, W)> {
    write_bundle_and_json(exports, opts, planned, bopts, out, None, progress)
}

/// [`write_bundle_planned`], writing in the same pass the Chrome/Perfetto JSON of the trace to
/// `json` where given (the page offers it beside the archive; the same bytes as `prvsight
/// convert -o NAME.json`).
pub fn write_bundle_and_json<'j, W: ZipSink>(
    exports: &[Export],
    opts: &Options,
    planned: Option<Planned>,
    bopts: &BundleOptions,
    out: W,
    json: Option<Box<dyn std::io::Write + 'j>>,
    progress: &mut ProgressFn,
) -> Result<(Bundled, W)> {
    let names = bopts.names();
    let mut zip = ZipWriter::new(out);
    zip.start(&format!("{}/{}", names.folder, names.prv), Method::Stored)
        .map_err(io)?;
    let converted = if let Some(level) = bopts.gzip {
        // Same writer as `prvsight convert -o x.prv.gz`: identical bytes at the same level.
        let mut gz = GzipWriter::new(&mut zip, level, opts);
        let converted = convert(exports, opts, planned, bopts, &mut gz, json, progress)?;
        gz.finish().map_err(io)?;
        converted
    } else {
        // The writer hands its lines over 64 KiB at a time (and flushes at the end) already.
        convert(exports, opts, planned, bopts, &mut zip, json, progress)?
    };
    zip.finish_entry().map_err(io)?;
    write_rest(zip, converted, opts, names)
}

/// A bundle waiting for its trace entry's data (see [`BundleWriter`]).
pub struct PendingBundle<W: ZipSink> {
    zip: ZipWriter<W>,
    converted: Converted,
    opts: Options,
    names: BundleNames,
}

impl<W: ZipSink> PendingBundle<W> {
    /// Writes the rest of the archive, the .prv.gz being `size` bytes of CRC-32 `crc`.
    pub fn finish(mut self, crc: u32, size: u64) -> Result<(Bundled, W)> {
        self.zip.finish_stored_elsewhere(crc, size).map_err(io)?;
        write_rest(self.zip, self.converted, &self.opts, self.names)
    }

    /// The destination, e.g. to flush the entry's header out before the trace's bytes.
    pub fn get_mut(&mut self) -> &mut W {
        self.zip.get_mut()
    }
}

/// What the pass leaves for the archive's other entries.
struct Converted {
    summary: Summary,
    pcf: Vec<u8>,
    row: Vec<u8>,
    /// What the trace holds, to pick its views.
    written: Written,
    metrics: Option<MetricsSink>,
    timeline: Option<Timeline>,
    json: Option<ChromeStats>,
}

fn io(e: std::io::Error) -> Error {
    Error::write("the bundle", e)
}

/// The pass: the trace to `trace`; the labels, names and metrics kept for the other entries.
fn convert(
    exports: &[Export],
    opts: &Options,
    planned: Option<Planned>,
    bopts: &BundleOptions,
    trace: &mut dyn std::io::Write,
    json: Option<Box<dyn std::io::Write + '_>>,
    progress: &mut ProgressFn,
) -> Result<Converted> {
    let mut sinks = BundleSinks::new(Box::new(trace), bopts)?;
    if let Some(dest) = json {
        sinks.json_to(dest);
    }
    let summary = pipeline::run_planned(exports, opts, planned, &mut sinks.sinks(), progress)?;
    Ok(sinks.converted(summary))
}

/// A bundle's sinks: the trace writer (its .prv to a destination of the caller's, its .pcf and
/// .row kept) and the metrics, for records from the pipeline on this thread or from a reader
/// elsewhere (the browser's reader worker: see [`BundleWriter`]).
pub struct BundleSinks<'w> {
    trace: ParaverWriter<'w>,
    metrics: Option<MetricsSink>,
    timeline: Option<TimelineSink>,
    /// The Chrome/Perfetto JSON of the same records, where asked for ([`Self::json_to`]).
    json: Option<ChromeWriter<'w>>,
    pcf: SharedBytes,
    row: SharedBytes,
}

impl<'w> BundleSinks<'w> {
    pub fn new(trace: Box<dyn std::io::Write + 'w>, bopts: &BundleOptions) -> Result<Self> {
        let (pcf, row) = (SharedBytes::default(), SharedBytes::default());
        Ok(BundleSinks {
            trace: ParaverWriter::new(trace, Box::new(pcf.clone()), Box::new(row.clone())),
            metrics: match &bopts.metrics {
                Some(m) => Some(MetricsSink::new(m.clone())?),
                None => None,
            },
            timeline: bopts.timeline.clone().map(TimelineSink::new),
            json: None,
            pcf,
            row,
        })
    }

    /// Also writes the trace's Chrome/Perfetto JSON to `dest`, from the same records.
    pub fn json_to(&mut self, dest: Box<dyn std::io::Write + 'w>) {
        self.json = Some(ChromeWriter::new(dest));
    }

    /// The sinks, in the order the pipeline feeds them.
    pub fn sinks(&mut self) -> Vec<&mut dyn Sink> {
        let mut sinks: Vec<&mut dyn Sink> = vec![&mut self.trace];
        if let Some(m) = self.metrics.as_mut() {
            sinks.push(m);
        }
        if let Some(t) = self.timeline.as_mut() {
            sinks.push(t);
        }
        if let Some(j) = self.json.as_mut() {
            sinks.push(j);
        }
        sinks
    }

    /// What the other entries need, once the sinks have finished.
    fn converted(self, summary: Summary) -> Converted {
        let written = self.trace.written();
        drop(self.trace);
        Converted {
            summary,
            pcf: self.pcf.take(),
            row: self.row.take(),
            written,
            metrics: self.metrics,
            timeline: self.timeline.and_then(TimelineSink::into_timeline),
            json: self.json.as_ref().map(ChromeWriter::stats),
        }
    }
}

/// Bytes written through clones of one handle (the trace writer's .pcf and .row, read back once
/// it is done).
#[derive(Clone, Default)]
struct SharedBytes(std::rc::Rc<std::cell::RefCell<Vec<u8>>>);

impl SharedBytes {
    fn take(&self) -> Vec<u8> {
        std::mem::take(&mut self.0.borrow_mut())
    }
}

impl std::io::Write for SharedBytes {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A bundle whose trace is gzipped elsewhere (the browser's gzip worker): the trace entry's
/// header is written now, [`BundleWriter::sinks`] take the records and write the plain .prv to
/// `trace`, and [`BundleWriter::finish`] gives the [`PendingBundle`] that waits for the
/// .prv.gz. The archive is then byte for byte what [`write_bundle`] writes.
pub struct BundleWriter<'w, W: ZipSink> {
    zip: ZipWriter<W>,
    sinks: BundleSinks<'w>,
    opts: Options,
    names: BundleNames,
}

impl<'w, W: ZipSink> BundleWriter<'w, W> {
    /// The plain .prv goes to `trace`.
    pub fn new(
        out: W,
        trace: Box<dyn std::io::Write + 'w>,
        opts: &Options,
        bopts: &BundleOptions,
    ) -> Result<Self> {
        if bopts.gzip.is_none() {
            return Err(Error::Usage(
                "a bundle's trace is made elsewhere only when it is gzipped".into(),
            ));
        }
        let names = bopts.names();
        let mut zip = ZipWriter::new(out);
        zip.start(&format!("{}/{}", names.folder, names.prv), Method::Stored)
            .map_err(io)?;
        Ok(BundleWriter {
            zip,
            sinks: BundleSinks::new(trace, bopts)?,
            opts: opts.clone(),
            names,
        })
    }

    pub fn sinks(&mut self) -> Vec<&mut dyn Sink> {
        self.sinks.sinks()
    }

    /// Also writes the trace's Chrome/Perfetto JSON to `dest` ([`BundleSinks::json_to`]).
    pub fn json_to(&mut self, dest: Box<dyn std::io::Write + 'w>) {
        self.sinks.json_to(dest);
    }

    /// The destination, e.g. to post the entry's header before the trace's bytes.
    pub fn get_mut(&mut self) -> &mut W {
        self.zip.get_mut()
    }

    /// Once the sinks have finished: the bundle waiting for its .prv.gz.
    pub fn finish(self, summary: Summary) -> PendingBundle<W> {
        PendingBundle {
            zip: self.zip,
            converted: self.sinks.converted(summary),
            opts: self.opts,
            names: self.names,
        }
    }
}

/// The entries after the trace's (labels, names, cfgs, metrics, README) and the central
/// directory.
fn write_rest<W: ZipSink>(
    mut zip: ZipWriter<W>,
    c: Converted,
    opts: &Options,
    names: BundleNames,
) -> Result<(Bundled, W)> {
    let folder = &names.folder;
    zip.add(&format!("{folder}/{}", names.pcf), Method::Deflate, &c.pcf)
        .map_err(io)?;
    zip.add(&format!("{folder}/{}", names.row), Method::Deflate, &c.row)
        .map_err(io)?;
    let facts = TraceFacts::from_written(&c.written, &String::from_utf8_lossy(&c.pcf));
    let views = views::views_for(&facts, &c.written.nvtx_domains);
    for v in &views.shipped {
        zip.add(
            &format!("{folder}/cfgs/{}", v.path),
            Method::Deflate,
            v.text.as_bytes(),
        )
        .map_err(io)?;
    }
    let mut metrics = c.metrics.map(MetricsSink::into_report).transpose()?;
    if let Some(m) = metrics.as_mut() {
        m.warnings = c.summary.warnings.clone();
    }
    let metrics_json = match &metrics {
        Some(m) => Some(m.to_json()?.into_bytes()),
        None => None,
    };
    if let Some(m) = &metrics_json {
        zip.add(&format!("{folder}/metrics.json"), Method::Deflate, m)
            .map_err(io)?;
    }
    let readme = readme(&c.summary, opts, &names, metrics_json.is_some(), &views);
    zip.add(
        &format!("{folder}/README.txt"),
        Method::Deflate,
        readme.as_bytes(),
    )
    .map_err(io)?;
    let out = zip.finish().map_err(io)?;
    Ok((
        Bundled {
            summary: c.summary,
            names,
            pcf: c.pcf,
            row: c.row,
            readme,
            metrics,
            metrics_json,
            views,
            timeline: c.timeline,
            json: c.json,
        },
        out,
    ))
}

/// The README.txt of a bundle. Only facts from the trace, no clock time: the same inputs give
/// the same archive on every machine and in the browser. Long: the text top to bottom.
pub fn readme(
    summary: &Summary,
    opts: &Options,
    names: &BundleNames,
    has_metrics: bool,
    views: &Views,
) -> String {
    let t = &summary.trace;
    let o = &t.objects;
    let mut s = String::new();
    let mut line = |l: &str| {
        s.push_str(l);
        s.push('\n');
    };
    line(&format!(
        "{} - Paraver bundle made by prvsight {}",
        names.folder,
        env!("CARGO_PKG_VERSION")
    ));
    line("");
    line("Converted from:");
    for (i, src) in t.sources.iter().enumerate() {
        let ranks: Vec<String> = o
            .processes
            .iter()
            .filter(|p| p.source == i)
            .filter_map(|p| p.rank.map(|r| r.to_string()))
            .collect();
        let rank = match ranks.len() {
            0 => String::new(),
            1 => format!(", rank {}", ranks[0]),
            _ => format!(", ranks {}", ranks.join(" ")),
        };
        line(&format!(
            "  {} (Nsight Systems {}, host {}{rank})",
            src.label.rsplit(['/', '\\']).next().unwrap_or(&src.label),
            src.product_version.as_deref().unwrap_or("version unknown"),
            src.hostname
        ));
    }
    let fams = match &opts.families {
        Some(f) => f.iter().map(|f| f.name()).collect::<Vec<_>>().join(", "),
        None => "all present in the inputs".to_owned(),
    };
    line(&format!("Record families asked for: {fams}"));
    let counts: Vec<String> = summary
        .counts
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    line(&format!(
        "Trace: {} records ({}), {} process(es), {} thread(s) and GPU stream(s), {} GPU(s), {:.6} s",
        summary.records,
        counts.join(", "),
        o.processes.len(),
        o.threads.len(),
        o.devices.len(),
        t.end_time as f64 / 1e9
    ));
    for w in &summary.warnings {
        line(&format!("Note: {w}"));
    }
    line("");
    line("Files:");
    line(&format!(
        "  {:<28} the Paraver trace (Paraver reads it compressed or not)",
        names.prv
    ));
    line(&format!(
        "  {:<28} names of the states, events and values",
        names.pcf
    ));
    line(&format!(
        "  {:<28} names of the nodes, processes, threads and GPU streams",
        names.row
    ));
    let has_views = views.cfg_paths().next().is_some();
    if has_views {
        line(&format!(
            "  {:<28} ready-made Paraver views that apply to this trace (below)",
            "cfgs/"
        ));
    }
    if has_metrics {
        line(&format!(
            "  {:<28} GPU efficiency metrics (JSON, see prvsight's docs/METRICS.md)",
            "metrics.json"
        ));
    }
    line("");
    line("Opening it in Paraver:");
    line("  1. Get Paraver (wxparaver) for Linux, macOS or Windows from the BSC tools page,");
    line("     https://tools.bsc.es/paraver, and start it.");
    line("  2. Extract this archive; keep the .prv(.gz), .pcf and .row files side by side.");
    line(&format!(
        "  3. File > Load Trace... and choose {}.",
        names.prv
    ));
    if has_views {
        line("  4. File > Load Configuration... and choose a file in cfgs/; each opens one view");
        line("     (a timeline or a table) on the loaded trace. Several can be open at once.");
    }
    line("");
    for l in views_section(views) {
        line(&l);
    }
    line("The same bundle comes from the command line: prvsight bundle IN.sqlite... -o OUT.zip");
    s
}

/// The README's lines on the views shipped and on those left out, with why (none when there is
/// neither).
fn views_section(views: &Views) -> Vec<String> {
    let mut lines = Vec::new();
    let shipped: Vec<&str> = views.cfg_paths().collect();
    if !shipped.is_empty() {
        lines.push("Views in cfgs/ (cfgs/README.md says what each shows):".to_owned());
        let mut row = String::from(" ");
        for (i, p) in shipped.iter().enumerate() {
            let comma = if i + 1 < shipped.len() { "," } else { "" };
            if row.len() + p.len() + 2 > 90 {
                lines.push(std::mem::replace(&mut row, String::from(" ")));
            }
            row.push_str(&format!(" {p}{comma}"));
        }
        lines.push(row);
    }
    if !views.left_out.is_empty() {
        lines.push(
            "Views left out, as they do not apply to this trace (prvsight check --cfg):".to_owned(),
        );
        for (p, why) in &views.left_out {
            lines.push(format!("  {p}: {why}"));
        }
    }
    if !lines.is_empty() {
        lines.push(String::new());
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_are_file_name_safe() {
        assert_eq!(
            stem_for(&["/x/y/testcuda_report1.sqlite"]),
            "testcuda_report1"
        );
        assert_eq!(
            stem_for(&["C:\\a\\rank0.sqlite", "rank1.sqlite", "rank2.sqlite"]),
            "rank0+2"
        );
        assert_eq!(stem_for(&["my run (2).sqlite"]), "my_run__2_");
        assert_eq!(stem_for(&[".sqlite"]), "trace");
        assert_eq!(stem_for(&["rank0+3"]), "rank0+3");
        assert_eq!(stem_for(&[]), "trace");
    }

    #[test]
    fn names_follow_the_gzip_choice() {
        let n = BundleOptions {
            stem: "r".into(),
            gzip: Some(crate::paraver::TRACE_GZIP_LEVEL),
            metrics: None,
            timeline: None,
        }
        .names();
        assert_eq!(
            (n.prv.as_str(), n.pcf.as_str(), n.row.as_str()),
            ("r.prv.gz", "r.pcf", "r.row")
        );
        let n = BundleOptions {
            stem: "r".into(),
            gzip: None,
            metrics: None,
            timeline: None,
        }
        .names();
        assert_eq!(n.prv, "r.prv");
    }
}
