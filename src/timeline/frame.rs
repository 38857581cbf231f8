//! A frame: for a visible range and a width in pixels, one cell per pixel of each slot (a row, or
//! rows folded into one), from the coarsest bins still finer than a pixel, or, zoomed in past the
//! finest bins, from the spans themselves. Integer arithmetic only, so native and wasm agree.

use serde::Serialize;

use super::bins::FULL;
use super::span::{Span, What};
use super::views::View;
use super::Timeline;
use crate::error::{Error, Result};
use crate::model::Ns;
use crate::paraver::events::MEMCPY_KIND_LABELS;

/// One pixel of one slot: the value drawn and how much of the pixel anything covers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Cell {
    pub value: u32,
    /// 0: nothing; 255: covered all the pixel's time.
    pub busy: u8,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Frame {
    pub start_ns: Ns,
    pub end_ns: Ns,
    pub width: usize,
    /// `slots × width` cells, slot by slot.
    pub cells: Vec<Cell>,
    /// Drawn from spans (zoomed in past the finest bins) rather than from bins.
    pub from_spans: bool,
}

/// A row's cell while a frame is made: value, its cover and the busy time, as bin fractions.
#[derive(Clone, Copy, Default)]
struct Acc {
    value: u32,
    cover: u64,
    busy: u64,
}

impl Acc {
    fn add(&mut self, value: u32, cover: u64, busy: u64) {
        if self.busy == 0 || value == self.value {
            self.cover = if self.busy == 0 {
                cover
            } else {
                self.cover + cover
            };
            self.value = value;
        } else if cover >= self.cover {
            self.value = value;
            self.cover = cover;
        }
        self.busy += busy;
    }
}

/// Pixel `p`'s time: [edge(p), edge(p + 1)).
fn edge(start: Ns, end: Ns, width: usize, p: usize) -> Ns {
    start + mul_div(end - start, p as u64, width as u64)
}

/// The pixel holding time `t` (clamped to the frame).
fn pixel(start: Ns, end: Ns, width: usize, t: Ns) -> usize {
    let t = t.clamp(start, end);
    (mul_div(t - start, width as u64, (end - start).max(1)) as usize).min(width - 1)
}

/// `x * y / d` exactly; in 64 bits when the product fits, as it nearly always does (a 128-bit
/// division is a slow library call in wasm, and a frame makes a few per span).
fn mul_div(x: u64, y: u64, d: u64) -> u64 {
    match x.checked_mul(y) {
        Some(p) => p / d,
        None => (u128::from(x) * u128::from(y) / u128::from(d)) as u64,
    }
}

/// The largest value a frame accepts for its width (a frame is for a screen).
pub const MAX_WIDTH: usize = 16_384;

impl Timeline {
    fn check(&self, view: usize, start: Ns, end: Ns, width: usize) -> Result<()> {
        if view >= self.views.len() {
            return Err(Error::Usage(format!(
                "no view {view}: the timeline has {}",
                self.views.len()
            )));
        }
        if end <= start || width == 0 || width > MAX_WIDTH {
            return Err(Error::Usage(format!(
                "a frame needs start < end and 1 to {MAX_WIDTH} pixels (got {start}..{end}, {width})"
            )));
        }
        Ok(())
    }

    /// Cells of `slots` (each a list of rows drawn as one) over [start, end) of trace time.
    pub fn frame(
        &self,
        view: usize,
        start: Ns,
        end: Ns,
        width: usize,
        slots: &[Vec<u32>],
    ) -> Result<Frame> {
        self.check(view, start, end, width)?;
        let (a, b) = (start + self.offset, end + self.offset);
        let pixel_ns = (end - start) / width as u64;
        let from_spans = pixel_ns < self.grid.width;
        let mut cells = Vec::with_capacity(slots.len() * width);
        let mut row_acc = vec![Acc::default(); width];
        let mut slot_acc = vec![(Acc::default(), 0u64); width];
        for slot in slots {
            slot_acc.fill((Acc::default(), 0));
            for &row in slot {
                let row = row as usize;
                if row >= self.rows.len() {
                    return Err(Error::Usage(format!("no row {row}")));
                }
                row_acc.fill(Acc::default());
                if from_spans {
                    self.cells_from_spans(view, row, a, b, &mut row_acc);
                } else {
                    self.cells_from_bins(view, row, a, b, pixel_ns, &mut row_acc);
                }
                for (p, acc) in row_acc.iter().enumerate() {
                    if acc.busy == 0 {
                        continue;
                    }
                    // As fractions of the pixel, so rows fold into one fairly.
                    let w = (edge(a, b, width, p + 1) - edge(a, b, width, p)).max(1);
                    let cover = acc.cover * u64::from(FULL) / w;
                    let busy = (acc.busy * u64::from(FULL) / w).min(u64::from(FULL));
                    let (s, total) = &mut slot_acc[p];
                    s.add(acc.value, cover, 0);
                    *total += busy;
                }
            }
            let n = slot.len().max(1) as u64;
            cells.extend(slot_acc.iter().map(|(s, total)| {
                let busy = total / n * 255 / u64::from(FULL);
                Cell {
                    value: s.value,
                    busy: if *total > 0 { busy.max(1) as u8 } else { 0 },
                }
            }));
        }
        Ok(Frame {
            start_ns: start,
            end_ns: end,
            width,
            cells,
            from_spans,
        })
    }

    /// Fills `acc` (ns per pixel) from the coarsest level whose bins are no wider than a pixel.
    fn cells_from_bins(
        &self,
        view: usize,
        row: usize,
        a: Ns,
        b: Ns,
        pixel_ns: Ns,
        acc: &mut [Acc],
    ) {
        let width = acc.len();
        let g = self.grid;
        if let Some(t) = self.track(view, row) {
            let mut level = 0;
            while level + 1 < t.levels.len() && g.width << (level + 1) <= pixel_ns {
                level += 1;
            }
            let bins = &t.levels[level];
            let w = g.width << level;
            for (p, cell) in acc.iter_mut().enumerate() {
                let (p0, p1) = (
                    edge(a, b, width, p),
                    edge(a, b, width, p + 1).max(edge(a, b, width, p) + 1),
                );
                if p1 <= g.origin {
                    continue;
                }
                let first = (p0.saturating_sub(g.origin) / w) as usize;
                let last = (((p1 - 1).saturating_sub(g.origin)) / w) as usize;
                let last = last.min(bins.len().saturating_sub(1));
                for (i, &bin) in bins.iter().enumerate().take(last + 1).skip(first) {
                    if bin.is_empty() {
                        continue;
                    }
                    let b0 = g.origin + i as u64 * w;
                    let inside = p1.min(b0 + w) - p0.max(b0);
                    cell.add(
                        bin.value,
                        u64::from(bin.cover) * inside / u64::from(FULL),
                        u64::from(bin.busy) * inside / u64::from(FULL),
                    );
                }
            }
        }
    }

    /// Fills `acc` (ns per pixel) from the spans kept, over the finest bins where short spans
    /// were not kept.
    fn cells_from_spans(&self, view: usize, row: usize, a: Ns, b: Ns, acc: &mut [Acc]) {
        let width = acc.len();
        if !self.kept.complete() {
            self.cells_from_bins(view, row, a, b, 0, acc);
        }
        let v = self.views[view];
        let mut from_spans = vec![Acc::default(); if self.kept.complete() { 0 } else { width }];
        for s in self.kept.overlapping(row, a, b) {
            let Some(value) = v.value(&s.what) else {
                continue;
            };
            let (s0, s1) = (s.start.max(a), s.end.max(s.start + 1).min(b));
            if s1 <= s0 {
                continue;
            }
            for p in pixel(a, b, width, s0)..=pixel(a, b, width, s1 - 1) {
                let (p0, p1) = (edge(a, b, width, p), edge(a, b, width, p + 1));
                let inside = s1.min(p1).saturating_sub(s0.max(p0)).max(1);
                let target = if self.kept.complete() {
                    &mut acc[p]
                } else {
                    &mut from_spans[p]
                };
                target.add(value, inside, inside);
            }
        }
        // Where a kept span covers a pixel, it is drawn as it is; elsewhere the bins stay.
        for (p, s) in from_spans.into_iter().enumerate() {
            if s.busy > 0 {
                acc[p] = s;
            }
        }
    }

    /// RGBA pixels of a frame (one pixel per cell): the value's colour, fainter where it covers
    /// less of the pixel, transparent where nothing is.
    pub fn rgba(&self, view: usize, frame: &Frame) -> Vec<u8> {
        let v = self.views[view];
        let mut out = Vec::with_capacity(frame.cells.len() * 4);
        let mut last: Option<(u32, [u8; 3])> = None;
        for c in &frame.cells {
            if c.busy == 0 {
                out.extend_from_slice(&[0, 0, 0, 0]);
                continue;
            }
            let rgb = match last {
                Some((value, rgb)) if value == c.value => rgb,
                _ => {
                    let rgb = v.colour(c.value);
                    last = Some((c.value, rgb));
                    rgb
                }
            };
            let alpha = 80 + u32::from(c.busy) * 175 / 255;
            out.extend_from_slice(&[rgb[0], rgb[1], rgb[2], alpha as u8]);
        }
        out
    }
}

/// What the pointer is over.
#[derive(Clone, Debug, Serialize)]
pub struct Hover {
    pub row: u32,
    pub row_name: String,
    pub value: u32,
    pub label: String,
    pub colour: String,
    pub start_ns: Ns,
    pub end_ns: Ns,
    /// Label and value pairs: the kernel's full name and launch, a copy's size, an MPI peer…
    pub details: Vec<(String, String)>,
    /// False when only a bin's summary is known here (records too short to be kept one by one).
    pub exact: bool,
}

fn bytes_text(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {} ({n} B)", UNITS[u])
    }
}

impl Timeline {
    /// What is at trace time `t` on `row` in `view`: the innermost span containing it, else the
    /// nearest within `tolerance` ns, else the bin's summary.
    pub fn at(&self, view: usize, row: usize, t: Ns, tolerance: Ns) -> Result<Option<Hover>> {
        self.check(view, 0, 1, 1)?;
        if row >= self.rows.len() {
            return Err(Error::Usage(format!("no row {row}")));
        }
        let v = self.views[view];
        let at = t + self.offset;
        let mut best: Option<(&Span, u32, Ns)> = None;
        for s in self
            .kept
            .overlapping(row, at.saturating_sub(tolerance), at + tolerance + 1)
        {
            let Some(value) = v.value(&s.what) else {
                continue;
            };
            let distance = if at < s.start {
                s.start - at
            } else if at >= s.end.max(s.start + 1) {
                at - s.end.max(s.start + 1) + 1
            } else {
                0
            };
            // Containing spans: the latest start is the innermost; otherwise the nearest.
            if best.is_none_or(|(_, _, d)| distance < d || (distance == 0 && d == 0)) {
                best = Some((s, value, distance));
            }
        }
        if let Some((s, value, _)) = best {
            return Ok(Some(self.hover_of(v, row, s, value)));
        }
        Ok(self.hover_of_bin(v, view, row, at))
    }

    fn hover_of(&self, v: View, row: usize, s: &Span, value: u32) -> Hover {
        let names = &self.names;
        let name = |id: crate::model::NameId| names.get(id).to_owned();
        let mut details: Vec<(String, String)> = Vec::new();
        let mut d = |k: &str, val: String| details.push((k.to_owned(), val));
        match s.what {
            What::Kernel {
                full, config, comm, ..
            } => {
                d(if comm { "NCCL kernel" } else { "Kernel" }, name(full));
                if let Some(c) = self.configs.get(config as usize) {
                    let [gx, gy, gz] = c.grid;
                    let [bx, by, bz] = c.block;
                    d("Grid", format!("{gx} × {gy} × {gz}"));
                    d("Block", format!("{bx} × {by} × {bz}"));
                    d("Registers per thread", c.registers.to_string());
                    d(
                        "Shared memory",
                        format!(
                            "{} static + {} dynamic",
                            bytes_text(u64::from(c.shared_static)),
                            bytes_text(u64::from(c.shared_dynamic))
                        ),
                    );
                }
            }
            What::Graph { name: n } => d("CUDA graph", name(n)),
            What::Memcpy { kind, bytes } => {
                let k = MEMCPY_KIND_LABELS
                    .get(kind as usize)
                    .copied()
                    .unwrap_or("CUDA memcpy (other kind)");
                d("Copy", k.to_owned());
                d("Size", bytes_text(bytes));
                let ns = (s.end - s.start).max(1);
                d(
                    "Throughput",
                    format!("{:.2} GB/s", bytes as f64 / ns as f64),
                );
            }
            What::Memset { bytes } => d("Size", bytes_text(bytes)),
            What::Cuda { name: n, sync } => {
                d("CUDA call", name(n));
                if sync {
                    d("Waits for", "the GPU".to_owned());
                }
            }
            What::Mpi {
                name: n,
                bytes,
                peer,
                ..
            } => {
                d("MPI call", name(n));
                if bytes > 0 {
                    d("Bytes", bytes_text(bytes));
                }
                if peer >= 0 {
                    d("Peer rank", peer.to_string());
                }
            }
            What::Os { name: n, .. } => d("OS call", name(n)),
            What::Acc { name: n, .. } => d("OpenACC", name(n)),
            What::Nvtx { name: n, level, .. } => {
                d("NVTX range", name(n));
                d("Nesting level", (u32::from(level) + 1).to_string());
            }
        }
        let r = &self.rows[row];
        Hover {
            row: row as u32,
            row_name: r.name.clone(),
            value,
            label: v.label(value, names),
            colour: super::views::hex(v.colour(value)),
            start_ns: s.start.saturating_sub(self.offset),
            end_ns: s.end.saturating_sub(self.offset),
            details,
            exact: true,
        }
    }

    fn hover_of_bin(&self, v: View, view: usize, row: usize, at: Ns) -> Option<Hover> {
        let t = self.track(view, row)?;
        let g = self.grid;
        if at < g.origin || at >= g.end() {
            return None;
        }
        let i = ((at - g.origin) / g.width) as usize;
        let bin = *t.levels[0].get(i)?;
        if bin.is_empty() || self.kept.complete() {
            return None;
        }
        let b0 = g.origin + i as u64 * g.width;
        let pct = |f: u16| format!("{:.0} %", f64::from(f) * 100.0 / f64::from(FULL));
        Some(Hover {
            row: row as u32,
            row_name: self.rows[row].name.clone(),
            value: bin.value,
            label: v.label(bin.value, &self.names),
            colour: super::views::hex(v.colour(bin.value)),
            start_ns: b0 - self.offset,
            end_ns: b0 + g.width - self.offset,
            details: vec![
                ("This value covers".to_owned(), pct(bin.cover)),
                ("Anything covers".to_owned(), pct(bin.busy)),
                (
                    "Records kept one by one".to_owned(),
                    format!(
                        "those of {} or more",
                        crate::metrics::text::fmt_ns(self.kept.shortest as f64)
                    ),
                ),
            ],
            exact: false,
        })
    }
}
