//! The timeline sink: what the page's timeline draws, built in the conversion's one pass with
//! bounded memory, so that zooming and panning never convert again.
//!
//! Per (view, row) it keeps level-of-detail bins ([`bins`]: the value covering most of each bin,
//! at resolutions halving down from the finest grid); the spans themselves while a budget holds
//! them ([`kept`]: all of them for most exports, the longer ones past it), for the deepest zoom
//! and the hover; and per GPU the useful and communication time per bin ([`factors`]), for the
//! efficiency factors of any selected range. Values are those the .prv writes, so labels and
//! colours match Paraver's.

mod bins;
mod factors;
mod frame;
mod kept;
mod rows;
mod span;
pub mod text;
mod views;

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::metrics::NcclAs;
use crate::model::{Names, Ns, OutputCut, Record, Sink, TraceInfo};
use crate::FastMap;

pub use bins::{Bin, Grid, Track};
pub use factors::RangeFactors;
pub use frame::{Cell, Frame, Hover};
pub use kept::Kept;
pub use rows::Row;
pub use span::{LaunchConfig, Span, What};
pub use views::{code_colour, LegendEntry, View, ViewInfo};

/// How much the timeline may hold; the defaults keep it under 256 MB whatever the export.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimelineOptions {
    /// Finest bins over the whole trace (a power of two), made fewer when the bins of every
    /// (view, row) would pass `bins_budget`.
    pub bins: usize,
    pub bins_budget: usize,
    /// Bytes of spans kept one by one.
    pub spans_budget: usize,
    /// Bytes of the per-GPU bins for range factors.
    pub factors_budget: usize,
    /// How NCCL kernels count in the range factors (as in the metrics).
    pub nccl_as: NcclAs,
}

impl Default for TimelineOptions {
    fn default() -> Self {
        TimelineOptions {
            bins: 1 << 16,
            bins_budget: 96 << 20,
            spans_budget: 96 << 20,
            factors_budget: 16 << 20,
            nccl_as: NcclAs::Communication,
        }
    }
}

/// The fewest finest bins the budget may bring the grid down to.
const MIN_BINS: usize = 1 << 10;

/// Views a row is expected to have a track in (a thread: states, CUDA API, OS runtime; a stream:
/// states, useful, kernels or memory), to size the bins before the first record.
const EXPECTED_VIEWS_PER_ROW: usize = 3;

/// Builds a [`Timeline`] from the record stream.
pub struct TimelineSink {
    opts: TimelineOptions,
    window: Option<(Ns, Ns)>,
    building: Option<Building>,
    done: Option<Timeline>,
}

struct Building {
    grid: Grid,
    rows: Vec<Row>,
    row_of_thread: Vec<Option<u32>>,
    views: Vec<View>,
    view_index: FastMap<View, usize>,
    /// Per view, per row: its track in `tracks`.
    track_of: Vec<Vec<Option<u32>>>,
    tracks: Vec<Track>,
    maker: span::SpanMaker,
    kept: Kept,
    factors: factors::FactorBins,
    /// Inclusive bounds of what is drawn, in record time.
    from: Ns,
    to: Ns,
}

impl TimelineSink {
    pub fn new(opts: TimelineOptions) -> TimelineSink {
        TimelineSink {
            opts,
            window: None,
            building: None,
            done: None,
        }
    }

    /// The timeline, once the pass has finished.
    pub fn into_timeline(self) -> Option<Timeline> {
        self.done
    }
}

impl Building {
    /// Adds `value` over [start, end) to the track of (view, row), made on its first use.
    fn add(&mut self, view: View, row: u32, value: u32, span: &Span, budget: &TimelineOptions) {
        let t = self.track(view, row, budget);
        // After `track`, which may have made the grid coarser to fit a new track.
        let grid = self.grid;
        self.tracks[t].add(&grid, value, span.start, span.end);
    }

    fn track(&mut self, view: View, row: u32, budget: &TimelineOptions) -> usize {
        let v = match self.view_index.get(&view) {
            Some(&v) => v,
            None => {
                self.views.push(view);
                self.track_of.push(vec![None; self.rows.len()]);
                self.view_index.insert(view, self.views.len() - 1);
                self.views.len() - 1
            }
        };
        let t = match self.track_of[v][row as usize] {
            Some(t) => t,
            None => {
                // Two bytes of levels for each of the finest: halve every track until one more fits.
                while self.grid.count > MIN_BINS
                    && (self.tracks.len() + 1) * self.grid.count * 16 > budget.bins_budget
                {
                    self.tracks.iter_mut().for_each(Track::halve);
                    self.grid = self.grid.halved();
                }
                self.tracks.push(Track::new(&self.grid));
                let t = (self.tracks.len() - 1) as u32;
                self.track_of[v][row as usize] = Some(t);
                t
            }
        };
        t as usize
    }
}

impl Sink for TimelineSink {
    fn set_output_cut(&mut self, cut: &OutputCut) {
        self.window = cut.window;
    }

    fn begin(&mut self, trace: &TraceInfo, _names: &Names) -> Result<()> {
        let (from, to) = self.window.unwrap_or((0, trace.end_time));
        let (rows, row_of_thread) = rows::rows_of(&trace.objects);
        // Rows are known now, tracks only as records come: start from bins that fit a few views
        // per row, so that a run of many ranks does not fill full-size tracks only to halve them.
        let expected_tracks = rows.len().max(1) * EXPECTED_VIEWS_PER_ROW;
        let mut bins = self.opts.bins;
        while bins > MIN_BINS && expected_tracks * bins * 16 > self.opts.bins_budget {
            bins /= 2;
        }
        let grid = Grid::new(from, to.max(from) + 1, bins);
        self.building = Some(Building {
            grid,
            kept: Kept::new(rows.len(), self.opts.spans_budget),
            factors: factors::FactorBins::new(
                trace.objects.devices.len(),
                grid,
                self.opts.nccl_as,
                self.opts.factors_budget,
            ),
            rows,
            row_of_thread,
            views: Vec::new(),
            view_index: FastMap::default(),
            track_of: Vec::new(),
            tracks: Vec::new(),
            maker: span::SpanMaker::default(),
            from,
            to,
        });
        Ok(())
    }

    fn record(&mut self, rec: &Record, names: &Names) -> Result<()> {
        let Some(b) = self.building.as_mut() else {
            return Ok(());
        };
        let (thread, span) = match rec {
            Record::Gpu(op) => {
                b.factors.gpu_op(op, names);
                (op.thread, b.maker.gpu(op))
            }
            Record::Host(call) => (call.thread, b.maker.host(call, names)),
            Record::Nvtx(r) => (r.thread, b.maker.nvtx(r)),
            _ => return Ok(()),
        };
        let Some(Some(row)) = b.row_of_thread.get(thread.0 as usize).copied() else {
            return Ok(());
        };
        if span.end < b.from || span.start > b.to {
            return Ok(());
        }
        b.kept.push(row as usize, span);
        for &view in View::fixed_for(&span.what) {
            if let Some(value) = view.value(&span.what) {
                b.add(view, row, value, &span, &self.opts);
            }
        }
        if let What::Nvtx { domain, level, .. } = span.what {
            let view = View::Nvtx { domain, level };
            if let Some(value) = view.value(&span.what) {
                b.add(view, row, value, &span, &self.opts);
            }
        }
        Ok(())
    }

    fn finish(&mut self, trace: &TraceInfo, names: &Names) -> Result<()> {
        let Some(mut b) = self.building.take() else {
            return Ok(());
        };
        let grid = b.grid;
        for t in &mut b.tracks {
            t.finish(&grid);
        }
        b.factors.finish(b.to.max(b.from) + 1);
        self.done = Some(Timeline::assemble(b, trace, names));
        Ok(())
    }
}

/// What the page (or the CLI) draws from: built once per conversion, asked per frame.
pub struct Timeline {
    pub grid: Grid,
    pub rows: Vec<Row>,
    /// Views with anything in them: the fixed ones in their order, then NVTX by domain, level.
    pub views: Vec<View>,
    track_of: Vec<Vec<Option<u32>>>,
    tracks: Vec<Track>,
    pub kept: Kept,
    factors: factors::FactorBins,
    pub configs: Vec<LaunchConfig>,
    /// Every interned name, for labels (ids start at 1: `names[id - 1]`).
    names: Names,
    domains: Vec<String>,
    /// Record time of the trace's time 0 (a window's start when only a window was converted).
    pub offset: Ns,
    /// Length of the trace drawn (ns, trace time).
    pub end: Ns,
}

/// How the timeline is described to the page.
#[derive(Clone, Debug, Serialize)]
pub struct TimelineInfo {
    pub start_ns: Ns,
    pub end_ns: Ns,
    /// Where time 0 is in the whole run's time (a window's start when only a window was kept).
    pub offset_ns: Ns,
    pub rows: Vec<Row>,
    pub views: Vec<ViewInfo>,
    /// Width of the finest bins (ns).
    pub bin_ns: Ns,
    pub bins: usize,
    pub spans_kept: usize,
    /// Spans shorter than this were summarised in bins only (0: every span was kept).
    pub spans_shorter_not_kept_ns: Ns,
    /// Memory the timeline holds (bins, spans, range factors).
    pub bytes: usize,
}

impl Timeline {
    fn assemble(b: Building, trace: &TraceInfo, names: &Names) -> Timeline {
        // Fixed views first in their order, then NVTX ones by (domain, level).
        let mut order: Vec<usize> = (0..b.views.len()).collect();
        order.sort_by_key(|&v| b.views[v]);
        let views = order.iter().map(|&v| b.views[v]).collect();
        let track_of = order.iter().map(|&v| b.track_of[v].clone()).collect();
        let mut own = Names::new();
        for i in 1..=names.len() {
            own.intern(names.get(crate::model::NameId(i as u32)));
        }
        Timeline {
            grid: b.grid,
            rows: b.rows,
            views,
            track_of,
            tracks: b.tracks,
            kept: b.kept,
            factors: b.factors,
            configs: b.maker.configs.list,
            names: own,
            domains: trace.domains.clone(),
            offset: b.from,
            end: b.to - b.from,
        }
    }

    pub fn names(&self) -> &Names {
        &self.names
    }

    pub fn view(&self, id: &str) -> Option<usize> {
        self.views.iter().position(|v| v.id() == id)
    }

    fn track(&self, view: usize, row: usize) -> Option<&Track> {
        let t = (*self.track_of.get(view)?.get(row)?)?;
        self.tracks.get(t as usize)
    }

    pub fn bytes(&self) -> usize {
        self.tracks.iter().map(Track::bytes).sum::<usize>()
            + self.kept.bytes()
            + self.factors.bytes()
    }

    pub fn info(&self) -> TimelineInfo {
        let views = (0..self.views.len()).map(|v| self.view_info(v)).collect();
        TimelineInfo {
            start_ns: 0,
            end_ns: self.end,
            offset_ns: self.offset,
            rows: self.rows.clone(),
            views,
            bin_ns: self.grid.width,
            bins: self.grid.count,
            spans_kept: self.kept.len(),
            spans_shorter_not_kept_ns: self.kept.shortest,
            bytes: self.bytes(),
        }
    }

    /// How view `v` is described to the page: its rows, legend and what blank means.
    pub fn view_info(&self, v: usize) -> ViewInfo {
        let view = self.views[v];
        let mut totals: FastMap<u32, u128> = FastMap::default();
        let mut rows = Vec::new();
        for r in 0..self.rows.len() {
            let Some(t) = self.track(v, r) else { continue };
            rows.push(r as u32);
            for b in t.levels[0].iter().filter(|b| !b.is_empty()) {
                *totals.entry(b.value).or_default() += u128::from(b.cover);
            }
        }
        let values = totals.len();
        let mut legend: Vec<(u32, u128)> = totals.into_iter().collect();
        legend.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        legend.truncate(views::LEGEND_MAX);
        let width = u128::from(self.grid.width);
        ViewInfo {
            id: view.id(),
            title: view.title(&self.domains),
            rows,
            legend: legend
                .into_iter()
                .map(|(value, cover)| LegendEntry {
                    value,
                    label: view.label(value, &self.names),
                    colour: views::hex(view.colour(value)),
                    ns: (cover * width / u128::from(bins::FULL)) as u64,
                })
                .collect(),
            values,
            blank: view.blank(),
        }
    }

    /// The efficiency factors of [start, end) (trace time).
    pub fn range_factors(&self, start: Ns, end: Ns) -> RangeFactors {
        let mut f = self
            .factors
            .range(start + self.offset, end.max(start) + self.offset);
        f.start_ns = start;
        f.end_ns = end.max(start);
        f
    }
}
