//! `prvsight convert IN… --part K/N -o PART` and `prvsight merge PART… -o OUT.prv`: a
//! conversion spread over several processes or machines (prvsight::parts).

use std::io::{BufReader, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use prvsight::metrics::{MetricsOptions, MetricsSink};
use prvsight::model::Sink;
use prvsight::parts::{self, PartInput, PartOf};
use prvsight::{Error, Options, Result};

use crate::cli::{open_all, write_trace, Outputs};

/// Merge the parts of `convert --part K/N` into the trace one `convert` of all inputs writes.
#[derive(clap::Args)]
pub struct MergeArgs {
    /// Every part of one `convert IN… --part K/N -o PART` run (K = 1 … N), in any order.
    #[arg(required = true)]
    parts: Vec<PathBuf>,
    /// Output trace: NAME.prv or NAME.prv.gz (NAME.pcf and NAME.row are written beside it).
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Also write the metrics report (JSON, as `prvsight metrics IN… --json` prints it).
    #[arg(long)]
    metrics: Option<PathBuf>,
    /// Deflate level of a .prv.gz output, 1 (fastest) to 9 (smallest) [default: 2].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=9))]
    gzip_level: Option<u32>,
    /// No summary.
    #[arg(short, long)]
    quiet: bool,
}

/// `convert IN… --part K/N -o PART`: part K of N of the conversion of `inputs`.
pub fn convert_part(
    inputs: &[PathBuf],
    output: Option<&Path>,
    opts: &Options,
    part: &str,
    quiet: bool,
) -> Result<()> {
    let which: PartOf = part.parse().map_err(Error::Usage)?;
    let Some(output) = output else {
        return Err(Error::Usage(
            "--part writes a part: give its name with -o".into(),
        ));
    };
    let exports = open_all(inputs)?;
    let started = Instant::now();
    let mut outputs = Outputs::default();
    let mut file = outputs.buffered(output)?;
    let written = parts::write_part(&exports, opts, which, &mut file)?;
    file.into_inner()
        .map_err(|e| Error::write(output.display(), e.into_error()))?;
    outputs.commit()?;
    if which.part == 1 {
        for w in &written.plan_warnings {
            eprintln!("prvsight: warning: {w}");
        }
    }
    for w in &written.read.warnings {
        eprintln!("prvsight: warning: {w}");
    }
    if !quiet {
        eprintln!(
            "prvsight: wrote {} (part {}/{}: {} of {} inputs, {} records) in {:.2} s",
            output.display(),
            which.part,
            which.parts,
            written.share.len(),
            exports.len(),
            written.read.records,
            started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

/// `merge PART… -o OUT.prv[.gz] [--metrics OUT.json]`.
pub fn merge(a: &MergeArgs) -> Result<()> {
    if a.output.is_none() && a.metrics.is_none() {
        return Err(Error::Usage(
            "merge writes a trace (-o OUT.prv or OUT.prv.gz), metrics (--metrics OUT.json), or both".into(),
        ));
    }
    let open = |p: &PathBuf| -> Result<PartInput> {
        let file = std::fs::File::open(p).map_err(|e| Error::Unreadable {
            file: p.display().to_string(),
            detail: e.to_string(),
        })?;
        Ok(PartInput {
            name: p.display().to_string(),
            bytes: Box::new(BufReader::with_capacity(1 << 16, file)),
        })
    };
    let inputs = a.parts.iter().map(open).collect::<Result<Vec<_>>>()?;
    let started = Instant::now();
    let mut metrics = match &a.metrics {
        Some(_) => Some(MetricsSink::new(MetricsOptions::default())?),
        None => None,
    };
    let mut outputs = Outputs::default();
    let mut extra: Vec<&mut dyn Sink> = metrics.iter_mut().map(|m| m as &mut dyn Sink).collect();
    let mut inputs = Some(inputs);
    let mut run = |sinks: &mut [&mut dyn Sink]| {
        let inputs = inputs.take().expect("the merge runs once");
        parts::merge(inputs, sinks, &mut |_| true)
    };
    let summary = match &a.output {
        Some(out) => {
            let opts = Options::default();
            write_trace(&mut outputs, out, &opts, a.gzip_level, &mut extra, &mut run)?
        }
        None => run(&mut extra)?,
    };
    drop(extra);
    if let (Some(path), Some(sink)) = (&a.metrics, metrics) {
        let mut report = sink.into_report()?;
        report.warnings.clone_from(&summary.warnings);
        let mut file = outputs.buffered(path)?;
        file.write_all(report.to_json()?.as_bytes())
            .and_then(|()| file.flush())
            .map_err(|e| Error::write(path.display(), e))?;
    }
    outputs.commit()?;
    for w in &summary.warnings {
        eprintln!("prvsight: warning: {w}");
    }
    if !a.quiet {
        let what = a
            .output
            .as_ref()
            .or(a.metrics.as_ref())
            .expect("checked above");
        eprintln!(
            "prvsight: wrote {} ({} records from {} parts, {} threads in {} processes) in {:.2} s",
            what.display(),
            summary.records,
            a.parts.len(),
            summary.trace.objects.threads.len(),
            summary.trace.objects.processes.len(),
            started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}
