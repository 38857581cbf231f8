// Views: turn the converter's answers into DOM. Text goes in with textContent only (file and
// kernel names come from user data).

import { svgText, svgToPng } from './svg.js';

export const $ = (sel) => document.querySelector(sel);

function h(tag, props = {}, children = []) {
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

/** The table of chosen files: what each holds, which rank/host it is. */
export function renderFiles(report, inputs, onRemove) {
  const body = $('#files tbody');
  body.replaceChildren(
    ...report.files.map((f, i) => {
      const ranks = f.ranks.length ? f.ranks.join(', ') : '—';
      const remove = h('button', { type: 'button', class: 'small', 'aria-label': `Remove ${f.name}`, text: 'Remove' });
      remove.addEventListener('click', () => onRemove(i));
      return h('tr', {}, [
        h('th', { scope: 'row', text: f.name }),
        h('td', { text: fmtBytes(f.size || (inputs[i] && inputs[i].data.size) || 0) }),
        h('td', { text: f.nsys_version || 'unknown (before 2023)' }),
        h('td', { text: f.hostname || '—' }),
        h('td', { text: ranks }),
        h('td', { text: f.gpus.length ? f.gpus.join(', ') : 'none' }),
        h('td', { text: f.families.length ? f.families.join(', ') : 'none' }),
        h('td', {}, remove),
      ]);
    }),
  );
  const t = report.trace;
  $('#trace-summary').textContent = t
    ? `One trace: ${t.processes} process(es) on ${t.hosts} host(s), ${t.threads} thread(s) and GPU stream(s), ${t.gpus.length} GPU(s)${t.gpus.length ? ` (${t.gpus.join(', ')})` : ''}, ${fmtDuration(t.duration_ns)}, about ${t.record_estimate.toLocaleString()} records.`
    : '';
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
  $('#warnings').replaceChildren(...s.warnings.map((w) => h('li', { text: w })));
}

/** Chart figures, each with its data table and SVG/PNG downloads. */
export function renderCharts(container, charts, urls) {
  container.replaceChildren(
    ...charts.map((c) => {
      const fig = h('figure', { class: 'chart-figure', id: `fig-${c.id}`, 'data-chart': c.id });
      const caption = h('figcaption', {}, [h('span', { class: 'chart-title', text: c.title })]);
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
      fig.append(caption, scroller, details);
      return fig;
    }),
  );
}
