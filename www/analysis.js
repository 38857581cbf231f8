// The analyst's views after the overview: iterations (the run's structure and the factors of
// each), ranks (who to blame), and the comparison of two runs with its verdict. Charts return
// { id, title, note, svg, table } like charts.js; the rest is plain DOM built with textContent.

import {
  COLORS, chartRoot, clip, fmtDeltaPts, fmtFrac, fmtTime, legend, niceTicks, s,
} from './svg.js';

const W = 960;

export const DEVICE_FACTORS = [
  ['parallel_efficiency', 'PE'],
  ['load_balance', 'LB'],
  ['communication_efficiency', 'CommE'],
  ['orchestration_efficiency', 'OrchE'],
];
export const HOST_FACTORS = [
  ['parallel_efficiency', 'MPI PE'],
  ['load_balance', 'MPI LB'],
  ['communication_efficiency', 'MPI CommE'],
];
const FACTOR_COLORS = ['#0072B2', '#009E73', '#E69F00', '#CC79A7'];

/** `rank 3` or `process 3` (no rank known). */
export function who(rank, process) {
  return rank === null || rank === undefined ? `process ${process}` : `rank ${rank}`;
}

function slowestText(sl, report) {
  if (!sl) return '';
  const r = who(sl.rank, sl.process);
  if (sl.gpu === null || sl.gpu === undefined) return r;
  const g = report.gpus[sl.gpu];
  return `${g ? g.label.replace(/ \(.*\)$/, '') : `GPU ${sl.gpu}`} (${r})`;
}

/** Iteration durations as bars, outliers in orange and the warm-up labelled. */
function durationsChart(report) {
  const items = report.iterations.items;
  const left = 90;
  const plotW = W - left - 30;
  const plotH = 200;
  const top = 46;
  const height = top + plotH + 60;
  const max = Math.max(1, ...items.map((x) => x.duration_ns));
  const title = 'Iteration durations';
  const sum = report.iterations.summary;
  const desc = `${items.length} iterations, median ${fmtTime(sum.duration_ns.median)}, from ${fmtTime(sum.duration_ns.min)} to ${fmtTime(sum.duration_ns.max)}; outliers: ${sum.outliers.length ? sum.outliers.join(', ') : 'none'}.`;
  const svg = chartRoot(W, height, title, desc);
  const g = s('g', { 'aria-hidden': 'true' });
  g.append(legend([{ color: COLORS.bar, label: 'iteration' }, { color: COLORS.b, label: 'outlier (> 1.5 × median)' }], left, 24));
  const ticks = niceTicks(max, 4);
  const top2 = ticks[ticks.length - 1] || max;
  for (const t of ticks) {
    const y = top + plotH - (t / top2) * plotH;
    g.append(s('line', { x1: left, x2: left + plotW, y1: y, y2: y, stroke: COLORS.grid }));
    g.append(s('text', { x: left - 8, y: y + 5, 'text-anchor': 'end', fill: COLORS.text }, fmtTime(t)));
  }
  const bw = plotW / items.length;
  items.forEach((x, i) => {
    const h = (x.duration_ns / top2) * plotH;
    g.append(s('rect', {
      x: (left + i * bw + bw * 0.1).toFixed(1), y: (top + plotH - h).toFixed(1), width: Math.max(1, bw * 0.8).toFixed(1), height: h.toFixed(1),
      fill: x.outlier ? COLORS.b : COLORS.bar, 'data-iteration': String(x.index), class: 'pick',
    }, [s('title', {}, `iteration ${x.index}: ${fmtTime(x.duration_ns)}${x.warmup ? ' (warm-up)' : x.outlier ? ' (outlier)' : ''}; click to see it in the timeline`)]));
  });
  // Index ticks: integers, at most ~12 labels.
  const every = Math.max(1, Math.ceil(items.length / 12));
  for (let i = 0; i < items.length; i += every) {
    g.append(s('text', { x: left + (i + 0.5) * bw, y: top + plotH + 20, 'text-anchor': 'middle', fill: COLORS.text }, String(items[i].index)));
  }
  g.append(s('text', { x: left + plotW / 2, y: top + plotH + 44, 'text-anchor': 'middle', fill: COLORS.text }, 'iteration'));
  const warm = items.find((x) => x.warmup);
  if (warm) {
    const i = items.indexOf(warm);
    g.append(s('text', { x: left + i * bw + bw / 2, y: top + plotH - (warm.duration_ns / top2) * plotH - 6, 'text-anchor': i < items.length / 2 ? 'start' : 'end', fill: COLORS.text, 'font-size': 13 }, 'warm-up'));
  }
  svg.append(g);
  return {
    id: 'iteration-durations',
    title,
    note: 'Each bar is one iteration, from its earliest start to its latest end over the ranks; click one to see it in the timeline. Look at the orange ones: an outlier is worth keeping alone (table below) to see every event of it.',
    svg,
    table: { head: ['Iteration', 'Duration', 'Outlier'], rows: items.map((x) => [String(x.index), fmtTime(x.duration_ns), x.warmup ? 'warm-up' : x.outlier ? 'yes' : '']) },
  };
}

/** The factors of each iteration as lines (device factors, else the host's). */
function factorsChart(report) {
  const items = report.iterations.items;
  const device = items.some((x) => x.efficiency);
  const factors = device ? DEVICE_FACTORS : HOST_FACTORS;
  const of = (x) => (device ? x.efficiency : x.host);
  const left = 90;
  const plotW = W - left - 30;
  const plotH = 200;
  const top = 46;
  const height = top + plotH + 60;
  const title = device ? 'Device efficiency per iteration' : 'MPI efficiency per iteration';
  const mean = (k) => {
    const v = items.map((x) => of(x) && of(x)[k]).filter((v) => v !== null && v !== undefined);
    return v.length ? v.reduce((a, b) => a + b, 0) / v.length : null;
  };
  const desc = factors.map(([k, l]) => `${l} mean ${fmtFrac(mean(k))}`).join(', ');
  const svg = chartRoot(W, height, title, desc);
  const g = s('g', { 'aria-hidden': 'true' });
  g.append(legend(factors.map(([, l], i) => ({ color: FACTOR_COLORS[i], label: l })), left, 24));
  for (const p of [0, 0.25, 0.5, 0.75, 1]) {
    const y = top + plotH - p * plotH;
    g.append(s('line', { x1: left, x2: left + plotW, y1: y, y2: y, stroke: COLORS.grid }));
    g.append(s('text', { x: left - 8, y: y + 5, 'text-anchor': 'end', fill: COLORS.text }, `${p * 100} %`));
  }
  const step = items.length > 1 ? plotW / (items.length - 1) : 0;
  const xAt = (i) => left + (items.length > 1 ? i * step : plotW / 2);
  factors.forEach(([k], f) => {
    const pts = items
      .map((x, i) => [i, of(x) ? of(x)[k] : null])
      .filter(([, v]) => v !== null && v !== undefined)
      .map(([i, v]) => `${xAt(i).toFixed(1)},${(top + plotH - Math.min(1, v) * plotH).toFixed(1)}`);
    if (pts.length > 1) g.append(s('polyline', { points: pts.join(' '), fill: 'none', stroke: FACTOR_COLORS[f], 'stroke-width': f === 0 ? 3 : 2 }));
    for (const p of pts) {
      const [x, y] = p.split(',');
      g.append(s('circle', { cx: x, cy: y, r: f === 0 ? 3.5 : 2.5, fill: FACTOR_COLORS[f] }));
    }
  });
  const every = Math.max(1, Math.ceil(items.length / 12));
  for (let i = 0; i < items.length; i += every) {
    g.append(s('text', { x: xAt(i), y: top + plotH + 20, 'text-anchor': 'middle', fill: COLORS.text }, String(items[i].index)));
  }
  g.append(s('text', { x: left + plotW / 2, y: top + plotH + 44, 'text-anchor': 'middle', fill: COLORS.text }, 'iteration'));
  svg.append(g);
  return {
    id: 'iteration-factors',
    title,
    note: device
      ? 'PE = LB × CommE × OrchE inside each iteration. A dip in LB points at the slowest GPU of that iteration (table below); in OrchE, at time the GPUs sat idle.'
      : 'MPI PE = LB × CommE inside each iteration. A dip in LB points at the slowest rank of that iteration (table below); in CommE, at time spent in MPI by everyone.',
    svg,
    table: {
      head: ['Iteration', ...factors.map(([, l]) => l)],
      rows: items.map((x) => [String(x.index), ...factors.map(([k]) => fmtFrac(of(x) ? of(x)[k] : null))]),
    },
  };
}

/** Charts of the iterations, or none (then the note says why). */
export function iterationCharts(report) {
  if (!report.iterations || !report.iterations.items.length) return [];
  return [durationsChart(report), factorsChart(report)];
}

/** The one-line description of the iterations found (or why there are none). */
export function iterationNote(report) {
  const it = report.iterations;
  if (!it || !it.items.length) return `No iterations: ${it ? it.note : 'this report predates them'}.`;
  const sum = it.summary;
  const who1 = sum.slowest[0];
  const blame = who1 ? ` The slowest most often: ${slowestText(who1, report)}, in ${who1.iterations} of ${sum.count}.` : '';
  return `${sum.count} iterations: ${it.note}. Median duration ${fmtTime(sum.duration_ns.median)}, varying ${fmtFrac(sum.duration_ns.cv)}.${blame}`;
}

/** Table rows for the iterations: index, start, duration, factors, slowest, last to arrive. */
export function iterationRows(report) {
  const items = report.iterations.items;
  const device = items.some((x) => x.efficiency);
  const host = items.some((x) => x.host);
  const head = ['#', 'Start', 'Duration', ...(device ? DEVICE_FACTORS.map(([, l]) => l) : []), ...(host ? HOST_FACTORS.map(([, l]) => l) : []), 'Slowest', ...(host ? ['Last to arrive'] : []), ''];
  const rows = items.map((x) => ({
    item: x,
    cells: [
      String(x.index),
      fmtTime(x.start_ns),
      fmtTime(x.duration_ns),
      ...(device ? DEVICE_FACTORS.map(([k]) => fmtFrac(x.efficiency ? x.efficiency[k] : null)) : []),
      ...(host ? HOST_FACTORS.map(([k]) => fmtFrac(x.host ? x.host[k] : null)) : []),
      slowestText(x.slowest, report),
      ...(host ? [x.last_to_arrive ? who(x.last_to_arrive.rank, x.last_to_arrive.process) : ''] : []),
      x.warmup ? 'warm-up' : x.outlier ? 'outlier' : '',
    ],
  }));
  return { head, rows };
}

/** Per rank: stacked bars (up to RANK_BARS ranks), else a heat strip of useful share. */
const RANK_BARS = 16;

function rankLabel(r) {
  return r.rank === null ? `pid ${r.pid}` : `rank ${r.rank}`;
}

export function rankCharts(report) {
  const ranks = report.ranks || [];
  if (!ranks.length) return [];
  const t = report.window.elapsed_ns;
  const device = ranks.some((r) => r.device);
  const parts = device
    ? [['useful_ns', 'GPU useful', COLORS.useful], ['communication_ns', 'GPU communication', COLORS.communication], ['idle_ns', 'GPU idle', COLORS.idle]]
    : [['host_useful_ns', 'outside MPI', COLORS.useful], ['mpi_ns', 'inside MPI', COLORS.communication]];
  const value = (r, k) => (device ? (r.device ? r.device[k] : 0) : r[k] || 0);
  const total = (r) => parts.reduce((a, [k]) => a + value(r, k), 0) || 1;
  const slowest = Math.max(...ranks.map((r) => r.slowest_iterations || 0));
  if (ranks.length <= RANK_BARS) {
    const left = 170;
    const barW = W - left - 190;
    const rowH = 30;
    const top = 50;
    const height = top + ranks.length * rowH + 20;
    const title = device ? 'GPU time per rank' : 'Time per rank, outside and inside MPI';
    const desc = ranks.map((r) => `${rankLabel(r)}: ${parts.map(([k, l]) => `${l} ${fmtTime(value(r, k))}`).join(', ')}`).join('; ');
    const svg = chartRoot(W, height, title, desc);
    const g = s('g', { 'aria-hidden': 'true' });
    g.append(legend(parts.map(([, l, c]) => ({ color: c, label: l })), left, 26));
    ranks.forEach((r, i) => {
      const y = top + i * rowH;
      const straggler = slowest > 0 && r.slowest_iterations === slowest;
      g.append(s('text', { x: left - 10, y: y + 19, 'text-anchor': 'end', fill: COLORS.text, 'font-weight': straggler ? 700 : 400 }, rankLabel(r)));
      let x = left;
      const tot = total(r);
      for (const [k, l, c] of parts) {
        const w = (value(r, k) / tot) * barW;
        if (w > 0) g.append(s('rect', { x: x.toFixed(1), y: y + 5, width: w.toFixed(1), height: 20, fill: c }, [s('title', {}, `${rankLabel(r)} ${l}: ${fmtTime(value(r, k))}`)]));
        x += w;
      }
      const label = r.slowest_iterations ? `${fmtFrac(value(r, parts[0][0]) / tot)} · slowest ${r.slowest_iterations}×` : fmtFrac(value(r, parts[0][0]) / tot);
      g.append(s('text', { x: left + barW + 8, y: y + 20, fill: COLORS.text, 'font-size': 13 }, label));
    });
    svg.append(g);
    return [{
      id: 'ranks',
      title,
      note: `Each rank's ${device ? 'GPU time' : 'time'} over the measured ${fmtTime(t)}. The rank with the most ${parts[0][1]} sets the pace (bold: the slowest in the most iterations); the others wait for it${device ? ' (GPU communication and idle)' : ' in MPI'}.`,
      svg,
      table: { head: ['Rank', ...parts.map(([, l]) => l)], rows: ranks.map((r) => [rankLabel(r), ...parts.map(([k]) => fmtTime(value(r, k)))]) },
    }];
  }
  // Many ranks: one cell per rank, coloured by its share of useful time.
  const cols = Math.min(32, Math.ceil(Math.sqrt(ranks.length * 4)));
  const cell = Math.floor((W - 60) / cols);
  const rows = Math.ceil(ranks.length / cols);
  const top = 56;
  const height = top + rows * cell + 40;
  const title = `${device ? 'GPU useful' : 'Time outside MPI'} per rank (${ranks.length} ranks)`;
  const shares = ranks.map((r) => value(r, parts[0][0]) / total(r));
  const lo = Math.min(...shares);
  const hi = Math.max(...shares);
  const desc = `Share of ${parts[0][1]} per rank from ${fmtFrac(lo)} to ${fmtFrac(hi)}.`;
  const svg = chartRoot(W, height, title, desc);
  const g = s('g', { 'aria-hidden': 'true' });
  const shade = (f) => {
    const u = hi > lo ? (f - lo) / (hi - lo) : 1;
    const c = (a, b) => Math.round(a + (b - a) * u);
    return `rgb(${c(230, 0)},${c(240, 114)},${c(250, 178)})`;
  };
  g.append(s('text', { x: 30, y: 30, fill: COLORS.text }, `lighter = less ${parts[0][1]} (${fmtFrac(lo)}), darker = more (${fmtFrac(hi)}); outlined: the slowest most often`));
  ranks.forEach((r, i) => {
    const x = 30 + (i % cols) * cell;
    const y = top + Math.floor(i / cols) * cell;
    const straggler = slowest > 0 && r.slowest_iterations === slowest;
    g.append(s('rect', { x, y, width: cell - 2, height: cell - 2, fill: shade(shares[i]), stroke: straggler ? COLORS.b : 'none', 'stroke-width': 3 }, [s('title', {}, `${rankLabel(r)}: ${fmtFrac(shares[i])}${r.slowest_iterations ? `, slowest ${r.slowest_iterations}×` : ''}`)]));
    if (cell >= 26) g.append(s('text', { x: x + cell / 2 - 1, y: y + cell / 2 + 4, 'text-anchor': 'middle', fill: shares[i] > (lo + hi) / 2 ? '#ffffff' : COLORS.text, 'font-size': 11 }, String(r.rank ?? i)));
  });
  svg.append(g);
  return [{
    id: 'ranks',
    title,
    note: 'One cell per rank: the darker, the more of its time it computed. Outlined cells were the slowest most often; the table below lists every rank.',
    svg,
    table: { head: ['Rank', `${parts[0][1]} share`], rows: ranks.map((r, i) => [rankLabel(r), fmtFrac(shares[i])]) },
  }];
}

/** The one-line summary of the ranks: the host factors and the straggler. */
export function rankNote(report) {
  const ranks = report.ranks || [];
  const h = report.host;
  const parts = [];
  if (h) parts.push(`MPI load balance ${fmtFrac(h.load_balance)}, communication efficiency ${fmtFrac(h.communication_efficiency)} over ${h.ranks.length} ranks`);
  if (h && h.device_offload_efficiency !== null && h.device_offload_efficiency !== undefined) parts.push(`device offload efficiency ${fmtFrac(h.device_offload_efficiency)}`);
  const top = [...ranks].sort((a, b) => (b.slowest_iterations || 0) - (a.slowest_iterations || 0))[0];
  if (top && top.slowest_iterations) {
    const n = report.iterations.summary ? report.iterations.summary.count : 0;
    parts.push(`${rankLabel(top)} is the straggler: the slowest in ${top.slowest_iterations} of ${n} iterations`);
  } else if (h) {
    const max = h.ranks.reduce((a, b) => (b.useful_ns > a.useful_ns ? b : a));
    parts.push(`${who(max.rank, max.process)} spends the most time outside MPI (${fmtTime(max.useful_ns)})`);
  }
  return parts.length ? `${parts.join('; ')}.` : '';
}

/** Rows of the ranks table. */
export function rankRows(report) {
  const ranks = report.ranks || [];
  const device = ranks.some((r) => r.device);
  const mpi = ranks.some((r) => r.mpi_ns !== null);
  const t = report.window.elapsed_ns;
  const head = ['Rank', 'pid', 'Host', ...(device ? ['GPU useful', 'GPU communication', 'GPU idle'] : []), ...(mpi ? ['Outside MPI', 'In MPI', 'MPI share'] : []), 'Slowest in'];
  const rows = ranks.map((r) => [
    r.rank === null ? '—' : String(r.rank),
    String(r.pid),
    r.host,
    ...(device ? (r.device ? [fmtTime(r.device.useful_ns), fmtTime(r.device.communication_ns), fmtTime(r.device.idle_ns)] : ['—', '—', '—']) : []),
    ...(mpi ? (r.mpi_ns !== null ? [fmtTime(r.host_useful_ns), fmtTime(r.mpi_ns), fmtFrac(t ? r.mpi_ns / t : null)] : ['—', '—', '—']) : []),
    r.slowest_iterations === null ? '—' : `${r.slowest_iterations} iteration${r.slowest_iterations === 1 ? '' : 's'}`,
  ]);
  return { head, rows };
}

/** The comparison's charts: the factors' share of the change, and the kernels' changes. */
export function verdictCharts(c) {
  const out = [];
  const keys = (c.model === 'device' ? DEVICE_FACTORS : HOST_FACTORS).slice(1);
  {
    const left = 250;
    const half = (W - left - 250) / 2;
    const mid = left + half;
    const rowH = 44;
    const top = 56;
    const height = top + keys.length * rowH + 30;
    const title = 'What moved the parallel efficiency';
    const logs = keys.map(([k]) => (c.factors[k] ? c.factors[k].log_change : null));
    const max = Math.max(1e-9, ...logs.filter((v) => v !== null).map(Math.abs));
    const desc = keys.map(([k, l]) => `${l}: ${fmtFrac(c.factors[k].a)} → ${fmtFrac(c.factors[k].b)}`).join('; ');
    const svg = chartRoot(W, height, title, desc);
    const g = s('g', { 'aria-hidden': 'true' });
    g.append(s('line', { x1: mid, x2: mid, y1: 40, y2: height - 16, stroke: COLORS.axis }));
    g.append(s('text', { x: mid - 8, y: 30, 'text-anchor': 'end', fill: COLORS.text, 'font-size': 13 }, '← worse in B'));
    g.append(s('text', { x: mid + 8, y: 30, fill: COLORS.text, 'font-size': 13 }, 'better in B →'));
    keys.forEach(([k, l], i) => {
      const f = c.factors[k];
      const y = top + i * rowH;
      const v = f.log_change;
      g.append(s('text', { x: left - 12, y: y + 20, 'text-anchor': 'end', fill: COLORS.text, 'font-weight': c.verdict.main_factor === k ? 700 : 400 }, l));
      if (v !== null) {
        const w = (Math.abs(v) / max) * half;
        g.append(s('rect', { x: (v < 0 ? mid - w : mid).toFixed(1), y: y + 4, width: Math.max(1, w).toFixed(1), height: 22, fill: v < 0 ? COLORS.worse : COLORS.better }));
      }
      const share = f.share === null || f.share === undefined ? '' : ` (${Math.round(f.share * 100)} %)`;
      g.append(s('text', { x: mid + half + 12, y: y + 20, fill: COLORS.text, 'font-size': 13 }, `${fmtFrac(f.a)} → ${fmtFrac(f.b)}${share}`));
    });
    svg.append(g);
    out.push({
      id: 'compare-factors',
      title,
      note: 'ln PE changes by the sum of the factors\' log changes: each bar is one factor\'s part, to the right where B is better. The longest bar is the factor that moved PE.',
      svg,
      table: {
        head: ['Factor', 'A', 'B', 'B − A', 'ln change', 'Share of the change'],
        rows: [['parallel_efficiency', 'PE'], ...keys].map(([k, l]) => {
          const f = c.factors[k];
          return [l, fmtFrac(f.a), fmtFrac(f.b), fmtDeltaPts(f.a, f.b), f.log_change === null ? 'n/a' : f.log_change.toFixed(4), f.share === null || f.share === undefined ? '' : `${Math.round(f.share * 100)} %`];
        }),
      },
    });
  }
  const changed = c.kernels.filter((k) => k.change_ns !== null);
  if (changed.length) {
    const per = c.kernel_time === 'per_iteration' ? 'per iteration' : 'per second of measured time';
    const left = 330;
    const half = (W - left - 170) / 2;
    const mid = left + half;
    const rowH = 28;
    const height = 50 + changed.length * rowH + 20;
    const title = `Kernels: change of time ${per}`;
    const desc = changed.slice(0, 5).map((k) => `${k.short_name || k.name} ${k.change_ns >= 0 ? '+' : '−'}${fmtTime(Math.abs(k.change_ns))}`).join(', ');
    const svg = chartRoot(W, height, title, desc);
    const g = s('g', { 'aria-hidden': 'true' });
    const max = Math.max(1, ...changed.map((k) => Math.abs(k.change_ns)));
    g.append(s('line', { x1: mid, x2: mid, y1: 30, y2: height - 10, stroke: COLORS.axis }));
    g.append(s('text', { x: mid - 8, y: 24, 'text-anchor': 'end', fill: COLORS.text, 'font-size': 13 }, '← less time in B (better)'));
    g.append(s('text', { x: mid + 8, y: 24, fill: COLORS.text, 'font-size': 13 }, 'more time in B (worse) →'));
    changed.forEach((k, i) => {
      const y = 36 + i * rowH;
      const d = k.change_ns;
      const w = (Math.abs(d) / max) * half;
      g.append(s('text', { x: left - 10, y: y + 17, 'text-anchor': 'end', fill: COLORS.text }, [clip(k.short_name || k.name, 36), s('title', {}, k.name)]));
      g.append(s('rect', { x: (d < 0 ? mid - w : mid).toFixed(1), y: y + 3, width: Math.max(1, w).toFixed(1), height: 18, fill: d <= 0 ? COLORS.better : COLORS.worse }));
      g.append(s('text', { x: mid + half + 14, y: y + 17, fill: COLORS.text }, `${d >= 0 ? '+' : '−'}${fmtTime(Math.abs(d))}`));
    });
    svg.append(g);
    out.push({
      id: 'compare-kernels',
      title,
      note: `Kernel time ${per}, so that captures of different lengths compare; the table adds the time per launch. A kernel in one run's top list only is listed without a bar.`,
      svg,
      table: {
        head: ['Kernel', `A ${per}`, `B ${per}`, 'Change', 'A per launch', 'B per launch', 'A launches', 'B launches'],
        rows: c.kernels.map((k) => [
          k.name,
          fmtTime(k.a_time_ns), fmtTime(k.b_time_ns),
          k.change_ns === null ? (k.a_time_ns === null ? 'only in B\'s top list' : 'only in A\'s top list') : `${k.change_ns >= 0 ? '+' : '−'}${fmtTime(Math.abs(k.change_ns))}`,
          fmtTime(k.a_mean_ns), fmtTime(k.b_mean_ns),
          k.a_count === null ? '—' : String(k.a_count), k.b_count === null ? '—' : String(k.b_count),
        ]),
      },
    });
  }
  return out;
}

/** The two runs side by side: what the comparison rests on. */
export function runsTable(c) {
  const row = (label, f) => [label, f(c.a), f(c.b)];
  const opt = (v, f) => (v === null || v === undefined ? '—' : f(v));
  return {
    head: ['', `A: ${c.a.label}`, `B: ${c.b.label}`],
    rows: [
      row('Measured time', (r) => fmtTime(r.elapsed_ns)),
      row('GPUs / MPI ranks', (r) => `${r.gpus} / ${r.ranks}`),
      row('Iterations', (r) => opt(r.iterations, String)),
      row('Time per iteration (median)', (r) => opt(r.time_per_iteration_ns, fmtTime)),
      row('Kernel launches', (r) => r.launches.toLocaleString()),
      row('Launches per iteration', (r) => opt(r.launches_per_iteration, (v) => v.toFixed(1))),
      row(c.model === 'device' ? 'Parallel efficiency' : 'MPI parallel efficiency', (r) => fmtFrac(r.parallel_efficiency)),
    ],
  };
}

