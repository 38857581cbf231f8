// The timeline's layout, apart from drawing: which lines show (rows grouped by node, process or
// rank, and GPU; groups folded into one line each), and the time axis' ticks.

/** Rows shown unfolded at first when a view has at most this many; beyond, processes fold. */
export const UNFOLDED_ROWS = 40;

function processLabel(row) {
  return row.command ? `${row.process} (${row.command})` : row.process;
}

function gpuShort(gpu) {
  return gpu.replace(/ \(.*\)$/, '');
}

/**
 * The lines of a view: `rows` the trace's rows, `shown` the indices of those with anything in
 * the view, `expanded` the user's fold choices by group key (absent: the default). A line is
 * `{ key, label, title, depth, group, expanded, slot, rows }`: `slot` lines draw a bar of their
 * `rows` folded into one; unfolded group headers only name their group.
 */
export function foldedLines(rows, shown, expanded) {
  const unfold = shown.length <= UNFOLDED_ROWS;
  const nodes = new Map();
  for (const i of shown) {
    const r = rows[i];
    if (!nodes.has(r.node)) nodes.set(r.node, new Map());
    const procs = nodes.get(r.node);
    const pk = `${r.node}|${r.process}|${r.command || ''}`;
    if (!procs.has(pk)) procs.set(pk, []);
    procs.get(pk).push(i);
  }
  const lines = [];
  const manyNodes = nodes.size > 1;
  const open = (key, fallback) => (expanded.has(key) ? expanded.get(key) : fallback);
  for (const [node, procs] of nodes) {
    let depth = 0;
    // A node of one process (one rank per node) needs no header: its process line names it.
    if (manyNodes && procs.size > 1) {
      const key = `n|${node}`;
      const all = [...procs.values()].flat();
      const isOpen = open(key, true);
      lines.push({ key, label: node, title: node, depth, group: true, expanded: isOpen, slot: !isOpen, rows: all });
      if (!isOpen) continue;
      depth = 1;
    }
    for (const [pk, members] of procs) {
      const first = rows[members[0]];
      const label = processLabel(first);
      const title = manyNodes ? `${node} › ${label}` : label;
      const single = members.length === 1;
      if (single) {
        const r = rows[members[0]];
        const name = r.gpu ? `${gpuShort(r.gpu)} ${r.label}` : r.label;
        // One row: the process's id and the row's name make a short label; the title says all.
        lines.push({ key: `r|${members[0]}`, label: `${r.process} · ${name}`, title: `${title} › ${name}`, depth, group: false, expanded: false, slot: true, rows: members });
        continue;
      }
      const isOpen = open(pk, unfold);
      lines.push({
        key: pk, label: isOpen ? label : `${label} (${members.length} rows)`, title, depth, group: true, expanded: isOpen, slot: !isOpen, rows: members,
      });
      if (!isOpen) continue;
      const gpus = new Map();
      for (const i of members) {
        const r = rows[i];
        if (!r.gpu) {
          lines.push({ key: `r|${i}`, label: r.label, title: `${title} › ${r.label}`, depth: depth + 1, group: false, expanded: false, slot: true, rows: [i] });
          continue;
        }
        if (!gpus.has(r.gpu)) gpus.set(r.gpu, []);
        gpus.get(r.gpu).push(i);
      }
      for (const [gpu, streams] of gpus) {
        const g = gpuShort(gpu);
        if (streams.length === 1) {
          const r = rows[streams[0]];
          lines.push({ key: `r|${streams[0]}`, label: `${g} ${r.label}`, title: `${title} › ${gpu} ${r.label}`, depth: depth + 1, group: false, expanded: false, slot: true, rows: streams });
          continue;
        }
        const gk = `${pk}|${gpu}`;
        const gOpen = open(gk, true);
        lines.push({
          key: gk, label: gOpen ? gpu : `${g} (${streams.length} streams)`, title: `${title} › ${gpu}`, depth: depth + 1, group: true, expanded: gOpen, slot: !gOpen, rows: streams,
        });
        if (!gOpen) continue;
        for (const i of streams) {
          const r = rows[i];
          lines.push({ key: `r|${i}`, label: r.label, title: `${title} › ${gpu} ${r.label}`, depth: depth + 2, group: false, expanded: false, slot: true, rows: [i] });
        }
      }
    }
  }
  return lines;
}

/** A tick step of 1, 2 or 5 × 10^k ns giving at most about `count` ticks over `span`. */
export function pickTick(span, count) {
  const raw = Math.max(1, span / Math.max(1, count));
  const p = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * p).find((x) => x >= raw);
}

/** Time `t` as a tick label: the unit of the whole run, as many decimals as the step needs. */
export function tickLabel(t, step, total) {
  const [unit, name] = total >= 1e9 ? [1e9, 's'] : total >= 1e6 ? [1e6, 'ms'] : total >= 1e3 ? [1e3, 'µs'] : [1, 'ns'];
  const decimals = Math.min(9, Math.max(0, Math.ceil(Math.log10(unit / step) - 1e-9)));
  return `${(t / unit).toFixed(decimals)} ${name}`;
}
