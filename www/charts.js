// Overview charts drawn from the metrics report (metrics.json, schema in docs/METRICS.md).
// Each function returns { id, title, svg, table } where `table` = { head, rows } is the same
// data as text, shown under the chart for screen readers and for copying numbers.

import {
  COLORS, GROUP_LABELS, chartRoot, clip, fmtBytesSI, fmtFrac, fmtPct, fmtRate, fmtTime, legend, niceTicks, s, textWidth,
} from './svg.js';

/** Characters of a label that fit in `px` pixels at the charts' 15 px font. */
const fit = (px) => Math.max(4, Math.floor(px / 9));

const W = 960;
const FACTORS = [
  ['parallel_efficiency', 'Parallel efficiency (PE)'],
  ['load_balance', 'Load balance (LB)'],
  ['communication_efficiency', 'Communication efficiency (CommE)'],
  ['orchestration_efficiency', 'Orchestration efficiency (OrchE)'],
];
const CLASSES = [
  ['useful', 'Useful'],
  ['communication', 'Communication'],
  ['idle', 'Idle'],
];

function gpuName(report, gpu) {
  const g = report.gpus[gpu];
  if (!g) return `GPU ${gpu}`;
  const hosts = new Set(report.gpus.map((x) => x.host));
  return hosts.size > 1 ? `${g.label} @ ${g.host}` : g.label;
}

/** A GPU's label as two short lines: `GPU0` (and `@ host` when several hosts), then the model. */
function gpuLines(report, gpu) {
  const full = gpuName(report, gpu);
  const m = /^(GPU\d+) \((.*)\)(.*)$/.exec(full);
  return m ? [`${m[1]}${m[3]}`, m[2]] : [full, ''];
}

/** Draws a GPU's two-line label right-aligned at (x, y = middle of the row). */
function gpuLabel(g, report, gpu, x, y, maxChars) {
  const [a, b] = gpuLines(report, gpu);
  if (!b) {
    g.append(s('text', { x, y: y + 5, 'text-anchor': 'end', fill: COLORS.text }, clip(a, maxChars)));
    return;
  }
  g.append(s('text', { x, y: y - 2, 'text-anchor': 'end', fill: COLORS.text, 'font-weight': 600 }, clip(a, maxChars)));
  g.append(s('text', { x, y: y + 15, 'text-anchor': 'end', fill: '#555555', 'font-size': 12 }, clip(b, Math.round(maxChars * 1.25))));
}

/** Short kernel names, made unique within a list by numbering repeats (`elementwise_kernel #2`);
 * the full names are in the tooltips and tables. */
function uniqueShortNames(kernels) {
  const seen = new Map();
  return kernels.map((k) => {
    const base = k.short_name || k.name;
    const n = (seen.get(base) || 0) + 1;
    seen.set(base, n);
    return n === 1 ? base : `${base} #${n}`;
  });
}

function activeGpus(report) {
  return report.gpus.filter((g) => g.has_activity);
}

/** A time axis under [x0, x0 + width] for [0, endNs]. */
function timeAxis(g, x0, width, y, endNs, gridTop) {
  const ticks = niceTicks(endNs, 8);
  g.append(s('line', { x1: x0, x2: x0 + width, y1: y, y2: y, stroke: COLORS.axis }));
  for (const t of ticks) {
    const x = x0 + (t / endNs) * width;
    if (gridTop !== undefined) g.append(s('line', { x1: x, x2: x, y1: gridTop, y2: y, stroke: COLORS.grid }));
    g.append(s('line', { x1: x, x2: x, y1: y, y2: y + 5, stroke: COLORS.axis }));
    // The first and last labels stay inside the chart.
    const label = fmtTime(t);
    const half = textWidth(label) / 2;
    const anchor = x + half > W - 4 ? 'end' : x - half < 4 ? 'start' : 'middle';
    g.append(s('text', { x, y: y + 22, 'text-anchor': anchor, fill: COLORS.text }, label));
  }
}

/** Per GPU over time: the fraction of each bin that was useful, communication and idle. */
export function timelineChart(report) {
  const series = report.series;
  const gpus = series.gpus;
  const edges = series.edges_ns;
  const end = edges[edges.length - 1] || report.trace_end_ns;
  const left = 150;
  const plotW = W - left - 20;
  const rowH = 64;
  const top = 50;
  const height = top + gpus.length * (rowH + 12) + 50;
  const title = 'GPU activity over time';
  const desc = `Per GPU, for each of ${series.bins} time bins, the share of the bin that was useful, communication and idle, over ${fmtTime(end)}.`;
  const svg = chartRoot(W, height, title, desc);
  svg.append(legend(CLASSES.map(([k, label]) => ({ color: COLORS[k], label })), left, 28));
  const rows = [];
  gpus.forEach((gs, row) => {
    const y0 = top + row * (rowH + 12);
    const g = s('g', { 'aria-hidden': 'true' });
    gpuLabel(g, report, gs.gpu, left - 10, y0 + rowH / 2, fit(left - 20));
    // Stacked columns: useful at the bottom, then communication, idle on top.
    for (let i = 0; i < edges.length - 1; i++) {
      const x = left + (edges[i] / end) * plotW;
      const w = Math.max(0.5, ((edges[i + 1] - edges[i]) / end) * plotW);
      let y = y0 + rowH;
      for (const [k] of CLASSES) {
        const h = (gs[k][i] || 0) * rowH;
        if (h > 0.05) {
          y -= h;
          g.append(s('rect', { x: x.toFixed(2), y: y.toFixed(2), width: (w + 0.3).toFixed(2), height: h.toFixed(2), fill: COLORS[k] }));
        }
      }
    }
    g.append(s('rect', { x: left, y: y0, width: plotW, height: rowH, fill: 'none', stroke: COLORS.axis, 'stroke-width': 0.5 }));
    svg.append(g);
    const mean = (a) => a.reduce((x, y) => x + y, 0) / Math.max(1, a.length);
    rows.push([gpuName(report, gs.gpu), fmtFrac(mean(gs.useful)), fmtFrac(mean(gs.communication)), fmtFrac(mean(gs.idle))]);
  });
  const axisY = top + gpus.length * (rowH + 12);
  const axis = s('g', { 'aria-hidden': 'true' });
  timeAxis(axis, left, plotW, axisY, end);
  svg.append(axis);
  return {
    id: 'timeline',
    title,
    note: 'Where in the run each GPU worked. Look for grey stretches (idle: the GPU waited for the host or for others) and orange ones (communication not hidden by computation).',
    svg,
    table: { head: ['GPU', 'Useful (mean of bins)', 'Communication', 'Idle'], rows },
  };
}

/** The four device factors, then each GPU's split of the measured time. */
export function efficiencyChart(report) {
  const e = report.efficiency;
  const gpus = activeGpus(report);
  const left = 330;
  const barW = W - left - 110;
  const top = 30;
  const rowH = 40;
  const gpuTop = top + FACTORS.length * rowH + 84;
  const height = gpuTop + gpus.length * rowH + 16;
  const title = 'Efficiency factors';
  const desc = `Over ${fmtTime(e.elapsed_ns)} and ${e.gpus} GPU(s): ${FACTORS.map(([k, l]) => `${l} ${fmtFrac(e[k])}`).join(', ')}. PE = LB × CommE × OrchE.`;
  const svg = chartRoot(W, height, title, desc);
  const g = s('g', { 'aria-hidden': 'true' });
  FACTORS.forEach(([k, label], i) => {
    const y = top + i * rowH;
    const v = e[k];
    g.append(s('text', { x: left - 12, y: y + 19, 'text-anchor': 'end', fill: COLORS.text, 'font-weight': i === 0 ? 700 : 400 }, label));
    g.append(s('rect', { x: left, y: y + 4, width: barW, height: 22, fill: '#f0f0f0' }));
    if (v !== null) g.append(s('rect', { x: left, y: y + 4, width: (Math.min(1, v) * barW).toFixed(1), height: 22, fill: i === 0 ? COLORS.a : COLORS.useful }));
    g.append(s('text', { x: left + barW + 10, y: y + 20, fill: COLORS.text, 'font-weight': 700 }, fmtFrac(v)));
  });
  g.append(s('text', { x: left, y: gpuTop - 44, fill: COLORS.text, 'font-weight': 700 }, 'Per GPU, share of the measured time'));
  g.append(legend(CLASSES.map(([k, label]) => ({ color: COLORS[k], label })), left, gpuTop - 16));
  const rows = [];
  gpus.forEach((gp, i) => {
    const y = gpuTop + i * rowH;
    gpuLabel(g, report, gp.index, left - 12, y + 15, fit(left - 24));
    let x = left;
    for (const [k] of CLASSES) {
      const f = gp[`${k}_fraction`] || 0;
      const w = f * barW;
      if (w > 0) g.append(s('rect', { x: x.toFixed(1), y: y + 4, width: w.toFixed(1), height: 22, fill: COLORS[k] }));
      x += w;
    }
    g.append(s('text', { x: left + barW + 10, y: y + 20, fill: COLORS.text }, fmtFrac(gp.useful_fraction)));
    rows.push([gpuName(report, gp.index), fmtTime(gp.useful_ns), fmtTime(gp.communication_ns), fmtTime(gp.idle_ns), fmtFrac(gp.useful_fraction)]);
  });
  svg.append(g);
  return {
    id: 'efficiency',
    title,
    note: 'PE = LB × CommE × OrchE: the lowest factor is where to look. Low LB: one GPU computes more than the others (the per-GPU bars); low CommE: communication not hidden by computation; low OrchE: every GPU idle at once.',
    svg,
    table: {
      head: ['GPU', 'Useful', 'Communication', 'Idle', 'Useful share'],
      rows: [
        ...FACTORS.map(([k, l]) => [l, fmtFrac(e[k]), '', '', '']),
        ...rows,
      ],
    },
  };
}

/** GPU time split into GEMM / attention / other compute / NCCL / memory / idle. */
export function breakdownChart(report) {
  const gpus = activeGpus(report);
  const groups = report.breakdown.groups;
  const left = 170;
  const barW = W - left - 30;
  const top = 60;
  const rowH = 40;
  const height = top + (gpus.length + 1) * rowH + 40;
  const title = 'GPU time breakdown';
  const desc = `All GPUs together: ${groups.map((x) => `${GROUP_LABELS[x.group] || x.group} ${fmtPct(x.percent)}`).join(', ')}.`;
  const svg = chartRoot(W, height, title, desc);
  const g = s('g', { 'aria-hidden': 'true' });
  g.append(legend(groups.map((x) => ({ color: COLORS[x.group] || COLORS.idle, label: GROUP_LABELS[x.group] || x.group })), 20, 28));
  const bar = (y, label, grps, bold) => {
    g.append(s('text', { x: left - 12, y: y + 21, 'text-anchor': 'end', fill: COLORS.text, 'font-weight': bold ? 700 : 400 }, label));
    let x = left;
    for (const gr of grps) {
      const w = ((gr.percent || 0) / 100) * barW;
      if (w <= 0) continue;
      g.append(s('rect', { x: x.toFixed(1), y: y + 4, width: w.toFixed(1), height: 26, fill: COLORS[gr.group] || COLORS.idle }, [
        s('title', {}, `${GROUP_LABELS[gr.group] || gr.group}: ${fmtPct(gr.percent)} (${fmtTime(gr.ns)})`),
      ]));
      if (w > 52) {
        g.append(s('text', { x: x + w / 2, y: y + 22, 'text-anchor': 'middle', fill: gr.group === 'gemm' ? '#ffffff' : '#000000', 'font-size': 13 }, `${Math.round(gr.percent)}%`));
      }
      x += w;
    }
  };
  bar(top, 'All GPUs', groups, true);
  gpus.forEach((gp, i) => bar(top + (i + 1) * rowH, clip(gpuLines(report, gp.index)[0], fit(left - 20)), gp.breakdown.groups, false));
  svg.append(g);
  const head = ['Scope', ...groups.map((x) => GROUP_LABELS[x.group] || x.group)];
  const rows = [
    ['All GPUs', ...groups.map((x) => fmtPct(x.percent))],
    ...gpus.map((gp) => [gpuName(report, gp.index), ...gp.breakdown.groups.map((x) => fmtPct(x.percent))]),
  ];
  return {
    id: 'breakdown',
    title,
    note: 'Each instant of a GPU goes to the most important thing running (GEMM first, idle last). NCCL and memory copies are the communication of the efficiency chart; a large idle share is lost orchestration.',
    svg,
    table: { head, rows },
  };
}

/** The kernels with the most GPU time. */
export function topKernelsChart(report, limit = 15) {
  const top = report.kernels.top.slice(0, limit);
  const left = 330;
  const barW = W - left - 190;
  const rowH = 30;
  const y0 = 20;
  const height = y0 + Math.max(1, top.length) * rowH + 30;
  const title = 'Top kernels by total GPU time';
  const desc = top.length
    ? `The ${top.length} kernels with the most time: ${top.slice(0, 5).map((k) => `${k.short_name} ${fmtTime(k.total_ns)}`).join(', ')}${top.length > 5 ? ', …' : ''}.`
    : 'No kernels in this trace.';
  const svg = chartRoot(W, height, title, desc);
  const g = s('g', { 'aria-hidden': 'true' });
  const max = Math.max(1, ...top.map((k) => k.total_ns));
  const shortNames = uniqueShortNames(top);
  top.forEach((k, i) => {
    const y = y0 + i * rowH;
    g.append(s('text', { x: left - 10, y: y + 19, 'text-anchor': 'end', fill: COLORS.text }, [clip(shortNames[i], fit(left - 20)), s('title', {}, k.name)]));
    const w = (k.total_ns / max) * barW;
    g.append(s('rect', { x: left, y: y + 5, width: Math.max(1, w).toFixed(1), height: 20, fill: k.category === 'nccl' ? COLORS.nccl : COLORS.bar }));
    g.append(s('text', { x: left + w + 8, y: y + 20, fill: COLORS.text }, `${fmtTime(k.total_ns)} · ${fmtPct(k.percent_of_busy)} · ×${k.count}`));
  });
  if (!top.length) g.append(s('text', { x: 20, y: 40, fill: COLORS.text }, 'No kernels.'));
  svg.append(g);
  return {
    id: 'kernels',
    title,
    note: 'The kernels worth optimising first. Check the histogram of a top kernel below: two modes mean two problem sizes or two code paths.',
    svg,
    table: {
      head: ['Kernel', 'Category', 'Launches', 'Total', 'Mean', '% of busy'],
      rows: top.map((k) => [k.name, k.category, String(k.count), fmtTime(k.total_ns), fmtTime(k.mean_ns), fmtPct(k.percent_of_busy)]),
    },
  };
}

/** How much of the communication time ran alongside 0, 1, 2, 3+ useful kernels. */
export function overlapChart(report) {
  const o = report.overlap;
  const left = 90;
  const plotH = 200;
  const top = 30;
  const height = top + plotH + 70;
  const colW = (W - left - 40) / o.buckets.length;
  const title = 'Communication overlapped by computation';
  const desc = o.communication_ns > 0
    ? `Of ${fmtTime(o.communication_ns)} with communication running: ${o.buckets.map((b) => `${fmtPct(b.percent)} with ${b.useful_running} useful kernel(s)`).join(', ')}.`
    : 'No communication operation in the measured time.';
  const svg = chartRoot(W, height, title, desc);
  const g = s('g', { 'aria-hidden': 'true' });
  for (const p of [0, 25, 50, 75, 100]) {
    const y = top + plotH - (p / 100) * plotH;
    g.append(s('line', { x1: left, x2: W - 40, y1: y, y2: y, stroke: COLORS.grid }));
    g.append(s('text', { x: left - 10, y: y + 5, 'text-anchor': 'end', fill: COLORS.text }, `${p}%`));
  }
  o.buckets.forEach((b, i) => {
    const h = ((b.percent || 0) / 100) * plotH;
    const x = left + i * colW + colW * 0.2;
    g.append(s('rect', { x: x.toFixed(1), y: (top + plotH - h).toFixed(1), width: (colW * 0.6).toFixed(1), height: h.toFixed(1), fill: i === 0 ? COLORS.communication : COLORS.useful }));
    g.append(s('text', { x: x + colW * 0.3, y: top + plotH - h - 8, 'text-anchor': 'middle', fill: COLORS.text, 'font-weight': 700 }, fmtPct(b.percent)));
    g.append(s('text', { x: x + colW * 0.3, y: top + plotH + 24, 'text-anchor': 'middle', fill: COLORS.text }, `${b.useful_running} useful running`));
  });
  const alone = o.buckets[0] ? o.buckets[0].ns : 0;
  g.append(s('text', { x: left, y: top + plotH + 54, fill: COLORS.text }, `Not overlapped (first column): ${fmtTime(alone)} of ${fmtTime(o.communication_ns)} with communication running.`));
  svg.append(g);
  return {
    id: 'overlap',
    title,
    note: 'All the time some communication ran (NCCL kernels, memory copies), overlapped or not: only the first column costs time, and it is the communication of the efficiency chart. Move communication under computation to shift time to the right.',
    svg,
    table: { head: ['Useful kernels running', 'Time', 'Share of communication time'], rows: o.buckets.map((b) => [b.useful_running, fmtTime(b.ns), fmtPct(b.percent)]) },
  };
}

/** Durations of one kernel on a logarithmic time axis (the report's bins are log-spaced, 4 per
 * octave), with empty stretches left empty so separate modes look separate. */
export function histogramChart(report, name) {
  const h = report.histograms.find((x) => x.name === name) || report.histograms[0];
  const title = h ? `Duration histogram: ${clip(h.short_name, 60)}` : 'Duration histogram';
  if (!h || !h.bins.length) {
    const svg = chartRoot(W, 80, title, 'No kernel durations in this trace.');
    svg.append(s('text', { x: 20, y: 45, fill: COLORS.text }, 'No kernels.'));
    return { id: 'histogram', title, svg, table: { head: [], rows: [] } };
  }
  const left = 80;
  const right = 30;
  const plotW = W - left - right;
  const plotH = 220;
  const top = 30;
  const height = top + plotH + 80;
  const bins = h.bins;
  // The open last bin gets the width of one ordinary bin (a factor 2^(1/4)).
  const hiOf = (b) => (b.hi_ns === null ? b.lo_ns * 2 ** 0.25 : b.hi_ns);
  // Show at least a decade, with half a bin of margin on each side.
  let lo = Math.max(1, bins[0].lo_ns / 2 ** 0.125);
  let hi = hiOf(bins[bins.length - 1]) * 2 ** 0.125;
  if (hi / lo < 10) {
    const mid = Math.sqrt(hi * lo);
    lo = mid / Math.sqrt(10);
    hi = mid * Math.sqrt(10);
  }
  const x = (ns) => left + (Math.log(ns / lo) / Math.log(hi / lo)) * plotW;
  const max = Math.max(1, ...bins.map((b) => b.count));
  const modes = new Set(h.modes_ns);
  const desc = `${h.count} launches of ${h.name}, from ${fmtTime(bins[0].lo_ns)} to ${fmtTime(hiOf(bins[bins.length - 1]))}; ${h.modes_ns.length > 1 ? `${h.modes_ns.length} modes, at ${h.modes_ns.map(fmtTime).join(' and ')}` : 'one mode'}.`;
  const svg = chartRoot(W, height, title, desc);
  const g = s('g', { 'aria-hidden': 'true' });
  for (const t of niceTicks(max, 4, true)) {
    const y = top + plotH - (t / max) * plotH;
    g.append(s('line', { x1: left, x2: left + plotW, y1: y, y2: y, stroke: COLORS.grid }));
    g.append(s('text', { x: left - 10, y: y + 5, 'text-anchor': 'end', fill: COLORS.text }, String(Math.round(t))));
  }
  // Decade ticks (1 µs, 10 µs, ...), with 2× and 5× marks when the span is short.
  const ticks = [];
  for (let d = 10 ** Math.floor(Math.log10(lo)); d <= hi; d *= 10) {
    for (const m of hi / lo < 1000 ? [1, 2, 5] : [1]) if (d * m >= lo && d * m <= hi) ticks.push(d * m);
  }
  const axisY = top + plotH;
  g.append(s('line', { x1: left, x2: left + plotW, y1: axisY, y2: axisY, stroke: COLORS.axis }));
  for (const t of ticks) {
    g.append(s('line', { x1: x(t), x2: x(t), y1: axisY, y2: axisY + 5, stroke: COLORS.axis }));
    g.append(s('text', { x: x(t), y: axisY + 22, 'text-anchor': 'middle', fill: COLORS.text }, fmtTime(t)));
  }
  for (const b of bins) {
    const bh = (b.count / max) * plotH;
    const x0 = x(b.lo_ns);
    const w = Math.max(2, x(hiOf(b)) - x0 - 1);
    g.append(s('rect', { x: x0.toFixed(1), y: (axisY - bh).toFixed(1), width: w.toFixed(1), height: bh.toFixed(1), fill: modes.has(b.lo_ns) ? COLORS.b : COLORS.bar }, [
      s('title', {}, `${fmtTime(b.lo_ns)} – ${b.hi_ns === null ? '…' : fmtTime(b.hi_ns)}: ${b.count} launches`),
    ]));
  }
  g.append(s('text', { x: left, y: height - 12, fill: COLORS.text }, `${h.count} launches · duration on a log scale · the bin at each mode's peak is darker orange`));
  svg.append(g);
  return {
    id: 'histogram',
    title,
    note: 'How long each launch of one kernel took. One narrow peak is a steady kernel; several peaks are several problem sizes; a long tail is launches slowed by something else.',
    svg,
    table: { head: ['From', 'To', 'Launches', 'Mode'], rows: bins.map((b) => [fmtTime(b.lo_ns), b.hi_ns === null ? '…' : fmtTime(b.hi_ns), String(b.count), modes.has(b.lo_ns) ? 'yes' : '']) },
  };
}

/** Memory transfers per direction: bytes moved and the bandwidth achieved, beside the device's. */
export function transfersChart(report) {
  const rows = report.transfers || [];
  const left = 260;
  const barW = W - left - 270;
  const rowH = 34;
  const top = 30;
  const height = top + Math.max(1, rows.length) * rowH + 40;
  const title = 'Memory transfers';
  const label = (t) => `${clip(gpuLines(report, t.gpu)[0], 10)} ${DIRECTION_LABELS[t.direction] || t.direction}`;
  const desc = rows.map((t) => `${label(t)}: ${t.count} operations, ${fmtBytesSI(t.bytes)} at ${fmtRate(t.bandwidth_bytes_per_s)}`).join('; ');
  const svg = chartRoot(W, height, title, desc);
  const g = s('g', { 'aria-hidden': 'true' });
  const max = Math.max(1, ...rows.map((t) => t.bytes));
  rows.forEach((t, i) => {
    const y = top + i * rowH;
    g.append(s('text', { x: left - 10, y: y + 19, 'text-anchor': 'end', fill: COLORS.text }, clip(label(t), fit(left - 20))));
    const w = (t.bytes / max) * barW;
    g.append(s('rect', { x: left, y: y + 5, width: Math.max(1, w).toFixed(1), height: 20, fill: COLORS.memory }));
    g.append(s('text', { x: left + w + 8, y: y + 20, fill: COLORS.text, 'font-size': 13 }, `${fmtBytesSI(t.bytes)} · ${t.count}× · ${fmtRate(t.bandwidth_bytes_per_s)}`));
  });
  const bw = rows.find((t) => t.device_bandwidth_bytes_per_s);
  g.append(s('text', { x: 20, y: height - 14, fill: COLORS.text, 'font-size': 13 }, bw
    ? `Device memory bandwidth ${fmtRate(bw.device_bandwidth_bytes_per_s)}: the bound for device copies; host copies are bound by the host link (PCIe, NVLink-C2C).`
    : 'The export does not list the device memory bandwidth.'));
  svg.append(g);
  return {
    id: 'transfers',
    title,
    note: 'Bytes moved per direction and the bandwidth the copies achieved while they ran. Many small host copies at a low bandwidth are a classic cost: batch them, or keep the data on the GPU.',
    svg,
    table: {
      head: ['GPU', 'Direction', 'Operations', 'Bytes', 'Time', 'Achieved bandwidth', 'Device memory bandwidth'],
      rows: rows.map((t) => [gpuName(report, t.gpu), DIRECTION_LABELS[t.direction] || t.direction, String(t.count), fmtBytesSI(t.bytes), fmtTime(t.time_ns), fmtRate(t.bandwidth_bytes_per_s), fmtRate(t.device_bandwidth_bytes_per_s)]),
    },
  };
}

const DIRECTION_LABELS = {
  memcpy_htod: 'host → device',
  memcpy_dtoh: 'device → host',
  memcpy_dtod: 'device → device',
  memcpy_peer: 'peer (GPU → GPU)',
  memcpy_unified: 'unified memory',
  memcpy_other: 'other copies',
  memset: 'memset',
};

/** All overview charts of one report, in page order; none without GPU activity (the page says
 * so in one line rather than draw empty charts). */
export function overviewCharts(report, histogramKernel) {
  if (!report.gpus.some((g) => g.has_activity)) return [];
  const charts = [
    efficiencyChart(report),
    timelineChart(report),
    breakdownChart(report),
  ];
  if ((report.transfers || []).length) charts.push(transfersChart(report));
  if (report.kernels.top.length) charts.push(topKernelsChart(report));
  if (report.overlap.communication_ns > 0) charts.push(overlapChart(report));
  if (report.histograms.length) charts.push(histogramChart(report, histogramKernel));
  return charts;
}

/** The two runs' GPU time breakdowns, one bar each. */
export function compareBreakdownChart(a, b, labelA, labelB) {
  const left = 170;
  const barW = W - left - 30;
  const height = 60 + 2 * 44 + 30;
  const title = 'GPU time breakdown, side by side';
  const ga = a.breakdown.groups;
  const gb = b.breakdown.groups;
  const desc = ga.map((x, i) => `${GROUP_LABELS[x.group] || x.group}: ${fmtPct(x.percent)} → ${fmtPct(gb[i] ? gb[i].percent : null)}`).join('; ');
  const svg = chartRoot(W, height, title, desc);
  const g = s('g', { 'aria-hidden': 'true' });
  g.append(legend(ga.map((x) => ({ color: COLORS[x.group] || COLORS.idle, label: GROUP_LABELS[x.group] || x.group })), 20, 28));
  [[ga, `A: ${clip(labelA, fit(left - 50))}`], [gb, `B: ${clip(labelB, fit(left - 50))}`]].forEach(([grps, label], i) => {
    const y = 50 + i * 44;
    g.append(s('text', { x: left - 12, y: y + 22, 'text-anchor': 'end', fill: COLORS.text }, label));
    let x = left;
    for (const gr of grps) {
      const w = ((gr.percent || 0) / 100) * barW;
      if (w <= 0) continue;
      g.append(s('rect', { x: x.toFixed(1), y: y + 4, width: w.toFixed(1), height: 28, fill: COLORS[gr.group] || COLORS.idle }));
      if (w > 52) g.append(s('text', { x: x + w / 2, y: y + 23, 'text-anchor': 'middle', fill: gr.group === 'gemm' ? '#ffffff' : '#000000', 'font-size': 13 }, `${Math.round(gr.percent)}%`));
      x += w;
    }
  });
  svg.append(g);
  const byGroup = (gs) => Object.fromEntries(gs.map((x) => [x.group, x]));
  const ma = byGroup(ga);
  const mb = byGroup(gb);
  const keys = [...new Set([...ga.map((x) => x.group), ...gb.map((x) => x.group)])];
  return {
    id: 'compare-breakdown',
    title,
    note: 'Shares of the GPUs\' time in each run: a share that grows in B (idle, communication) is where B lost time.',
    svg,
    table: {
      head: ['Group', 'A', 'B', 'B − A'],
      rows: keys.map((k) => {
        const pa = ma[k] ? ma[k].percent : null;
        const pb = mb[k] ? mb[k].percent : null;
        return [GROUP_LABELS[k] || k, fmtPct(pa), fmtPct(pb), pa === null || pb === null ? 'n/a' : `${pb - pa >= 0 ? '+' : '−'}${Math.abs(pb - pa).toFixed(1)} pts`];
      }),
    },
  };
}
