// The page's controller: holds what the user chose, asks the converter (through bridge.js) and
// hands results to the views. No wasm and no worker messages here.
//
// Selection rules (nothing joins silently): a pick in the main chooser, a drop or "Try with a
// sample" replaces the chosen files and starts a new run; "Add files to this run" adds to it;
// "Choose run B…" converts other files as a second run and compares. Every chosen file stays
// listed, also after an error.

import {
  iterationCharts, iterationNote, iterationRows, rankCharts, rankNote, rankRows, runsTable, verdictCharts,
} from './analysis.js';
import { Converter, CoreError } from './bridge.js';
import { compareBreakdownChart, overviewCharts } from './charts.js';
import { fmtTime } from './svg.js';
import { TimelineView } from './timeline.js';
import {
  $, clearError, downloadUrl, fmtBytes, fmtCapture, h, renderCharts, renderDefinitions, renderFamilies, renderFiles,
  renderInputWarnings, renderNvtx, renderResults, renderTable, showError,
} from './ui.js';

const converter = new Converter();
const timeline = new TimelineView($('#timeline'), converter);

/** How often the conversion's progress is shown, at most (ms). */
const PROGRESS_MS = 150;

/**
 * @typedef {{ label: string, metrics: object, result?: object }} Run
 * @type {{ inputs: {name: string, data: Blob}[], report: object|null, failed: {name: string, message: string}|null,
 *          result: object|null, runs: Run[], current: number, urls: string[] }}
 */
const state = { inputs: [], report: null, failed: null, result: null, runs: [], current: -1, urls: [], onDisk: null, nvtxConfig: null };

function setBusy(busy) {
  $('#convert').disabled = busy;
  $('#sample').disabled = busy;
  $('#file').disabled = busy;
  $('#add-files').disabled = busy;
  $('#compare-input').disabled = busy;
  $('#progress').hidden = !busy;
}

function fail(e, context) {
  if (e instanceof CoreError) {
    showError(e.message, e.hint, e.kind);
  } else {
    showError(`${context}: ${e && e.message ? e.message : e}`, 'Reload the page and try again; if it persists, please report it.', 'internal');
    console.error(e);
  }
}

/** Hides what belongs to an earlier selection's conversion (it stays a run to compare with). */
function hideOutputs() {
  for (const id of ['#results', '#charts', '#iterations', '#ranks']) $(id).hidden = true;
  timeline.hide();
}

/** A name telling runs apart: the file (and how many more), the host, the capture time.
 * `sources`: `{hostname, session_start_utc_ns}` per file, where known (inspection, summary). */
function runLabel(inputs, sources) {
  const files = inputs.length > 1 ? `${inputs[0].name} + ${inputs.length - 1} more` : inputs[0].name;
  const info = sources || [];
  const hosts = [...new Set(info.map((f) => f.hostname).filter(Boolean))];
  const starts = info.map((f) => f.session_start_utc_ns).filter((x) => x !== null && x !== undefined);
  const when = starts.length ? fmtCapture(Math.min(...starts)) : '';
  const parts = [files, hosts.length > 2 ? `${hosts.length} hosts` : hosts.join(', '), when].filter(Boolean);
  let label = parts.join(' · ');
  const taken = new Set(state.runs.map((r) => r.label));
  for (let k = 2; taken.has(label); k++) label = `${parts.join(' · ')} (${k})`;
  return label;
}

/** Duplicates among the chosen files (the same file twice), found before reading them; and
 * captures made far apart, which are two runs rather than the ranks of one. */
function selectionWarnings(inputs, report) {
  const seen = new Map();
  const out = [];
  for (const i of inputs) {
    const f = i.data;
    const key = `${i.name}|${f.size}|${f.lastModified ?? ''}`;
    if (seen.has(key)) out.push(`${i.name} is chosen twice: it would count as two processes. Remove one.`);
    seen.set(key, true);
  }
  const bytes = inputs.reduce((a, i) => a + (i.data.size || 0), 0);
  if (state.onDisk === false && bytes > 512 * 2 ** 20) {
    out.push(`This browser gives the page no private storage, so the outputs of these ${fmtBytes(bytes)} will be held in memory: a tab may run out of it. The prvsight command line converts any size.`);
  }
  const starts = report ? report.files.map((f) => f.session_start_utc_ns).filter((x) => x !== null && x !== undefined) : [];
  if (starts.length > 1 && report.trace) {
    const spread = Math.max(...starts) - Math.min(...starts);
    // Ranks of one run start within seconds of each other; captures far apart share no time.
    if (spread > 10e9 && spread > 0.1 * report.trace.duration_ns) {
      out.push(`These captures started ${(spread / 60e9).toFixed(1)} minutes apart: they look like separate runs, not the ranks of one. To compare two runs, convert one and choose the other under “Compare with another run”.`);
    }
  }
  return out;
}

function showSelection() {
  $('#inspect').hidden = !state.inputs.length;
  $('#run-name').textContent = state.inputs.length ? `Run: ${runLabel(state.inputs, state.report && state.report.files)}` : '';
  renderFiles(state.inputs, state.report, state.failed, (i) => {
    state.inputs.splice(i, 1);
    inspect();
  });
  renderInputWarnings([...selectionWarnings(state.inputs, state.report), ...((state.report && state.report.warnings) || [])]);
  $('#options').hidden = !state.report;
}

async function inspect() {
  clearError();
  hideOutputs();
  state.report = null;
  state.failed = null;
  showSelection();
  if (!state.inputs.length) return;
  $('#inspect').dataset.state = 'reading';
  // Discovery reads every table once: on multi-GB exports that takes a while.
  setBusy(true);
  $('#bar').removeAttribute('value');
  $('#progress-h').textContent = 'Reading the files';
  $('#progress-text').textContent = `Looking at what ${state.inputs.length === 1 ? state.inputs[0].name : `${state.inputs.length} files`} hold${state.inputs.length === 1 ? 's' : ''}…`;
  const started = performance.now();
  delete $('#inspect').dataset.seconds;
  try {
    state.report = await converter.inspect(state.inputs);
  } catch (e) {
    setBusy(false);
    fail(e, 'Reading the files failed');
    // The file the error names stays listed, marked, for the user to remove or replace.
    const named = e instanceof CoreError ? state.inputs.find((i) => e.message.startsWith(`${i.name}:`)) : null;
    state.failed = { name: named ? named.name : state.inputs[0].name, message: e.message };
    showSelection();
    $('#inspect').dataset.state = 'failed';
    return;
  }
  setBusy(false);
  const r = state.report;
  showSelection();
  renderFamilies(r);
  renderNvtx(r);
  if (r.problem) showError(r.problem.message, r.problem.hint, r.problem.kind);
  $('#convert').disabled = !!r.problem;
  // From the files chosen to what they hold shown (the benchmark reads it, as it reads the
  // conversion's): the inspection is the conversion's discovery, which the conversion reuses.
  $('#inspect').dataset.seconds = ((performance.now() - started) / 1000).toFixed(3);
  $('#inspect').dataset.state = 'done';
  readAhead();
}

/** The reading of the inspected files opened now, with the options as they are, while the user
 * looks at what the files hold (bridge.js `readAhead`); again whenever an option changes. */
function readAhead() {
  if (state.report && !state.report.problem && state.inputs.length) converter.readAhead(state.inputs, options());
}

/** Exports and metrics.json files of a pick, apart. */
function split(files) {
  const list = [...files];
  return {
    json: list.filter((f) => /\.json$/i.test(f.name)),
    exports: list.filter((f) => !/\.json$/i.test(f.name)).map((f) => ({ name: f.name, data: f })),
  };
}

/** A new pick: it replaces the chosen files (a metrics.json becomes a run of its own). */
function chooseFiles(files) {
  const { json, exports } = split(files);
  for (const f of json) addMetricsFile(f);
  if (!exports.length) return;
  state.inputs = exports;
  inspect();
}

/** "Add files to this run": more ranks of the same run. */
function addFiles(files) {
  const { json, exports } = split(files);
  for (const f of json) addMetricsFile(f);
  if (!exports.length) return;
  state.inputs = [...state.inputs, ...exports];
  inspect();
}

function options(overrides = {}) {
  const present = [...document.querySelectorAll('#families input[type=checkbox]')];
  const chosen = present.filter((b) => b.checked).map((b) => b.value);
  const keep = $('#opt-keep').value;
  const instance = $('#opt-keep-instance').value.trim();
  // A config picked for earlier files is left out where these hold no NVTX (its fieldset hidden).
  const nvtxConfig = $('#nvtx-config-options').hidden ? null : state.nvtxConfig;
  return {
    keep_nvtx_range: keep ? (instance ? `${keep}:${instance}` : keep) : null,
    keep_window: $('#opt-window').value.trim() || null,
    align: state.inputs.length > 1 ? $('#opt-align').value : null,
    families: chosen.length === present.length ? null : chosen,
    gzip: $('#opt-gzip').checked,
    metrics: $('#opt-metrics').checked,
    json: $('#opt-json').checked,
    nvtx_range: $('#opt-nvtx').value || null,
    nccl_as: $('#opt-nccl').value,
    nvtx_config: nvtxConfig ? nvtxConfig.text : null,
    nvtx_config_name: nvtxConfig ? nvtxConfig.name : null,
    elapsed: $('#opt-elapsed').value,
    iterations: $('#opt-iterations').value,
    // `?timeline=off` in the page's address leaves the timeline out (to measure what it costs).
    timeline: new URLSearchParams(location.search).get('timeline') !== 'off',
    ...overrides,
  };
}

function revokeUrls() {
  for (const u of state.urls) URL.revokeObjectURL(u);
  state.urls = [];
}

/** Runs a conversion with the progress shown; gives its result (or throws). */
async function runConversion(inputs, opts, heading) {
  setBusy(true);
  const bar = $('#bar');
  const text = $('#progress-text');
  $('#progress-h').textContent = heading;
  bar.removeAttribute('value');
  text.textContent = 'Starting…';
  // The progress shown at most every PROGRESS_MS (and at each new phase): the workers report
  // every batch, and each text or bar change costs the page a style, layout and paint on the
  // cores the conversion runs on (a 10 MB conversion reports ~90 times in ~0.3 s).
  let shownAt = -Infinity;
  let shownPhase = null;
  const started = performance.now();
  try {
    return await converter.convert(inputs, opts, (p) => {
      const now = performance.now();
      if (p.phase === shownPhase && now - shownAt < PROGRESS_MS) return;
      shownAt = now;
      shownPhase = p.phase;
      if (p.phase === 'converting' && p.records_estimate > 0) {
        text.textContent = progressText(p, now - started);
        bar.value = Math.min(99, (100 * p.records_done) / Math.max(p.records_estimate, p.records_done));
      } else {
        bar.removeAttribute('value');
        text.textContent = p.phase === 'sorting' ? 'Reading and sorting the tables…' : `${p.phase[0].toUpperCase()}${p.phase.slice(1)}…`;
      }
    });
  } finally {
    setBusy(false);
  }
}

/** `Converting: 1,234,567 of about 2,000,000 records, about 12 s left`: the estimate may be
 * passed (it counts the tables' rows and the links they make, not the records cut away or
 * added), so past it the count goes on with no percentage rather than past 100 %. */
function progressText(p, elapsedMs) {
  const done = p.records_done;
  const estimate = p.records_estimate;
  if (done >= estimate) return `Converting: ${done.toLocaleString()} records, more than the estimate of ${estimate.toLocaleString()}; finishing…`;
  const pct = (100 * done) / estimate;
  // The rate so far gives the time left, once there is enough of it to go on.
  const left = done > 0 && elapsedMs > 1000 ? ((estimate - done) * elapsedMs) / done / 1000 : null;
  const leftText = left === null ? '' : left < 1.5 ? ', about a second left' : `, about ${left < 90 ? `${Math.round(left)} s` : `${Math.round(left / 60)} min`} left`;
  return `Converting: ${done.toLocaleString()} of about ${estimate.toLocaleString()} records (${pct.toFixed(0)} %)${leftText}`;
}

/** Where the outputs are kept, after a conversion: on disk (how much; removable) or in memory. */
async function showStorage(result) {
  const p = $('#storage');
  if (!result.onDisk) {
    p.textContent = 'The outputs are held in this page\'s memory (this browser gives pages no private storage here): download them before converting more.';
    $('#remove-outputs').hidden = true;
    return;
  }
  const used = await converter.storageUsed();
  p.textContent = `The trace is kept on disk in this browser's private storage for this site (${fmtBytes(used || 0)} for this visit's outputs), not in memory; it is removed when you next open this page.`;
  $('#remove-outputs').hidden = false;
}

/** Where the user chose to save the bundle (File System Access API), asked before converting
 * while the click still counts as the user's; null: not asked, or the user closed the dialog
 * (then `cancelled`). */
async function pickDestination(inputs) {
  if (!$('#opt-save-to').checked || !globalThis.showSaveFilePicker) return { handle: null, cancelled: false };
  const stem = inputs[0].name.replace(/\.[^.]*$/, '');
  try {
    const handle = await globalThis.showSaveFilePicker({
      suggestedName: `${stem}.zip`,
      types: [{ description: 'Paraver bundle', accept: { 'application/zip': ['.zip'] } }],
    });
    return { handle, cancelled: false };
  } catch (e) {
    if (e && e.name === 'AbortError') return { handle: null, cancelled: true };
    throw e;
  }
}

/** Writes the bundle to the file the user chose, streaming it from where it is kept. */
async function saveTo(handle, bundle) {
  const out = await handle.createWritable();
  await bundle.stream().pipeTo(out);
  return handle.name;
}

/** Converts the chosen files (as they are, or only a window of them: `overrides`, `label`). */
async function convert(overrides = {}, label = null) {
  clearError();
  // Asked only when wanted: awaiting nothing would let a Cancel clicked at once find no conversion.
  let destination = { handle: null, cancelled: false };
  if ($('#opt-save-to').checked) {
    try {
      destination = await pickDestination(state.inputs);
    } catch (e) {
      fail(e, 'The file to save to could not be chosen');
      return;
    }
    if (destination.cancelled) return;
  }
  revokeUrls();
  hideOutputs();
  delete $('#results').dataset.seconds;
  const started = performance.now();
  try {
    const result = await runConversion(state.inputs, options(overrides), '3. Converting');
    state.result = result;
    const secs = (performance.now() - started) / 1000;
    renderResults(result, secs, state.urls);
    if (result.timeline) timeline.show(result.timeline);
    else timeline.hide();
    showStorage(result);
    if (destination.handle) {
      const name = await saveTo(destination.handle, result.bundle.blob);
      $('#saved-to').textContent = `Saved to ${name}.`;
    } else {
      $('#saved-to').textContent = '';
    }
    if (result.metrics) {
      const run = { label: label || runLabel(state.inputs, state.report && state.report.files), metrics: result.metrics, result, inputs: state.inputs };
      state.runs.push(run);
      state.current = state.runs.length - 1;
      showAnalysis(run);
      updateCompare();
    } else {
      $('#charts').hidden = false;
      $('#chart-list').replaceChildren();
      $('#hist-pick').hidden = true;
      $('#charts-note').textContent = 'No charts: the efficiency metrics were switched off in the options.';
    }
    // From the click to results and charts shown, as the page measures it (the benchmark,
    // scripts/bench/web.mjs, reads it: a test harness adds its own latency to what it times).
    $('#results').dataset.seconds = ((performance.now() - started) / 1000).toFixed(3);
  } catch (e) {
    fail(e, 'The conversion failed');
  }
}

/** Everything a run's metrics show: overview charts, iterations, ranks. */
function showAnalysis(run) {
  showCharts(run.metrics);
  showIterations(run);
  showRanks(run.metrics);
}

function measuredText(m) {
  const w = m.window;
  if (w.nvtx_range) return `the NVTX range “${w.nvtx_range.name}” (${w.instances} instance(s))`;
  if (w.mpi_start_ns !== null && w.mpi_start_ns !== undefined) return 'TALP\'s window, from the end of MPI_Init to the start of MPI_Finalize';
  return 'the whole trace';
}

function showCharts(metrics, kernel) {
  $('#charts').hidden = false;
  renderDefinitions(metrics);
  const hist = $('#hist-kernel');
  if (kernel === undefined) {
    hist.replaceChildren(...metrics.histograms.map((x) => new Option(`${x.short_name} (${x.count} launches)`, x.name)));
    kernel = metrics.histograms.length ? metrics.histograms[0].name : null;
  }
  const charts = overviewCharts(metrics, kernel);
  $('#hist-pick').hidden = !charts.some((c) => c.id === 'histogram');
  $('#charts-note').textContent = charts.length
    ? `Measured over ${measuredText(metrics)}. Each chart says what it shows and what to look at next; the terms are defined below.`
    : `No GPU activity in this trace, so no GPU charts: see the ranks${metrics.iterations && metrics.iterations.items.length ? ' and the iterations' : ''} below.`;
  renderCharts($('#chart-list'), charts, state.urls);
}

function showIterations(run) {
  const m = run.metrics;
  const section = $('#iterations');
  section.hidden = false;
  const items = (m.iterations && m.iterations.items) || [];
  section.dataset.count = String(items.length);
  $('#iterations-note').textContent = iterationNote(m);
  renderCharts($('#iterations-charts'), iterationCharts(m), state.urls);
  if (!items.length) {
    $('#iterations-table').replaceChildren();
    return;
  }
  const { head, rows } = iterationRows(m);
  // Keeping one iteration converts that window of the chosen files again, with every event
  // (not for a metrics.json added from an earlier bundle, nor for run B).
  const canKeep = run.inputs && run.inputs === state.inputs;
  renderTable($('#iterations-table'), canKeep ? [...head, 'Zoom'] : head, rows.map((r) => {
    if (!canKeep) return r.cells;
    const show = h('button', { type: 'button', class: 'small', 'data-show-iteration': String(r.item.index), text: 'Show in timeline' });
    show.addEventListener('click', () => showIteration(r.item));
    const b = h('button', { type: 'button', class: 'small', 'data-iteration': String(r.item.index), text: 'Keep only this iteration' });
    b.addEventListener('click', () => keepIteration(run, r.item));
    return { cells: r.cells, extra: h('span', { class: 'buttons' }, [show, ' ', b]) };
  }), 50, 'Iterations');
}

/** Zooms the timeline onto an iteration of the run it shows. */
function showIteration(item) {
  const off = state.result && state.result.timeline ? state.result.timeline.offset_ns : 0;
  timeline.zoomTo(item.start_ns - off, item.end_ns - off);
}

/** Converts the chosen files again, keeping only [start, end) of the timeline, with every event. */
function keepRange(start, end) {
  const off = state.result && state.result.timeline ? state.result.timeline.offset_ns : 0;
  const window = `${Math.round(start + off)}ns..${Math.round(end + off)}ns`;
  $('#opt-keep').value = '';
  $('#opt-window').value = window;
  const label = `${runLabel(state.inputs, state.report && state.report.files)} · ${fmtTime(end - start)} kept`;
  convert({ keep_nvtx_range: null, keep_window: window, families: null, metrics_window: window, iterations: 'none' }, label);
}

/** Converts the run's files again, keeping only one iteration's time, with every event. */
function keepIteration(run, item) {
  const window = `${item.start_ns}ns..${item.end_ns}ns`;
  $('#opt-keep').value = '';
  $('#opt-window').value = window;
  // Its metrics measure that window too; its iterations would be the whole run's again.
  convert({ keep_nvtx_range: null, keep_window: window, families: null, metrics_window: window, iterations: 'none' }, `${run.label} · iteration ${item.index}`);
}

function showRanks(m) {
  const section = $('#ranks');
  const ranks = m.ranks || [];
  // One process without MPI has nobody to compare with.
  const shown = ranks.length >= 2 || (m.host && ranks.length >= 1);
  section.hidden = !shown;
  section.dataset.count = String(shown ? ranks.length : 0);
  if (!shown) return;
  $('#ranks-note').textContent = rankNote(m);
  renderCharts($('#ranks-charts'), rankCharts(m), state.urls);
  const { head, rows } = rankRows(m);
  renderTable($('#ranks-table'), head, rows, 32, 'Ranks');
}

function addMetricsFile(file) {
  file.text().then((t) => {
    let m;
    try {
      m = JSON.parse(t);
    } catch {
      showError(`${file.name}: not JSON`, 'Choose the metrics.json of a prvsight bundle.', 'usage');
      return;
    }
    if (!m || ![1, 2].includes(m.schema_version) || !m.efficiency || !m.breakdown || !m.kernels) {
      showError(`${file.name}: not a prvsight metrics report (schema version 1 or 2)`, 'Choose the metrics.json of a prvsight bundle.', 'usage');
      return;
    }
    let label = `${file.name.replace(/\.json$/i, '')} (metrics.json)`;
    const taken = new Set(state.runs.map((r) => r.label));
    for (let k = 2; taken.has(label); k++) label = `${file.name.replace(/\.json$/i, '')} (metrics.json ${k})`;
    state.runs.push({ label, metrics: m });
    updateCompare(state.runs.length - 1);
  });
}

/** "Choose run B…": converts those files (or reads that metrics.json) and compares. */
async function chooseRunB(files) {
  const { json, exports } = split(files);
  for (const f of json) addMetricsFile(f);
  if (!exports.length) return;
  clearError();
  try {
    const result = await runConversion(exports, options({ metrics: true }), 'Converting run B');
    const label = runLabel(exports, result.summary.trace.sources);
    state.runs.push({ label, metrics: result.metrics, result, inputs: exports });
    updateCompare(state.runs.length - 1);
  } catch (e) {
    fail(e, 'Converting run B failed');
  }
}

/** The run selectors: with `b` (a run just added for comparison), A is the current run and B
 * that one; else the last two runs, the latest as B. */
function updateCompare(b) {
  const section = $('#compare');
  section.hidden = state.runs.length < 1;
  $('#run-pickers').hidden = state.runs.length < 2;
  const sa = $('#run-a');
  const sb = $('#run-b');
  const opts = () => state.runs.map((r, i) => new Option(r.label, String(i)));
  sa.replaceChildren(...opts());
  sb.replaceChildren(...opts());
  const n = state.runs.length;
  const useB = b !== undefined && state.current >= 0 && state.current !== b;
  sa.value = String(useB ? state.current : Math.max(0, n - 2));
  sb.value = String(useB ? b : n - 1);
  drawCompare();
}

async function drawCompare() {
  const list = $('#compare-list');
  const verdict = $('#verdict');
  const notes = $('#compare-notes');
  const ra = state.runs[Number($('#run-a').value)];
  const rb = state.runs[Number($('#run-b').value)];
  verdict.hidden = true;
  notes.replaceChildren();
  if (!ra || !rb || ra === rb) {
    list.replaceChildren(h('p', { class: 'help', text: 'Choose run B above (its exports, or a metrics.json) to compare it with this one.' }));
    return;
  }
  let c;
  try {
    c = await converter.compare({ label: ra.label, metrics: ra.metrics }, { label: rb.label, metrics: rb.metrics });
  } catch (e) {
    list.replaceChildren(h('p', { class: 'help', text: `These two runs cannot be compared: ${e.message}` }));
    return;
  }
  verdict.hidden = false;
  verdict.textContent = c.verdict.summary;
  verdict.dataset.direction = c.verdict.direction;
  verdict.dataset.mainFactor = c.verdict.main_factor || '';
  notes.replaceChildren(...c.scale.map((x) => h('li', { text: x })));
  const charts = verdictCharts(c);
  if (c.model === 'device') charts.push(compareBreakdownChart(ra.metrics, rb.metrics, ra.label, rb.label));
  renderCharts(list, charts, state.urls);
  const t = runsTable(c);
  const wrap = h('div', { class: 'runs-table' });
  renderTable(wrap, t.head, t.rows, 20, 'The two runs');
  list.prepend(wrap);
}

async function loadSample() {
  const inline = globalThis.PRVSIGHT_INLINE;
  try {
    const blob = inline ? new Blob([inline.sampleBytes()]) : await (await fetch('samples/testcuda_report1.sqlite')).blob();
    state.inputs = [{ name: 'testcuda_report1.sqlite', data: blob }];
    await inspect();
  } catch (e) {
    fail(e, 'Loading the sample failed');
  }
}

function wireDropZone() {
  const drop = $('#drop');
  const input = $('#file');
  input.addEventListener('change', () => {
    chooseFiles(input.files);
    input.value = '';
  });
  drop.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      input.click();
    }
  });
  drop.addEventListener('click', (e) => {
    if (e.target === drop) input.click();
  });
  for (const t of ['dragenter', 'dragover']) {
    drop.addEventListener(t, (e) => {
      e.preventDefault();
      drop.classList.add('over');
    });
  }
  for (const t of ['dragleave', 'drop']) {
    drop.addEventListener(t, () => drop.classList.remove('over'));
  }
  drop.addEventListener('drop', (e) => {
    e.preventDefault();
    if (e.dataTransfer && e.dataTransfer.files.length) chooseFiles(e.dataTransfer.files);
  });
  // Files dropped beside the zone would make the browser open them and leave the page.
  window.addEventListener('dragover', (e) => e.preventDefault());
  window.addEventListener('drop', (e) => e.preventDefault());
}

function registerServiceWorker() {
  const status = $('#offline-status');
  if (!('serviceWorker' in navigator) || !/^https?:$/.test(location.protocol) || globalThis.PRVSIGHT_INLINE) {
    status.textContent = location.protocol === 'file:' ? 'single file, works offline' : 'runs locally';
    return;
  }
  navigator.serviceWorker
    .register('sw.js')
    .then(() => navigator.serviceWorker.ready)
    .then(() => {
      status.textContent = 'available offline';
      document.documentElement.dataset.offlineReady = 'yes';
    })
    .catch(() => {
      status.textContent = 'runs locally (offline copy unavailable)';
    });
}

/** When embedded (embed.js), tell the host page how tall we are. */
function reportHeightWhenEmbedded() {
  if (window.parent === window) return;
  document.documentElement.classList.add('embedded');
  const post = () => window.parent.postMessage({ prvsightHeight: document.documentElement.scrollHeight }, '*');
  new ResizeObserver(post).observe(document.body);
  post();
}

function main() {
  wireDropZone();
  $('#sample').addEventListener('click', loadSample);
  $('#options').addEventListener('submit', (ev) => {
    ev.preventDefault();
    convert();
  });
  $('#options').addEventListener('change', readAhead);
  $('#cancel').addEventListener('click', () => converter.cancel());
  $('#add-files').addEventListener('change', (e) => {
    addFiles(e.target.files);
    e.target.value = '';
  });
  $('#clear-files').addEventListener('click', () => {
    state.inputs = [];
    inspect();
  });
  const keepChanged = () => {
    $('#opt-keep-instance').disabled = !$('#opt-keep').value;
    $('#opt-window').disabled = !!$('#opt-keep').value;
  };
  $('#opt-keep').addEventListener('change', keepChanged);
  $('#opt-nvtx-config').addEventListener('change', async (e) => {
    const file = e.target.files[0];
    state.nvtxConfig = file ? { name: file.name, text: await file.text() } : null;
    // Read: the next conversion takes it (the end-to-end tests wait for this).
    e.target.dataset.loaded = file ? file.name : '';
  });
  keepChanged();
  $('#opt-metrics').addEventListener('change', () => {
    $('#metrics-options').disabled = !$('#opt-metrics').checked;
  });
  $('#hist-kernel').addEventListener('change', () => {
    const run = state.runs[state.current];
    if (run) showCharts(run.metrics, $('#hist-kernel').value);
  });
  $('#run-a').addEventListener('change', drawCompare);
  $('#run-b').addEventListener('change', drawCompare);
  $('#compare-input').addEventListener('change', (e) => {
    chooseRunB(e.target.files);
    e.target.value = '';
  });
  converter.version().then((v) => {
    $('#version').textContent = v;
    document.documentElement.dataset.ready = 'yes';
  }, (e) => fail(e, 'The converter could not start'));
  // The browser's number formatting loads its locale data on first use (~10 ms in Chromium, the
  // report's record count its first use): done while the page is idle, not as the inspection
  // is shown.
  setTimeout(() => (0).toLocaleString(), 0);
  // For scripts/bench/web.mjs, which times conversions on warmed-up workers.
  converter.warmedUp().then(() => {
    document.documentElement.dataset.warm = 'yes';
  }, () => {});
  $('#save-to-label').hidden = !globalThis.showSaveFilePicker;
  converter.outputsOnDisk().then((d) => {
    state.onDisk = d;
  }, () => {});
  $('#remove-outputs').addEventListener('click', async () => {
    await converter.removeOutputs();
    revokeUrls();
    $('#results').hidden = true;
    $('#storage').textContent = '';
  });
  wireTimeline();
  registerServiceWorker();
  reportHeightWhenEmbedded();
}

function wireTimeline() {
  $('#tl-view').addEventListener('change', (e) => timeline.setView(e.target.value));
  $('#tl-in').addEventListener('click', () => timeline.zoomAt((timeline.start + timeline.end) / 2, 1 / 1.5));
  $('#tl-out').addEventListener('click', () => timeline.zoomAt((timeline.start + timeline.end) / 2, 1.5));
  $('#tl-whole').addEventListener('click', () => timeline.setRange(0, timeline.info.end_ns));
  $('#tl-sel-zoom').addEventListener('click', () => timeline.selection && timeline.zoomTo(timeline.selection.start, timeline.selection.end));
  $('#tl-sel-clear').addEventListener('click', () => timeline.clearSelection());
  $('#tl-keep').addEventListener('click', () => timeline.selection && keepRange(timeline.selection.start, timeline.selection.end));
  const save = async (blob, ext) => {
    const a = h('a', { href: downloadUrl(await blob, state.urls), download: `${timeline.fileStem()}.${ext}` });
    document.body.append(a);
    a.click();
    a.remove();
  };
  $('#tl-png').addEventListener('click', () => save(timeline.png(), 'png'));
  $('#tl-svg').addEventListener('click', () => save(timeline.svg(), 'svg'));
  // A bar of the iteration durations chart zooms the timeline onto that iteration.
  $('#iterations-charts').addEventListener('click', (e) => {
    const bar = e.target.closest('[data-iteration]');
    const run = state.runs[state.current];
    if (!bar || !run || !run.metrics.iterations) return;
    const item = run.metrics.iterations.items.find((x) => String(x.index) === bar.dataset.iteration);
    if (item) showIteration(item);
  });
}

main();

// For tests and the console: the state and helpers, not an API.
globalThis.prvsight = { state, fmtBytes, fmtTime, downloadUrl, timeline };
