// Small helpers to build SVG and format numbers; shared by the charts.

const NS = 'http://www.w3.org/2000/svg';

/** Creates an SVG element with attributes and children (strings become text nodes). */
export function s(tag, attrs = {}, children = []) {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v !== undefined && v !== null) e.setAttribute(k, String(v));
  }
  for (const c of [].concat(children)) {
    if (c === null || c === undefined || c === false) continue;
    e.append(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  }
  return e;
}

let uid = 0;

/** The root <svg> of a chart: sized by its viewBox, with a title and a description that
 * screen readers announce (role="img" + aria-labelledby). */
export function chartRoot(width, height, title, desc) {
  const id = `chart${++uid}`;
  return s(
    'svg',
    {
      xmlns: NS,
      viewBox: `0 0 ${width} ${height}`,
      width,
      height,
      role: 'img',
      'aria-labelledby': `${id}-t ${id}-d`,
      'font-family': 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
      'font-size': 15,
      class: 'chart',
    },
    [
      s('title', { id: `${id}-t` }, title),
      s('desc', { id: `${id}-d` }, desc),
      // An opaque background, so a PNG or a slide shows the chart as on the page.
      s('rect', { x: 0, y: 0, width, height, fill: '#ffffff' }),
    ],
  );
}

/** Colour-blind-safe colours (Okabe–Ito) for what the charts show. */
export const COLORS = {
  useful: '#009E73',
  communication: '#E69F00',
  idle: '#C8C8C8',
  gemm: '#0072B2',
  attention: '#56B4E9',
  other_compute: '#009E73',
  nccl: '#E69F00',
  memory: '#CC79A7',
  a: '#0072B2',
  b: '#D55E00',
  bar: '#0072B2',
  axis: '#444444',
  grid: '#e2e2e2',
  text: '#1a1a1a',
};

export const GROUP_LABELS = {
  gemm: 'GEMM',
  attention: 'Attention',
  other_compute: 'Other compute',
  nccl: 'NCCL',
  memory: 'Memory',
  idle: 'Idle',
};

/** `1.23 s`, `45.6 ms`, `789 µs`, `12 ns`. */
export function fmtTime(ns) {
  if (ns === null || ns === undefined || Number.isNaN(ns)) return 'n/a';
  const a = Math.abs(ns);
  if (a >= 1e9) return `${(ns / 1e9).toPrecision(3)} s`;
  if (a >= 1e6) return `${(ns / 1e6).toPrecision(3)} ms`;
  if (a >= 1e3) return `${(ns / 1e3).toPrecision(3)} µs`;
  return `${Math.round(ns)} ns`;
}

/** A fraction (0..1) as `84.9 %`; null → `n/a`. */
export function fmtFrac(f) {
  return f === null || f === undefined ? 'n/a' : `${(f * 100).toFixed(1)} %`;
}

export function fmtPct(p) {
  return p === null || p === undefined ? 'n/a' : `${p.toFixed(1)} %`;
}

/** Signed difference in percentage points of two fractions. */
export function fmtDeltaPts(a, b) {
  if (a === null || b === null || a === undefined || b === undefined) return 'n/a';
  const d = (b - a) * 100;
  return `${d >= 0 ? '+' : '−'}${Math.abs(d).toFixed(1)} pts`;
}

/** Shortens `text` to about `max` characters with an ellipsis. */
export function clip(text, max) {
  return text.length <= max ? text : `${text.slice(0, Math.max(1, max - 1))}…`;
}

/** About 1, 2 or 5 × 10^k ticks over [0, end]. */
export function niceTicks(end, count = 6) {
  if (!(end > 0)) return [0];
  const raw = end / count;
  const p = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * p).find((x) => x >= raw);
  const ticks = [];
  for (let t = 0; t <= end * 1.0001; t += step) ticks.push(t);
  return ticks;
}

/** A legend row of coloured squares with labels, starting at (x, y). */
export function legend(items, x, y) {
  const g = s('g', { class: 'legend' });
  let cx = x;
  for (const { color, label } of items) {
    g.append(s('rect', { x: cx, y: y - 12, width: 14, height: 14, fill: color, stroke: '#666', 'stroke-width': 0.5 }));
    g.append(s('text', { x: cx + 20, y, fill: COLORS.text }, label));
    cx += 34 + label.length * 8.5;
  }
  return g;
}

/** The chart as a standalone SVG document. */
export function svgText(svg) {
  return `<?xml version="1.0" encoding="UTF-8"?>\n${new XMLSerializer().serializeToString(svg)}\n`;
}

/** The chart rendered to PNG at `scale`× its size. */
export function svgToPng(svg, scale = 2) {
  const w = Number(svg.getAttribute('width'));
  const h = Number(svg.getAttribute('height'));
  const url = URL.createObjectURL(new Blob([svgText(svg)], { type: 'image/svg+xml' }));
  return new Promise((resolve, reject) => {
    const img = new Image();
    img.onload = () => {
      const canvas = document.createElement('canvas');
      canvas.width = Math.round(w * scale);
      canvas.height = Math.round(h * scale);
      const ctx = canvas.getContext('2d');
      ctx.scale(scale, scale);
      ctx.drawImage(img, 0, 0, w, h);
      URL.revokeObjectURL(url);
      canvas.toBlob((b) => (b ? resolve(b) : reject(new Error('PNG encoding failed'))), 'image/png');
    };
    img.onerror = () => {
      URL.revokeObjectURL(url);
      reject(new Error('the chart could not be drawn as an image'));
    };
    img.src = url;
  });
}
