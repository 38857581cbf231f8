//! `prvsight timeline`: the page's timeline in a terminal: one line per row, one character per
//! column, for one view and range (src/timeline/).

use std::io::Write;
use std::path::PathBuf;

use prvsight::model::Sink;
use prvsight::nsys::Export;
use prvsight::options::Chop;
use prvsight::pipeline;
use prvsight::timeline::{text, Timeline, TimelineOptions, TimelineSink};
use prvsight::{Error, Options, Result};

#[derive(clap::Args, Clone, Debug)]
pub struct TimelineArgs {
    /// Exports written by `nsys export --type sqlite` (one per rank/process).
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// The view: states, useful, kernels, nccl, memory, cuda_api, mpi, os, openacc or
    /// nvtx:DOMAIN:LEVEL (the list is printed when the trace has no such view).
    #[arg(long, default_value = "states")]
    pub view: String,
    /// The time range shown, in the trace's time, e.g. 1.5s..2s (default: all of it).
    #[arg(long)]
    pub range: Option<String>,
    /// Columns of the drawing.
    #[arg(long, default_value_t = 100)]
    pub width: usize,
    /// Print the timeline's description and the frame's cells as JSON instead.
    #[arg(long)]
    pub json: bool,
    /// Clock alignment of several reports: session-start (default), mpi-init, none.
    #[arg(long, default_value = "session-start")]
    pub align: String,
}

/// Builds the timeline of `inputs` in one pass (no trace written).
pub fn build(inputs: &[PathBuf], opts: &Options) -> Result<Timeline> {
    let exports = inputs
        .iter()
        .map(|p| Export::open_path(p))
        .collect::<Result<Vec<_>>>()?;
    let mut sink = TimelineSink::new(TimelineOptions::default());
    {
        let mut sinks: [&mut dyn Sink; 1] = [&mut sink];
        pipeline::run(&exports, opts, &mut sinks, &mut |_| true)?;
    }
    sink.into_timeline()
        .ok_or_else(|| Error::Usage("internal error: the timeline was not built".into()))
}

pub fn run(a: &TimelineArgs) -> Result<()> {
    let opts = Options {
        align: a.align.parse().map_err(Error::Usage)?,
        ..Options::default()
    };
    let t = build(&a.inputs, &opts)?;
    let Some(view) = t.view(&a.view) else {
        let ids: Vec<String> = t.views.iter().map(|v| v.id()).collect();
        return Err(Error::Usage(format!(
            "this trace has no view {:?}; it has: {}",
            a.view,
            ids.join(", ")
        )));
    };
    let (start, end) = match a.range.as_deref().map(Chop::parse_window) {
        None => (0, t.end.max(1)),
        Some(Ok(Chop::Window { start, end })) => (start, end.min(t.end.max(1))),
        Some(Ok(_)) => unreachable!("parse_window gives a window"),
        Some(Err(e)) => return Err(Error::Usage(format!("--range: {e}"))),
    };
    if end <= start {
        return Err(Error::Usage(format!(
            "--range: the trace ends at {} ns, before the range starts",
            t.end
        )));
    }
    let out = if a.json {
        let info = t.view_info(view);
        let slots: Vec<Vec<u32>> = info.rows.iter().map(|&r| vec![r]).collect();
        let frame = t.frame(view, start, end, a.width, &slots)?;
        let json = serde_json::json!({ "timeline": t.info(), "view": a.view, "frame": frame });
        serde_json::to_string_pretty(&json)
            .map_err(|e| Error::Usage(format!("internal error: {e}")))?
            + "\n"
    } else {
        text::render(&t, view, start, end, a.width)?
    };
    std::io::stdout()
        .write_all(out.as_bytes())
        .map_err(|e| Error::write("standard output", e))
}
