//! `prvsight metrics`: the GPU efficiency report of a conversion (prvsight::metrics).

use std::io::Write;
use std::path::PathBuf;

use prvsight::{Error, Options, Result};

use crate::cli::open_all;

#[derive(clap::Args)]
pub struct MetricsArgs {
    /// Exports written by `nsys export --type sqlite` (one per rank/process).
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// Print the report as JSON (schema: docs/METRICS.md) instead of tables.
    #[arg(long)]
    json: bool,
    /// What NCCL kernels count as: communication (default) or useful (TALP-compatible).
    #[arg(long, default_value = "communication")]
    nccl_as: String,
    /// Measured time with MPI: mpi (default: TALP's window, from the end of MPI_Init to the
    /// start of MPI_Finalize) or trace (the whole trace, setup and teardown included).
    #[arg(long, default_value = "mpi")]
    elapsed: String,
    /// Iterations: auto (repeating NVTX ranges, else a regular GPU kernel), none, or the
    /// name of the NVTX range that marks them.
    #[arg(long, default_value = "auto")]
    iterations: String,
    /// Measure only inside this time window of the trace, e.g. 1.5s..2s (one iteration's
    /// start_ns..end_ns from the iteration table, with `ns`).
    #[arg(long, conflicts_with = "nvtx_range")]
    window: Option<String>,
    /// Measure only inside the instances of NVTX range NAME, or NAME:N (N-th instance of each thread).
    #[arg(long)]
    nvtx_range: Option<String>,
    /// Bins of the time series over the trace.
    #[arg(long, default_value_t = 200)]
    bins: usize,
    /// Rows of the top-kernel, histogram and NVTX range tables.
    #[arg(long, default_value_t = 20)]
    top: usize,
    /// Record families to read, comma-separated (as for convert; default: all present).
    #[arg(short = 't', long = "trace")]
    trace: Option<String>,
    /// Clock alignment of several reports: session-start (default), mpi-init, none.
    #[arg(long, default_value = "session-start")]
    align: String,
    /// Give the reading thread helper threads: auto, on or off (as for convert; the
    /// report is the same; for testing and benchmarks).
    #[arg(long = "read-helpers", default_value = "auto", hide = true)]
    read_helpers: String,
    /// Read many inputs a group at a time: auto, off or N inputs a group (as for convert).
    #[arg(long = "read-groups", default_value = "auto", hide = true)]
    read_groups: String,
}

/// `metrics IN…`: the report, as text or JSON, on standard output.
pub fn run(a: &MetricsArgs) -> Result<()> {
    use prvsight::metrics::{self, MetricsOptions, WindowSpec};
    let mopts = MetricsOptions {
        nccl_as: a.nccl_as.parse().map_err(Error::Usage)?,
        elapsed: a.elapsed.parse().map_err(Error::Usage)?,
        iterations: prvsight::metrics::iterations::IterationSource::parse(&a.iterations)
            .map_err(Error::Usage)?,
        time_window: match a
            .window
            .as_deref()
            .map(prvsight::options::Chop::parse_window)
        {
            Some(Ok(prvsight::options::Chop::Window { start, end })) => Some((start, end)),
            Some(Err(e)) => return Err(Error::Usage(format!("--window: {e}"))),
            _ => None,
        },
        window: a
            .nvtx_range
            .as_deref()
            .map(WindowSpec::parse)
            .transpose()
            .map_err(Error::Usage)?,
        bins: a.bins,
        top: a.top,
    };
    let mut opts = Options::default();
    if let Some(t) = &a.trace {
        opts.families = Some(Options::parse_families(t).map_err(Error::Usage)?);
    }
    opts.align = a.align.parse().map_err(Error::Usage)?;
    opts.read_helpers =
        (a.read_helpers.parse()).map_err(|e| Error::Usage(format!("--read-helpers: {e}")))?;
    opts.read_groups =
        (a.read_groups.parse()).map_err(|e| Error::Usage(format!("--read-groups: {e}")))?;
    let exports = open_all(&a.inputs)?;
    let report = metrics::compute(&exports, &opts, &mopts)?;
    for w in &report.warnings {
        eprintln!("prvsight: warning: {w}");
    }
    let text = if a.json {
        report.to_json()?
    } else {
        metrics::text::render(&report)
    };
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .map_err(|e| Error::write("standard output", e))
}
