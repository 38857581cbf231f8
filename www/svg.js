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
  better: '#009E73',
  worse: '#D55E00',
  bar: '#0072B2',
  axis: '#444444',
  grid: '#e2e2e2',
  text: '#1a1a1a',
};

export const GROUP_LABELS = {
  gemm: 'GEMM',
  attention: 'Attention',
  other_compute: 'Other compute',
  nccl: 'NCCL (comm.)',
  memory: 'Memory copies (comm.)',
  idle: 'Idle',
};

/** Three significant figures without exponents: `1.23 s`, `45.6 ms`, `789 µs`, `1234 s`, `12 ns`. */
export function fmtTime(ns) {
  if (ns === null || ns === undefined || Number.isNaN(ns)) return 'n/a';
  const a = Math.abs(ns);
  const three = (v) => {
    const m = Math.abs(v);
    return v.toFixed(m >= 100 ? 0 : m >= 10 ? 1 : 2);
  };
  if (a >= 1e9) return `${three(ns / 1e9)} s`;
  if (a >= 1e6) return `${three(ns / 1e6)} ms`;
  if (a >= 1e3) return `${three(ns / 1e3)} µs`;
  return `${Math.round(ns)} ns`;
}

/** Bytes as `12.3 GB`, `4.56 MB`, `789 kB`, `12 B` (decimal units, as bandwidths are). */
export function fmtBytesSI(n) {
  if (n >= 1e9) return `${(n / 1e9).toFixed(2)} GB`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(2)} MB`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)} kB`;
  return `${n} B`;
}

/** A bandwidth in bytes/s as `12.3 GB/s`. */
export function fmtRate(bytesPerS) {
  if (bytesPerS === null || bytesPerS === undefined) return 'n/a';
  if (bytesPerS >= 1e9) return `${(bytesPerS / 1e9).toFixed(1)} GB/s`;
  return `${(bytesPerS / 1e6).toFixed(1)} MB/s`;
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

/** About 1, 2 or 5 × 10^k ticks over [0, end]; `integers`: steps of at least 1 (counts). */
export function niceTicks(end, count = 6, integers = false) {
  if (!(end > 0)) return [0];
  const raw = end / count;
  const p = 10 ** Math.floor(Math.log10(raw));
  let step = [1, 2, 5, 10].map((m) => m * p).find((x) => x >= raw);
  if (integers) step = Math.max(1, Math.round(step));
  const ticks = [];
  for (let k = 0; k * step <= end * 1.0001; k++) ticks.push(k * step);
  return ticks;
}

/** Width of `text` at the charts' 15 px font, estimated (no layout is at hand when drawing):
 * wide enough for every system font tried, so labels placed after it never touch. */
export function textWidth(text, size = 15) {
  return text.length * size * 0.6;
}

/** A legend row of coloured squares with labels, starting at (x, y). */
export function legend(items, x, y) {
  const g = s('g', { class: 'legend' });
  let cx = x;
  for (const { color, label } of items) {
    g.append(s('rect', { x: cx, y: y - 12, width: 14, height: 14, fill: color, stroke: '#666', 'stroke-width': 0.5 }));
    g.append(s('text', { x: cx + 20, y, fill: COLORS.text }, label));
    cx += 20 + textWidth(label) + 22;
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
