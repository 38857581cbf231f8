//! The download bundle: one zip that opens with the standard tools of Linux, macOS and Windows,
//! holding everything needed to look at a run in Paraver:
//!
//! ```text
//! STEM/STEM.prv.gz   the trace (stored: it is already compressed)
//! STEM/STEM.pcf      STEM/STEM.row
//! STEM/cfgs/...      our Paraver views (embedded at build time from cfgs/)
//! STEM/metrics.json  the GPU efficiency report (when the metrics sink is built in)
//! STEM/README.txt    what the files are and how to open them in Paraver
//! ```
//!
//! The conversion streams straight into the archive in one pass: the trace is gzipped into the
//! first entry as records arrive, and the small files follow once the pass is over. The CLI
//! writes it to a file; the browser passes a sink that posts chunks to the page.

pub mod zip;

use crate::error::{Error, Result};
use crate::metrics::{MetricsOptions, MetricsReport, MetricsSink};
use crate::model::Sink;
use crate::nsys::Export;
use crate::options::Options;
use crate::paraver::gzip::GzipWriter;
use crate::paraver::ParaverWriter;
use crate::pipeline::{self, ProgressFn, Summary};
use zip::{Method, ZipSink, ZipWriter};

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/cfgs.rs"));
}

/// Our Paraver configuration files: (path under cfgs/, content).
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
    let names = bopts.names();
    let io = |e| Error::write("the bundle", e);
    let mut zip = ZipWriter::new(out);
    let (mut pcf, mut row) = (Vec::new(), Vec::new());
    let mut metrics = match &bopts.metrics {
        Some(m) => Some(MetricsSink::new(m.clone())?),
        None => None,
    };
    zip.start(&format!("{}/{}", names.folder, names.prv), Method::Stored)
        .map_err(io)?;
    let summary = if let Some(level) = bopts.gzip {
        // Same writer as `prvsight convert -o x.prv.gz`: identical bytes at the same level.
        let mut gz = GzipWriter::new(&mut zip, level, opts);
        let summary = {
            let mut w =
                ParaverWriter::new(Box::new(&mut gz), Box::new(&mut pcf), Box::new(&mut row));
            run(exports, opts, &mut w, metrics.as_mut(), progress)?
        };
        gz.finish().map_err(io)?;
        summary
    } else {
        // The writer hands its lines over 64 KiB at a time (and flushes at the end) already.
        let mut w = ParaverWriter::new(Box::new(&mut zip), Box::new(&mut pcf), Box::new(&mut row));
        run(exports, opts, &mut w, metrics.as_mut(), progress)?
    };
    zip.finish_entry().map_err(io)?;
    let folder = &names.folder;
    zip.add(&format!("{folder}/{}", names.pcf), Method::Deflate, &pcf)
        .map_err(io)?;
    zip.add(&format!("{folder}/{}", names.row), Method::Deflate, &row)
        .map_err(io)?;
    for (path, text) in cfgs() {
        zip.add(
            &format!("{folder}/cfgs/{path}"),
            Method::Deflate,
            text.as_bytes(),
        )
        .map_err(io)?;
    }
    let metrics = metrics.map(MetricsSink::into_report).transpose()?;
    let metrics_json = match &metrics {
        Some(m) => Some(m.to_json()?.into_bytes()),
        None => None,
    };
    if let Some(m) = &metrics_json {
        zip.add(&format!("{folder}/metrics.json"), Method::Deflate, m)
            .map_err(io)?;
    }
    let readme = readme(&summary, opts, &names, metrics_json.is_some());
    zip.add(
        &format!("{folder}/README.txt"),
        Method::Deflate,
        readme.as_bytes(),
    )
    .map_err(io)?;
    let out = zip.finish().map_err(io)?;
    Ok((
        Bundled {
            summary,
            names,
            pcf,
            row,
            readme,
            metrics,
            metrics_json,
        },
        out,
    ))
}

/// One pass feeding the trace writer and, when asked, the metrics.
fn run(
    exports: &[Export],
    opts: &Options,
    writer: &mut ParaverWriter,
    metrics: Option<&mut MetricsSink>,
    progress: &mut ProgressFn,
) -> Result<Summary> {
    match metrics {
        Some(m) => pipeline::run(exports, opts, &mut [writer as &mut dyn Sink, m], progress),
        None => pipeline::run(exports, opts, &mut [writer as &mut dyn Sink], progress),
    }
}

/// The README.txt of a bundle. Only facts from the trace, no clock time: the same inputs give
/// the same archive on every machine and in the browser.
pub fn readme(summary: &Summary, opts: &Options, names: &BundleNames, has_metrics: bool) -> String {
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
    if !cfgs().is_empty() {
        line(&format!(
            "  {:<28} ready-made Paraver views for this kind of trace",
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
    if !cfgs().is_empty() {
        line("  4. File > Load Configuration... and choose a file in cfgs/; each opens one view");
        line("     (a timeline or a table) on the loaded trace. Several can be open at once.");
    }
    line("");
    line("The same bundle comes from the command line: prvsight bundle IN.sqlite... -o OUT.zip");
    s
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
        }
        .names();
        assert_eq!(n.prv, "r.prv");
    }
}
