// Views: turn the converter's answers into DOM. Text goes in with textContent only (file and
// kernel names come from user data).

import { svgText, svgToPng } from './svg.js';

export const $ = (sel) => document.querySelector(sel);

export function h(tag, props = {}, children = []) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === 'text') e.textContent = v;
    else if (k === 'class') e.className = v;
    else if (v !== undefined && v !== null) e.setAttribute(k, v);
  }
  for (const c of [].concat(children)) if (c) e.append(c);
  return e;
}

export function fmtBytes(n) {
  if (n >= 1 << 30) return `${(n / (1 << 30)).toFixed(2)} GiB`;
  if (n >= 1 << 20) return `${(n / (1 << 20)).toFixed(1)} MiB`;
  if (n >= 1 << 10) return `${(n / (1 << 10)).toFixed(0)} KiB`;
  return `${n} B`;
}

function fmtDuration(ns) {
  if (ns >= 1e9) return `${(ns / 1e9).toFixed(3)} s`;
  return `${(ns / 1e6).toFixed(3)} ms`;
}

export function showError(message, hint, kind) {
  $('#error').hidden = false;
  $('#error').dataset.kind = kind || '';
  $('#error-message').textContent = message;
  $('#error-hint').textContent = hint ? `What to do: ${hint}` : '';
}

export function clearError() {
  $('#error').hidden = true;
}

/** `2026-05-28 20:26 UTC` from ns since the Unix epoch. */
export function fmtCapture(ns) {
  if (ns === null || ns === undefined) return '';
  const d = new Date(Number(BigInt(ns) / 1000000n));
  return `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** Rows of the file table shown before "show all". */
const FILE_ROWS = 12;

/**
 * The chosen files, always all of them (the ones that could not be read say why): each row a
 * `[data-testid="input-file"]`. `report`: the inspection, when it succeeded; `failed`: the
 * name of the file the inspection failed on, and the message.
 */
export function renderFiles(inputs, report, failed, onRemove, showAll) {
  const body = $('#files tbody');
  const info = (i) => (report && report.files[i]) || null;
  const rows = inputs.map((input, i) => {
    const f = info(i);
    const remove = h('button', { type: 'button', class: 'small', 'aria-label': `Remove ${input.name}`, text: 'Remove' });
    remove.addEventListener('click', () => onRemove(i));
    const bad = failed && failed.name === input.name;
    const cells = f
      ? [
        h('td', { text: fmtBytes(f.size || input.data.size || 0) }),
        h('td', { text: f.nsys_version || 'unknown (before 2023)' }),
        h('td', { text: f.hostname || '—' }),
        h('td', { text: fmtCapture(f.session_start_utc_ns) || '—' }),
        h('td', { text: f.ranks.length ? f.ranks.join(', ') : '—' }),
        h('td', { text: f.gpus.length ? f.gpus.join(', ') : 'none' }),
        h('td', { text: f.families.length ? f.families.join(', ') : 'none' }),
      ]
      : [
        h('td', { text: fmtBytes(input.data.size || 0) }),
        h('td', { colspan: '6', class: bad ? 'bad' : 'help', text: bad ? `could not be read: ${failed.message}` : (failed ? 'not read (another file failed)' : 'reading…') }),
      ];
    return h('tr', { 'data-testid': 'input-file', class: bad ? 'bad' : '' }, [h('th', { scope: 'row', text: input.name }), ...cells, h('td', {}, remove)]);
  });
  const shown = showAll || rows.length <= FILE_ROWS ? rows : rows.slice(0, FILE_ROWS - 2);
  body.replaceChildren(...shown);
  const more = $('#files-more');
  more.hidden = shown.length === rows.length;
  if (!more.hidden) {
    const all = h('button', { type: 'button', class: 'small', text: `Show all ${rows.length} files` });
    all.addEventListener('click', () => renderFiles(inputs, report, failed, onRemove, true));
    more.replaceChildren(h('span', { class: 'help', text: `${rows.length - shown.length} more files not shown.` }), all);
  }
  const t = report && report.trace;
  $('#trace-summary').textContent = t
    ? `One trace: ${t.processes} process(es) on ${t.hosts} host(s), ${t.threads} thread(s) and GPU stream(s), ${t.gpus.length} GPU(s)${t.gpus.length ? ` (${t.gpus.length > 8 ? `${t.gpus.slice(0, 8).join(', ')}, …` : t.gpus.join(', ')})` : ''}, ${fmtDuration(t.duration_ns)}, about ${t.record_estimate.toLocaleString()} records.`
    : '';
}

/** Warnings about the chosen files (duplicates, ranks claimed twice). */
export function renderInputWarnings(list) {
  $('#input-warnings').replaceChildren(...list.map((w) => h('li', { text: w })));
}

/** The definitions of every term a report uses, one click away. */
export function renderDefinitions(metrics) {
  $('#definitions-list').replaceChildren(...metrics.definitions.flatMap((d) => [h('dt', { text: d.term }), h('dd', { text: d.meaning })]));
}

/** A data table with at most `limit` rows until "show all" (then every row). `rows`: arrays of
 * cell texts, or `{cells, extra}` where `extra` is a node put in a last cell. */
export function renderTable(container, head, rows, limit = 50, caption = '') {
  const draw = (all) => {
    const shown = all || rows.length <= limit ? rows : rows.slice(0, limit);
    const table = h('table', { class: 'data' }, [
      caption ? h('caption', { class: 'sr-only', text: caption }) : null,
      h('thead', {}, h('tr', {}, head.map((x) => h('th', { scope: 'col', text: x })))),
      h('tbody', {}, shown.map((r) => {
        const cells = Array.isArray(r) ? r : r.cells;
        const tds = cells.map((x) => h('td', { text: x }));
        if (!Array.isArray(r) && r.extra) tds.push(h('td', {}, r.extra));
        return h('tr', {}, tds);
      })),
    ]);
    const parts = [h('div', { class: 'table-wrap' }, table)];
    if (shown.length < rows.length) {
      const all2 = h('button', { type: 'button', class: 'small', text: `Show all ${rows.length} rows` });
      all2.addEventListener('click', () => draw(true));
      parts.push(h('p', { class: 'actions' }, [h('span', { class: 'help', text: `${rows.length - shown.length} more rows.` }), all2]));
    }
    container.replaceChildren(...parts);
  };
  draw(false);
}

/** One checkbox per record family the files hold; the others are named, not offered. */
export function renderFamilies(report) {
  const present = new Set(report.files.flatMap((f) => f.families));
  const absent = report.all_families.filter((f) => !present.has(f));
  const boxes = report.all_families.filter((f) => present.has(f)).map((fam) => {
    const box = h('input', { type: 'checkbox', value: fam, name: 'family' });
    box.checked = true;
    return h('label', {}, [box, document.createTextNode(` ${fam}`)]);
  });
  const note = absent.length ? [h('p', { class: 'absent-list', text: `Not in these files: ${absent.join(', ')}.` })] : [];
  $('#families').replaceChildren(h('legend', { text: 'Record families to convert' }), ...boxes, ...note);
  // A payload config only means something where the files hold NVTX ranges.
  $('#nvtx-config-options').hidden = !present.has('nvtx');
}

/** NVTX range names found, and the choice of a range to measure the metrics in. */
export function renderNvtx(report) {
  const counts = new Map();
  for (const f of report.files) for (const n of f.nvtx_names) counts.set(n.name, (counts.get(n.name) || 0) + n.count);
  const names = [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  $('#nvtx-details').hidden = !names.length;
  $('#nvtx-list').replaceChildren(...names.map(([n, c]) => h('li', { text: `${n} (${c})` })));
  const sel = $('#opt-nvtx');
  sel.replaceChildren(new Option('the whole trace', ''), ...names.map(([n, c]) => new Option(`${n} (${c} instances)`, n)));
  sel.disabled = !names.length;
  // Cutting the trace matches a range's text exactly: offer the names that occur as such.
  const exact = new Set(report.files.flatMap((f) => f.nvtx_names.filter((n) => n.exact).map((n) => n.name)));
  const keep = $('#opt-keep');
  keep.replaceChildren(new Option('the whole run', ''), ...names.filter(([n]) => exact.has(n)).map(([n, c]) => new Option(`NVTX range “${n}” (${c})`, n)));
  $('#align-options').hidden = report.files.length < 2;
}

/** A download link for a blob; its URL is kept in `urls` to be revoked later. */
export function downloadUrl(blob, urls) {
  const u = URL.createObjectURL(blob);
  urls.push(u);
  return u;
}

/** Per link made lazy: what it downloads, until its URL is made. */
const lazyLinks = new WeakMap();

function makeLinkLive(ev) {
  const a = ev.currentTarget;
  const lazy = lazyLinks.get(a);
  if (!lazy) return;
  lazyLinks.delete(a);
  a.href = downloadUrl(lazy.make(), lazy.urls);
}

/** Makes the link `a` download the blob that `make()` gives, made and given its URL when the
 * link is about to be used (pointer over it, keyboard focus, or the click itself, before the
 * browser follows it): as results show, a URL per link cost the page about a millisecond each
 * and a chart's SVG text several, for downloads most users never take. */
export function lazyDownload(a, make, urls) {
  if (!a.dataset.lazyDownload) {
    a.dataset.lazyDownload = '1';
    for (const type of ['pointerenter', 'focus', 'click']) a.addEventListener(type, makeLinkLive, true);
  }
  lazyLinks.set(a, { make, urls });
  // A link with an href is focusable and announced as a link; this one is replaced on use.
  a.href = '#download';
}

export function renderResults(result, secs, urls) {
  $('#results').hidden = false;
  const a = $('#bundle');
  lazyDownload(a, () => result.bundle.blob, urls);
  a.download = result.bundle.name;
  a.textContent = `Download the bundle (${result.bundle.name})`;
  $('#bundle-size').textContent = fmtBytes(result.bundle.blob.size);
  renderJson(result.json, urls);
  $('#files-out').replaceChildren(
    ...result.files.flatMap((f, i) => {
      const a = h('a', { download: f.name, 'data-type': f.type, text: `${f.name} (${fmtBytes(f.blob.size)})` });
      lazyDownload(a, () => f.blob, urls);
      return [i ? document.createTextNode(' · ') : null, a];
    }).filter(Boolean),
  );
  const s = result.summary;
  const counts = Object.entries(s.counts).map(([k, v]) => `${k} ${v.toLocaleString()}`).join(', ');
  $('#result-summary').textContent = `${s.records.toLocaleString()} records (${counts}) in ${secs.toFixed(2)} s.`;
  $('#warnings').replaceChildren(...groupWarnings(s.warnings).map((w) => h('li', { text: w })));
}

/** The Chrome/Perfetto JSON's download, where the conversion made one; else how to get one. */
function renderJson(json, urls) {
  $('#json-line').hidden = !json;
  if (!json) {
    $('#json-help').textContent = 'For Perfetto UI or chrome://tracing: tick “Also a Chrome/Perfetto JSON” under Options and convert again.';
    return;
  }
  const a = $('#json-out');
  lazyDownload(a, () => json.blob, urls);
  a.download = json.name;
  a.textContent = `Download the Perfetto JSON (${json.name})`;
  $('#json-size').textContent = fmtBytes(json.blob.size);
  const events = Object.values(json.stats.complete).reduce((x, y) => x + y, 0);
  $('#json-help').textContent = `The same trace in the Chrome Trace Event Format (${events.toLocaleString()} events, ${json.stats.flows.toLocaleString()} arrows): open it in ui.perfetto.dev or chrome://tracing.`;
}

/** Warnings as `FILE: WHAT (n times)`, those saying the same of several files in one line. */
function groupWarnings(list) {
  const byWhat = new Map();
  for (const w of list) {
    const m = /^(.+?\.(?:sqlite3?|db)): (.*)$/.exec(w);
    const [file, what] = m ? [m[1], m[2]] : [null, w];
    if (!byWhat.has(what)) byWhat.set(what, []);
    if (file) byWhat.get(what).push(file);
  }
  return [...byWhat.entries()].map(([what, files]) => {
    if (files.length <= 1) return files.length ? `${files[0]}: ${what}` : what;
    const names = files.length > 3 ? `${files.slice(0, 3).join(', ')} and ${files.length - 3} more` : files.join(', ');
    return `In ${files.length} files (${names}): ${what}`;
  });
}

/** Chart figures, each with its data table and SVG/PNG downloads. */
export function renderCharts(container, charts, urls) {
  container.replaceChildren(
    ...charts.map((c) => {
      const fig = h('figure', { class: 'chart-figure', id: `fig-${c.id}`, 'data-chart': c.id });
      const caption = h('figcaption', {}, [h('span', { class: 'chart-title', text: c.title })]);
      const note = c.note ? h('p', { class: 'chart-note', text: c.note }) : null;
      const svgLink = h('a', { class: 'button small', download: `${c.id}.svg`, text: 'SVG' });
      lazyDownload(svgLink, () => new Blob([svgText(c.svg)], { type: 'image/svg+xml' }), urls);
      svgLink.setAttribute('aria-label', `Download “${c.title}” as SVG`);
      const png = h('button', { type: 'button', class: 'small', text: 'PNG', 'aria-label': `Download “${c.title}” as PNG` });
      png.addEventListener('click', async () => {
        try {
          const blob = await svgToPng(c.svg, 2);
          const a = h('a', { download: `${c.id}.png`, href: downloadUrl(blob, urls) });
          document.body.append(a);
          a.click();
          a.remove();
        } catch (e) {
          showError(`The PNG could not be made: ${e.message}`, 'Use the SVG download instead.', 'internal');
        }
      });
      caption.append(h('span', { class: 'chart-tools' }, [svgLink, png]));
      const scroller = h('div', { class: 'chart-scroll' }, c.svg);
      const table = h('table', { class: 'data' }, [
        h('thead', {}, h('tr', {}, c.table.head.map((x) => h('th', { scope: 'col', text: x })))),
        h('tbody', {}, c.table.rows.map((r) => h('tr', {}, r.map((x) => h('td', { text: x }))))),
      ]);
      const details = h('details', {}, [h('summary', { text: 'Data table' }), h('div', { class: 'table-wrap' }, table)]);
      fig.append(caption, ...(note ? [note] : []), scroller, details);
      return fig;
    }),
  );
}
