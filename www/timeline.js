// The timeline: Paraver's views of the converted trace, zoomable, drawn on a canvas. The worker
// keeps the timeline the conversion built (src/timeline/) and answers each frame with one RGBA
// pixel per cell; this module only lays out rows, draws and handles the pointer and keys.

import { fmtFrac, fmtTime } from './svg.js';
import { h } from './ui.js';
import { foldedLines, pickTick, tickLabel } from './timeline-layout.js';

const NAME_W = 240;
const AXIS_H = 28;
const ROW_H = 18;
const HEADER_H = 18;
const MIN_ROW_H = 4;
const MAX_PLOT_H = 560;
const READABLE_H = 12;
const MAX_CANVAS_H = 2400;
const MINIMAP_H = 34;
/** The shortest visible range (ns): a few pixels per nanosecond is as deep as records go. */
const MIN_SPAN = 50;
// A saved picture's legend: columns of this width, lines of this height.
const LEGEND_COL_W = 330;
const LEGEND_ROW_H = 18;
const FONT = '13px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';

/** A colour square (its colour set through the CSSOM: the page's CSP refuses style attributes). */
function swatch(colour) {
  const el = h('span', { class: 'swatch' });
  el.style.backgroundColor = colour;
  return el;
}

export class TimelineView {
  /**
   * @param {HTMLElement} root the `[data-testid="timeline"]` container (see index.html)
   * @param {object} converter bridge.js Converter (timelineFrame, timelineAt, timelineRange)
   */
  constructor(root, converter) {
    this.root = root;
    this.converter = converter;
    this.canvas = root.querySelector('#tl-canvas');
    this.minimap = root.querySelector('#tl-minimap');
    this.tooltip = root.querySelector('#tl-tooltip');
    this.info = null;
    this.view = null;
    this.start = 0;
    this.end = 1;
    this.lines = [];
    this.expanded = new Map();
    this.selection = null;
    this.frame = null;
    this.inFlight = false;
    this.pending = false;
    this.drag = null;
    this.pointers = new Map();
    this.hoverAt = null;
    this.hoverBusy = false;
    this.lastFrameMs = null;
    this.bind();
  }

  /** A new conversion's timeline: whole run, first view, groups folded if they do not fit. */
  show(info) {
    this.shownAt = performance.now();
    delete this.root.dataset.firstFrameMs;
    this.info = info;
    this.selection = null;
    document.getElementById('tl-selection').hidden = true;
    this.expanded.clear();
    this.start = 0;
    this.end = Math.max(1, info.end_ns);
    const select = document.getElementById('tl-view');
    select.replaceChildren(...info.views.map((v) => new Option(v.title, v.id)));
    this.root.closest('section').hidden = false;
    this.setView(info.views.length ? info.views[0].id : null);
    this.setRange(0, this.end);
  }

  hide() {
    this.info = null;
    this.root.closest('section').hidden = true;
  }

  get viewInfo() {
    return this.info && this.info.views.find((v) => v.id === this.view);
  }

  setView(id) {
    this.view = id;
    document.getElementById('tl-view').value = id || '';
    this.relayout();
    this.renderLegend();
    this.requestMinimap();
  }

  /** Lines for the current view and fold state; folds every process when they do not fit. */
  relayout() {
    const v = this.viewInfo;
    if (!v) {
      this.lines = [];
      this.requestFrame();
      return;
    }
    this.lines = foldedLines(this.info.rows, v.rows, this.expanded);
    this.layout = this.heights();
    this.requestFrame();
  }

  /** Each line's y and height: rows shrink to stay readable (READABLE_H) in MAX_PLOT_H, the plot
   * scrolls past it, and rows shrink further (to MIN_ROW_H) before it grows past MAX_CANVAS_H. */
  heights() {
    const bars = this.lines.filter((l) => l.slot).length;
    const headers = (this.lines.length - bars) * HEADER_H;
    let rowH = ROW_H;
    if (bars && bars * rowH + headers > MAX_PLOT_H) rowH = Math.max(READABLE_H, Math.floor((MAX_PLOT_H - headers) / bars));
    if (bars && bars * rowH + headers > MAX_CANVAS_H) rowH = Math.max(MIN_ROW_H, Math.floor((MAX_CANVAS_H - headers) / bars));
    let y = AXIS_H;
    const placed = this.lines.map((l) => {
      const hgt = l.slot ? rowH : HEADER_H;
      const p = { line: l, y, h: hgt };
      y += hgt;
      return p;
    });
    return { placed, height: y + 2, rowH };
  }

  plotWidth() {
    const w = this.root.clientWidth || 1000;
    return Math.max(200, w - NAME_W);
  }

  /** Range [start, end) shown, kept inside the run and at least MIN_SPAN wide. */
  setRange(start, end) {
    const total = Math.max(1, this.info ? this.info.end_ns : 1);
    let span = Math.min(total, Math.max(MIN_SPAN, end - start));
    let s = Math.round(Math.min(Math.max(0, start), total - span));
    span = Math.round(span);
    this.start = s;
    this.end = Math.min(total, s + span);
    this.root.dataset.range = `${this.start}-${this.end}`;
    document.getElementById('tl-range-text').textContent = `Showing ${fmtTime(this.start)} to ${fmtTime(this.end)} (${fmtTime(this.end - this.start)} of ${fmtTime(total)})`;
    this.requestFrame();
    this.drawMinimapWindow();
  }

  zoomTo(start, end) {
    const pad = (end - start) * 0.03;
    this.setRange(start - pad, end + pad);
    this.root.scrollIntoView({ block: 'nearest' });
  }

  zoomAt(t, factor) {
    const span = (this.end - this.start) * factor;
    const frac = (t - this.start) / Math.max(1, this.end - this.start);
    this.setRange(t - frac * span, t - frac * span + span);
  }

  pan(fraction) {
    const d = (this.end - this.start) * fraction;
    this.setRange(this.start + d, this.end + d);
  }

  /** One frame in flight at a time; the last request wins. */
  requestFrame() {
    if (!this.info) return;
    if (this.inFlight) {
      this.pending = true;
      return;
    }
    this.inFlight = true;
    this.pending = false;
    const started = performance.now();
    const view = this.view;
    const [start, end] = [this.start, this.end];
    const width = Math.min(4096, Math.round(this.plotWidth() * (globalThis.devicePixelRatio || 1)));
    const bars = this.layout ? this.layout.placed.filter((p) => p.line.slot) : [];
    const slots = bars.map((p) => p.line.rows);
    const done = (frame) => {
      this.inFlight = false;
      if (frame) {
        this.frame = { frame, view, start, end, width, bars };
        this.draw();
        this.lastFrameMs = performance.now() - started;
        this.root.dataset.frameMs = this.lastFrameMs.toFixed(1);
        // From the results shown to the first picture (scripts/bench/timeline.mjs reads it).
        if (!this.root.dataset.firstFrameMs) this.root.dataset.firstFrameMs = (performance.now() - this.shownAt).toFixed(1);
      }
      if (this.pending) this.requestFrame();
    };
    if (!view || !slots.length) {
      done({ rgba: new Uint8ClampedArray(0), values: new Uint32Array(0), busy: new Uint8Array(0), from_spans: false });
      return;
    }
    this.converter.timelineFrame(view, start, end, width, slots).then(done, (e) => {
      this.inFlight = false;
      this.showNote(`The timeline could not be drawn: ${e.message || e}`);
    });
  }

  showNote(text) {
    document.getElementById('tl-note').textContent = text;
  }

  /** Draws names, axis, bars, selection and the hovered line. */
  draw() {
    const f = this.frame;
    if (!f || !this.layout) return;
    const dpr = globalThis.devicePixelRatio || 1;
    const cssW = NAME_W + this.plotWidth();
    const cssH = this.layout.height;
    const c = this.canvas;
    if (c.width !== Math.round(cssW * dpr) || c.height !== Math.round(cssH * dpr)) {
      c.width = Math.round(cssW * dpr);
      c.height = Math.round(cssH * dpr);
      c.style.width = `${cssW}px`;
      c.style.height = `${cssH}px`;
    }
    const g = c.getContext('2d');
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, cssW, cssH);
    g.fillStyle = '#ffffff';
    g.fillRect(0, 0, cssW, cssH);
    this.drawBars(g, f, dpr);
    this.drawNames(g);
    this.drawAxis(g, f);
    this.drawSelection(g);
    this.root.dataset.rows = String(f.bars.length);
    this.root.dataset.drawnRange = `${f.start}-${f.end}`;
    const spans = f.frame.from_spans ? 'each record drawn as it is' : 'each pixel shows what covered most of its time';
    const kept = this.info.spans_shorter_not_kept_ns > 0 && f.frame.from_spans
      ? ` Records shorter than ${fmtTime(this.info.spans_shorter_not_kept_ns)} show as summaries at this zoom; keep only this range to see each.`
      : '';
    this.showNote(`${f.bars.length} rows; ${spans}.${kept}`);
    if (document.getElementById('tl-text').open) this.renderText();
  }

  drawBars(g, f, dpr) {
    const { frame, width, bars } = f;
    if (!bars.length || !frame.rgba.length) return;
    const img = new ImageData(frame.rgba, width, bars.length);
    const off = this.offscreen && this.offscreen.width === width && this.offscreen.height === bars.length
      ? this.offscreen
      : (this.offscreen = Object.assign(document.createElement('canvas'), { width, height: bars.length }));
    off.getContext('2d').putImageData(img, 0, 0);
    g.imageSmoothingEnabled = false;
    const plotW = this.plotWidth();
    bars.forEach((p, i) => {
      const gap = p.h >= 8 ? 2 : p.h >= 5 ? 1 : 0;
      g.fillStyle = i % 2 ? '#f7f8fa' : '#fdfdfe';
      g.fillRect(NAME_W, p.y, plotW, p.h);
      g.drawImage(off, 0, i, width, 1, NAME_W, p.y + gap / 2, plotW, p.h - gap);
    });
    void dpr;
  }

  drawNames(g) {
    const { placed, rowH } = this.layout;
    g.fillStyle = '#f4f6f8';
    g.fillRect(0, 0, NAME_W, this.layout.height);
    g.font = FONT;
    g.textBaseline = 'middle';
    for (const p of placed) {
      const l = p.line;
      if (!l.slot) {
        g.fillStyle = '#e9edf1';
        g.fillRect(0, p.y, NAME_W + this.plotWidth(), p.h);
      }
      if (p.h < 11) continue;
      const x = 8 + l.depth * 14;
      g.fillStyle = '#1a1a1a';
      let label = l.label;
      if (l.group) label = `${l.expanded ? '▾' : '▸'} ${label}`;
      const max = NAME_W - x - 6;
      while (label.length > 3 && g.measureText(label).width > max) label = `${label.slice(0, -2)}…`;
      g.fillText(label, x, p.y + p.h / 2);
      p.drawn = label;
    }
    if (rowH < 11) {
      g.fillStyle = '#4a4a4a';
      g.fillText(`${placed.filter((p) => p.line.slot).length} rows, ${rowH} px each`, 8, AXIS_H / 2);
    }
    g.strokeStyle = '#c9cfd6';
    g.beginPath();
    g.moveTo(NAME_W + 0.5, 0);
    g.lineTo(NAME_W + 0.5, this.layout.height);
    g.stroke();
  }

  drawAxis(g, f) {
    const plotW = this.plotWidth();
    g.fillStyle = '#ffffff';
    g.fillRect(NAME_W, 0, plotW, AXIS_H);
    const step = pickTick(f.end - f.start, plotW / 120);
    const first = Math.ceil(f.start / step) * step;
    g.font = FONT;
    g.textBaseline = 'middle';
    g.fillStyle = '#1a1a1a';
    g.strokeStyle = '#c9cfd6';
    for (let t = first; t <= f.end; t += step) {
      const x = NAME_W + ((t - f.start) / (f.end - f.start)) * plotW;
      g.beginPath();
      g.moveTo(Math.round(x) + 0.5, AXIS_H - 7);
      g.lineTo(Math.round(x) + 0.5, this.layout.height);
      g.globalAlpha = 0.35;
      g.stroke();
      g.globalAlpha = 1;
      const text = tickLabel(t, step, this.info.end_ns);
      const w = g.measureText(text).width;
      if (x + w / 2 < NAME_W + plotW && x - w / 2 > NAME_W) g.fillText(text, x - w / 2, AXIS_H / 2 - 2);
    }
    g.beginPath();
    g.moveTo(NAME_W, AXIS_H - 0.5);
    g.lineTo(NAME_W + plotW, AXIS_H - 0.5);
    g.globalAlpha = 1;
    g.stroke();
  }

  drawSelection(g) {
    const sel = this.selection;
    if (!sel) return;
    const x0 = this.xOf(Math.max(sel.start, this.start));
    const x1 = this.xOf(Math.min(sel.end, this.end));
    if (x1 <= x0) return;
    g.fillStyle = 'rgba(0, 96, 168, 0.14)';
    g.fillRect(x0, 0, x1 - x0, this.layout.height);
    g.strokeStyle = '#0060a8';
    g.lineWidth = 1.5;
    g.strokeRect(x0 + 0.5, 0.5, x1 - x0 - 1, this.layout.height - 1);
    g.lineWidth = 1;
  }

  xOf(t) {
    return NAME_W + ((t - this.start) / Math.max(1, this.end - this.start)) * this.plotWidth();
  }

  timeAt(x) {
    return this.start + ((x - NAME_W) / this.plotWidth()) * (this.end - this.start);
  }

  lineAt(y) {
    return this.layout && this.layout.placed.find((p) => y >= p.y && y < p.y + p.h);
  }

  requestMinimap() {
    const v = this.viewInfo;
    const mm = this.minimap;
    const cssW = NAME_W + this.plotWidth();
    mm.width = Math.round(cssW);
    mm.height = MINIMAP_H;
    mm.style.width = `${cssW}px`;
    this.minimapImage = null;
    if (!v || !v.rows.length) {
      this.drawMinimapWindow();
      return;
    }
    const width = Math.round(this.plotWidth());
    this.converter.timelineFrame(this.view, 0, Math.max(1, this.info.end_ns), width, [v.rows]).then((f) => {
      const off = Object.assign(document.createElement('canvas'), { width, height: 1 });
      off.getContext('2d').putImageData(new ImageData(f.rgba, width, 1), 0, 0);
      this.minimapImage = off;
      this.drawMinimapWindow();
    }, () => {});
    this.drawMinimapWindow();
  }

  drawMinimapWindow() {
    const mm = this.minimap;
    if (!this.info || !mm.width) return;
    const g = mm.getContext('2d');
    const plotW = this.plotWidth();
    g.clearRect(0, 0, mm.width, mm.height);
    g.fillStyle = '#f4f6f8';
    g.fillRect(0, 0, mm.width, mm.height);
    g.font = FONT;
    g.textBaseline = 'middle';
    g.fillStyle = '#1a1a1a';
    g.fillText('Whole run', 8, MINIMAP_H / 2);
    if (this.minimapImage) {
      g.imageSmoothingEnabled = false;
      g.drawImage(this.minimapImage, 0, 0, this.minimapImage.width, 1, NAME_W, 6, plotW, MINIMAP_H - 12);
    }
    const total = Math.max(1, this.info.end_ns);
    const x0 = NAME_W + (this.start / total) * plotW;
    const x1 = NAME_W + (this.end / total) * plotW;
    g.fillStyle = 'rgba(0, 96, 168, 0.18)';
    g.fillRect(x0, 0, Math.max(2, x1 - x0), MINIMAP_H);
    g.strokeStyle = '#0060a8';
    g.lineWidth = 2;
    g.strokeRect(x0 + 1, 1, Math.max(2, x1 - x0 - 2), MINIMAP_H - 2);
    g.lineWidth = 1;
  }

  renderLegend() {
    const v = this.viewInfo;
    const box = document.getElementById('tl-legend');
    if (!v) {
      box.replaceChildren();
      return;
    }
    const shown = v.legend.slice(0, 16);
    const items = shown.map((l) => h('li', {}, [
      swatch(l.colour),
      h('span', { class: 'tl-legend-label', title: l.label, text: l.label }),
      h('span', { class: 'help tl-legend-time', text: fmtTime(l.ns) }),
    ]));
    const more = v.values - shown.length;
    if (more > 0) items.push(h('li', { class: 'help', text: `and ${more} more (hover a bar to name it)` }));
    items.push(h('li', { class: 'help' }, [h('span', { class: 'swatch blank' }), h('span', { text: `blank: ${v.blank}` })]));
    box.replaceChildren(...items);
  }

  /** The text alternative: the visible range, and per line what covers most of it. */
  renderText() {
    const f = this.frame;
    const v = this.viewInfo;
    const body = document.querySelector('#tl-text tbody');
    if (!f || !v || !body) return;
    const labels = new Map(v.legend.map((l) => [l.value, l.label]));
    document.getElementById('tl-text-range').textContent = `${v.title}, from ${fmtTime(f.start)} to ${fmtTime(f.end)}.`;
    const rows = f.bars.slice(0, 200).map((p, i) => {
      const counts = new Map();
      let busy = 0;
      for (let x = 0; x < f.width; x++) {
        const k = i * f.width + x;
        if (!f.frame.busy[k]) continue;
        busy += f.frame.busy[k];
        counts.set(f.frame.values[k], (counts.get(f.frame.values[k]) || 0) + f.frame.busy[k]);
      }
      let top = null;
      for (const [val, n] of counts) if (!top || n > top[1]) top = [val, n];
      const what = top ? labels.get(top[0]) || `value ${top[0]}` : 'nothing';
      return h('tr', {}, [
        h('th', { scope: 'row', text: p.line.title }),
        h('td', { text: what }),
        h('td', { text: fmtFrac(busy / (255 * f.width)) }),
      ]);
    });
    body.replaceChildren(...rows);
  }

  /** Shows what is under the pointer (one request in flight; the last position wins). */
  hover(x, y) {
    const p = this.lineAt(y);
    if (!p || x < NAME_W || !p.line.slot) {
      this.tooltip.hidden = true;
      return;
    }
    const t = this.timeAt(x);
    this.hoverAt = { x, y, t, p };
    if (p.line.rows.length > 1) {
      this.showTooltip(x, y, [h('strong', { text: p.line.title }), h('div', { text: `${p.line.rows.length} rows folded into this line: click its name to unfold.` })]);
      return;
    }
    if (this.hoverBusy) return;
    this.hoverBusy = true;
    const tol = Math.ceil(((this.end - this.start) / this.plotWidth()) * 2);
    this.converter.timelineAt(this.view, p.line.rows[0], Math.round(t), tol).then((r) => {
      this.hoverBusy = false;
      const at = this.hoverAt;
      if (!at || at.p !== p) return this.hover(at ? at.x : x, at ? at.y : y);
      if (!r) {
        this.tooltip.hidden = true;
        return;
      }
      const parts = [
        h('div', { class: 'tl-tip-head' }, [swatch(r.colour), h('strong', { text: r.label })]),
        h('div', { class: 'help', text: p.line.title }),
        h('div', { text: `${fmtTime(r.start_ns)} → ${fmtTime(r.end_ns)} · ${r.exact ? 'lasted' : 'bin of'} ${fmtTime(r.end_ns - r.start_ns)}` }),
        ...r.details.map(([k, val]) => h('div', {}, [h('span', { class: 'help', text: `${k}: ` }), h('span', { class: 'tl-detail', text: val })])),
      ];
      this.showTooltip(at.x, at.y, parts);
    }, () => {
      this.hoverBusy = false;
    });
  }

  showTooltip(x, y, children) {
    const tip = this.tooltip;
    tip.replaceChildren(...children);
    tip.hidden = false;
    // (x, y) are on the canvas, which scrolls inside the timeline under the minimap.
    const box = this.root.getBoundingClientRect();
    const canvas = this.canvas.getBoundingClientRect();
    const w = tip.offsetWidth;
    const left = x + 16 + w > box.width ? Math.max(0, x - 16 - w) : x + 16;
    tip.style.left = `${left}px`;
    tip.style.top = `${canvas.top - box.top + y + 18}px`;
  }

  /** Selects [start, end) and shows its factors (from the conversion's per-GPU bins). */
  select(start, end) {
    this.selection = { start: Math.round(Math.min(start, end)), end: Math.round(Math.max(start, end)) };
    this.draw();
    const panel = document.getElementById('tl-selection');
    panel.hidden = false;
    const { start: a, end: b } = this.selection;
    document.getElementById('tl-sel-range').textContent = `${fmtTime(a)} to ${fmtTime(b)} (${fmtTime(b - a)})`;
    const out = document.getElementById('tl-sel-factors');
    out.textContent = 'Measuring…';
    this.converter.timelineRange(a, b).then((r) => {
      const e = r.efficiency;
      if (!e.gpus) {
        out.textContent = 'No GPU ran in this trace: no device factors.';
        return;
      }
      out.replaceChildren(
        ...[['Parallel efficiency', e.parallel_efficiency], ['Load balance', e.load_balance], ['Communication efficiency', e.communication_efficiency], ['Orchestration efficiency', e.orchestration_efficiency]].map(([k, val]) =>
          h('span', { class: 'tl-factor', 'data-factor': k }, [h('span', { class: 'help', text: `${k} ` }), h('strong', { text: fmtFrac(val) })])),
        h('span', { class: 'help', text: ` over ${e.gpus} GPU${e.gpus > 1 ? 's' : ''}; exact to ${fmtTime(r.resolution_ns)} at each end.` }),
      );
    }, (e) => {
      out.textContent = `Not measured: ${e.message || e}`;
    });
  }

  clearSelection() {
    this.selection = null;
    document.getElementById('tl-selection').hidden = true;
    this.draw();
  }

  bind() {
    const c = this.canvas;
    const local = (e) => {
      const r = c.getBoundingClientRect();
      return { x: e.clientX - r.left, y: e.clientY - r.top };
    };
    c.addEventListener('wheel', (e) => {
      if (!this.info) return;
      const { x } = local(e);
      if (x < NAME_W) return;
      e.preventDefault();
      const unit = e.deltaMode === 1 ? 16 : e.deltaMode === 2 ? 400 : 1;
      if (Math.abs(e.deltaX) > Math.abs(e.deltaY) || e.shiftKey) {
        this.pan(((e.deltaX || e.deltaY) * unit) / this.plotWidth());
      } else {
        this.zoomAt(this.timeAt(x), Math.exp(e.deltaY * unit * 0.002));
      }
    }, { passive: false });
    c.addEventListener('pointerdown', (e) => {
      if (!this.info) return;
      const { x, y } = local(e);
      this.pointers.set(e.pointerId, { x, y });
      c.setPointerCapture(e.pointerId);
      if (x < NAME_W) {
        const p = this.lineAt(y);
        if (p && p.line.group) {
          this.expanded.set(p.line.key, !p.line.expanded);
          this.relayout();
        }
        return;
      }
      if (this.pointers.size === 2) {
        const [a, b] = [...this.pointers.values()];
        this.drag = { kind: 'pinch', dist: Math.abs(a.x - b.x) || 1, start: this.start, end: this.end, mid: this.timeAt((a.x + b.x) / 2) };
        return;
      }
      const selecting = e.shiftKey || y < AXIS_H;
      this.drag = selecting
        ? { kind: 'select', from: this.timeAt(x), x0: x }
        : { kind: 'pan', x0: x, start: this.start, end: this.end, moved: false };
    });
    c.addEventListener('pointermove', (e) => {
      const { x, y } = local(e);
      if (this.pointers.has(e.pointerId)) this.pointers.set(e.pointerId, { x, y });
      const d = this.drag;
      if (!d) return this.hover(x, y);
      this.tooltip.hidden = true;
      if (d.kind === 'pan') {
        const dt = ((x - d.x0) / this.plotWidth()) * (d.end - d.start);
        if (Math.abs(x - d.x0) > 2) d.moved = true;
        this.setRange(d.start - dt, d.end - dt);
      } else if (d.kind === 'select') {
        this.selection = { start: Math.min(d.from, this.timeAt(x)), end: Math.max(d.from, this.timeAt(x)) };
        this.draw();
      } else if (d.kind === 'pinch' && this.pointers.size === 2) {
        const [a, b] = [...this.pointers.values()];
        const factor = d.dist / (Math.abs(a.x - b.x) || 1);
        const span = (d.end - d.start) * factor;
        const frac = (d.mid - d.start) / (d.end - d.start);
        this.setRange(d.mid - frac * span, d.mid - frac * span + span);
      }
    });
    const up = (e) => {
      this.pointers.delete(e.pointerId);
      const d = this.drag;
      this.drag = null;
      if (!d) return;
      const { x } = local(e);
      if (d.kind === 'select') {
        if (Math.abs(x - d.x0) >= 3) this.select(d.from, this.timeAt(x));
        else this.clearSelection();
      }
    };
    c.addEventListener('pointerup', up);
    c.addEventListener('pointercancel', up);
    c.addEventListener('pointerleave', () => {
      if (!this.drag) this.tooltip.hidden = true;
      this.hoverAt = null;
    });
    c.addEventListener('dblclick', (e) => {
      const { x } = local(e);
      if (x >= NAME_W) this.zoomAt(this.timeAt(x), 0.5);
    });
    this.root.addEventListener('keydown', (e) => {
      if (!this.info || e.target.closest('select, button, a, input')) return;
      const mid = (this.start + this.end) / 2;
      const keys = {
        '+': () => this.zoomAt(mid, 1 / 1.5),
        '=': () => this.zoomAt(mid, 1 / 1.5),
        '-': () => this.zoomAt(mid, 1.5),
        '_': () => this.zoomAt(mid, 1.5),
        ArrowLeft: () => this.pan(-0.1),
        ArrowRight: () => this.pan(0.1),
        Home: () => this.setRange(0, this.info.end_ns),
        Escape: () => this.clearSelection(),
      };
      const k = keys[e.key];
      if (k) {
        e.preventDefault();
        k();
      }
    });
    const mm = this.minimap;
    const jump = (e) => {
      if (!this.info) return;
      const x = e.clientX - mm.getBoundingClientRect().left;
      if (x < NAME_W) return;
      const t = ((x - NAME_W) / this.plotWidth()) * this.info.end_ns;
      const span = this.end - this.start;
      this.setRange(t - span / 2, t + span / 2);
    };
    mm.addEventListener('pointerdown', (e) => {
      mm.setPointerCapture(e.pointerId);
      this.minimapDrag = true;
      jump(e);
    });
    mm.addEventListener('pointermove', (e) => this.minimapDrag && jump(e));
    mm.addEventListener('pointerup', () => {
      this.minimapDrag = false;
    });
    document.getElementById('tl-text').addEventListener('toggle', () => this.renderText());
    const resize = new ResizeObserver(() => {
      if (!this.info) return;
      this.relayout();
      this.requestMinimap();
    });
    resize.observe(this.root);
  }

  /** A file name for the drawing: the view and the range. */
  fileStem() {
    const v = (this.view || 'timeline').replace(/[^a-z0-9_]+/gi, '-');
    return `timeline-${v}-${this.start}-${this.end}ns`;
  }

  /** The drawing as PNG (what is on screen: names, axis and rows). */
  /** What a saved picture holds under its bars: its title, and the legend in columns. */
  pictureLegend(width) {
    const v = this.viewInfo;
    const f = this.frame;
    const entries = v.legend.slice(0, 16).map((l) => ({ colour: l.colour, label: `${l.label} (${fmtTime(l.ns)})` }));
    if (v.values > entries.length) entries.push({ colour: null, label: `and ${v.values - entries.length} more` });
    entries.push({ colour: '#ffffff', label: `blank: ${v.blank}` });
    const cols = Math.max(1, Math.floor((width - 16) / LEGEND_COL_W));
    const title = `${v.title}, ${fmtTime(f.start)} to ${fmtTime(f.end)}`;
    return { title, entries, cols, height: 34 + Math.ceil(entries.length / cols) * LEGEND_ROW_H + 8 };
  }

  png() {
    const W = NAME_W + this.plotWidth();
    const dpr = this.canvas.width / W;
    const top = this.canvas.height / dpr;
    const legend = this.pictureLegend(W);
    const out = Object.assign(document.createElement('canvas'), { width: this.canvas.width, height: Math.round((top + legend.height) * dpr) });
    const g = out.getContext('2d');
    g.fillStyle = '#ffffff';
    g.fillRect(0, 0, out.width, out.height);
    g.drawImage(this.canvas, 0, 0);
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.font = FONT;
    g.textBaseline = 'middle';
    g.fillStyle = '#1a1a1a';
    g.fillText(legend.title, 8, top + 17);
    legend.entries.forEach((e, i) => {
      const x = 8 + (i % legend.cols) * LEGEND_COL_W;
      const y = top + 34 + Math.floor(i / legend.cols) * LEGEND_ROW_H;
      if (e.colour) {
        g.fillStyle = e.colour;
        g.fillRect(x, y + 3, 12, 12);
        g.strokeStyle = '#8a8f96';
        g.strokeRect(x + 0.5, y + 3.5, 11, 11);
      }
      let label = e.label;
      while (label.length > 3 && g.measureText(label).width > LEGEND_COL_W - 28) label = `${label.slice(0, -2)}…`;
      g.fillStyle = '#1a1a1a';
      g.fillText(label, x + 18, y + 9);
    });
    return new Promise((resolve) => out.toBlob(resolve, 'image/png'));
  }

  /** The drawing as SVG: each run of equal pixels of a line one rectangle, names and ticks as text. */
  svg() {
    const f = this.frame;
    const plotW = this.plotWidth();
    const W = NAME_W + plotW;
    const H = this.layout.height;
    const legend = this.pictureLegend(W);
    const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);
    const total = H + legend.height;
    const out = [`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${total}" viewBox="0 0 ${W} ${total}" font-family="system-ui, sans-serif" font-size="13">`,
      `<title>${esc(legend.title)}</title>`,
      `<rect width="${W}" height="${total}" fill="#fff"/><rect width="${NAME_W}" height="${H}" fill="#f4f6f8"/>`];
    const px = plotW / f.width;
    f.bars.forEach((p, i) => {
      const rgba = f.frame.rgba;
      let x = 0;
      while (x < f.width) {
        const k = (i * f.width + x) * 4;
        let e = x + 1;
        while (e < f.width && rgba[(i * f.width + e) * 4] === rgba[k] && rgba[(i * f.width + e) * 4 + 1] === rgba[k + 1] && rgba[(i * f.width + e) * 4 + 2] === rgba[k + 2] && rgba[(i * f.width + e) * 4 + 3] === rgba[k + 3]) e++;
        if (rgba[k + 3]) out.push(`<rect x="${(NAME_W + x * px).toFixed(2)}" y="${p.y}" width="${((e - x) * px).toFixed(2)}" height="${Math.max(1, p.h - 2)}" fill="rgb(${rgba[k]},${rgba[k + 1]},${rgba[k + 2]})" fill-opacity="${(rgba[k + 3] / 255).toFixed(2)}"/>`);
        x = e;
      }
    });
    for (const p of this.layout.placed) {
      if (p.drawn !== undefined) out.push(`<text x="${8 + p.line.depth * 14}" y="${p.y + p.h / 2 + 4}">${esc(p.drawn)}<title>${esc(p.line.title)}</title></text>`);
    }
    const step = pickTick(f.end - f.start, plotW / 120);
    for (let t = Math.ceil(f.start / step) * step; t <= f.end; t += step) {
      const x = NAME_W + ((t - f.start) / (f.end - f.start)) * plotW;
      out.push(`<line x1="${x.toFixed(1)}" x2="${x.toFixed(1)}" y1="${AXIS_H - 7}" y2="${H}" stroke="#c9cfd6"/><text x="${x.toFixed(1)}" y="16" text-anchor="middle">${esc(tickLabel(t, step, this.info.end_ns))}</text>`);
    }
    out.push(`<text x="8" y="${H + 21}">${esc(legend.title)}</text>`);
    legend.entries.forEach((e, i) => {
      const x = 8 + (i % legend.cols) * LEGEND_COL_W;
      const y = H + 34 + Math.floor(i / legend.cols) * LEGEND_ROW_H;
      if (e.colour) out.push(`<rect x="${x + 0.5}" y="${y + 3.5}" width="11" height="11" fill="${esc(e.colour)}" stroke="#8a8f96"/>`);
      out.push(`<text x="${x + 18}" y="${y + 13}">${esc(e.label)}</text>`);
    });
    out.push('</svg>');
    return new Blob([out.join('\n')], { type: 'image/svg+xml' });
  }
}
