// The page's controller: holds what the user chose, asks the converter (through bridge.js) and
// hands results to the views. No wasm and no worker messages here.

import { Converter, CoreError } from './bridge.js';
import { compareCharts, overviewCharts } from './charts.js';
import { $, fmtBytes, renderCharts, renderFiles, renderFamilies, renderNvtx, renderResults, showError, clearError, downloadUrl } from './ui.js';

const converter = new Converter();

/** How often the conversion's progress is shown, at most (ms). */
const PROGRESS_MS = 150;

/** @type {{ inputs: {name: string, data: Blob}[], report: object|null, result: object|null,
 *           runs: {label: string, metrics: object}[], urls: string[] }} */
const state = { inputs: [], report: null, result: null, runs: [], urls: [] };

function setBusy(busy) {
  $('#convert').disabled = busy;
  $('#sample').disabled = busy;
  $('#file').disabled = busy;
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

async function inspect() {
  clearError();
  $('#results').hidden = true;
  $('#charts').hidden = true;
  if (!state.inputs.length) {
    $('#inspect').hidden = true;
    return;
  }
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
    state.report = null;
    $('#inspect').hidden = true;
    setBusy(false);
    fail(e, 'Reading the files failed');
    // Keep only the files that were not the problem, so the user can add another one.
    if (e instanceof CoreError && state.inputs.length > 1) {
      state.inputs = state.inputs.filter((i) => !e.message.startsWith(`${i.name}:`));
    } else {
      state.inputs = [];
    }
    return;
  }
  setBusy(false);
  const r = state.report;
  renderFiles(r, state.inputs, (i) => {
    state.inputs.splice(i, 1);
    inspect();
  });
  renderFamilies(r);
  renderNvtx(r);
  $('#inspect').hidden = false;
  if (r.problem) showError(r.problem.message, r.problem.hint, r.problem.kind);
  $('#convert').disabled = !!r.problem;
  // From the files chosen to what they hold shown (the benchmark reads it, as it reads the
  // conversion's): the inspection is the conversion's discovery, which the conversion reuses.
  $('#inspect').dataset.seconds = ((performance.now() - started) / 1000).toFixed(3);
  readAhead();
}

/** The reading of the inspected files opened now, with the options as they are, while the user
 * looks at what the files hold (bridge.js `readAhead`); again whenever an option changes. */
function readAhead() {
  if (state.report && !state.report.problem && state.inputs.length) converter.readAhead(state.inputs, options());
}

function addFiles(files) {
  const list = [...files];
  const json = list.filter((f) => /\.json$/i.test(f.name));
  for (const f of json) addMetricsFile(f);
  const exports = list.filter((f) => !/\.json$/i.test(f.name));
  if (!exports.length) return;
  // A file with the same name replaces the earlier one (re-exported report).
  for (const f of exports) {
    state.inputs = state.inputs.filter((i) => i.name !== f.name);
    state.inputs.push({ name: f.name, data: f });
  }
  inspect();
}

function options() {
  const present = [...document.querySelectorAll('#families input[type=checkbox]')];
  const chosen = present.filter((b) => b.checked).map((b) => b.value);
  const keep = $('#opt-keep').value;
  const instance = $('#opt-keep-instance').value.trim();
  return {
    keep_nvtx_range: keep ? (instance ? `${keep}:${instance}` : keep) : null,
    keep_window: $('#opt-window').value.trim() || null,
    align: state.inputs.length > 1 ? $('#opt-align').value : null,
    families: chosen.length === present.length ? null : chosen,
    gzip: $('#opt-gzip').checked,
    metrics: $('#opt-metrics').checked,
    nvtx_range: $('#opt-nvtx').value || null,
    nccl_as: $('#opt-nccl').value,
  };
}

function revokeUrls() {
  for (const u of state.urls) URL.revokeObjectURL(u);
  state.urls = [];
}

async function convert(ev) {
  ev.preventDefault();
  clearError();
  revokeUrls();
  $('#results').hidden = true;
  delete $('#results').dataset.seconds;
  $('#charts').hidden = true;
  setBusy(true);
  const bar = $('#bar');
  const text = $('#progress-text');
  $('#progress-h').textContent = '3. Converting';
  bar.removeAttribute('value');
  text.textContent = 'Starting…';
  const started = performance.now();
  // The progress shown at most every PROGRESS_MS (and at each new phase): the workers report
  // every batch, and each text or bar change costs the page a style, layout and paint on the
  // cores the conversion runs on (a 10 MB conversion reports ~90 times in ~0.3 s).
  let shownAt = -Infinity;
  let shownPhase = null;
  try {
    const result = await converter.convert(state.inputs, options(), (p) => {
      const now = performance.now();
      if (p.phase === shownPhase && now - shownAt < PROGRESS_MS) return;
      shownAt = now;
      shownPhase = p.phase;
      if (p.phase === 'converting' && p.records_estimate > 0) {
        const pct = Math.min(100, (100 * p.records_done) / p.records_estimate);
        bar.value = pct;
        text.textContent = `Converting: ${p.records_done.toLocaleString()} of about ${p.records_estimate.toLocaleString()} records (${pct.toFixed(0)} %)`;
      } else {
        bar.removeAttribute('value');
        text.textContent = p.phase === 'sorting' ? 'Reading and sorting the tables…' : `${p.phase[0].toUpperCase()}${p.phase.slice(1)}…`;
      }
    });
    state.result = result;
    const secs = (performance.now() - started) / 1000;
    renderResults(result, secs, state.urls);
    if (result.metrics) {
      const label = result.names.folder;
      state.runs = state.runs.filter((r) => r.label !== label);
      state.runs.push({ label, metrics: result.metrics });
      showCharts(result.metrics);
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
  } finally {
    setBusy(false);
  }
}

function showCharts(metrics, kernel) {
  $('#charts').hidden = false;
  const hist = $('#hist-kernel');
  if (kernel === undefined) {
    hist.replaceChildren(...metrics.histograms.map((h) => new Option(`${h.short_name} (${h.count} launches)`, h.name)));
    kernel = metrics.histograms.length ? metrics.histograms[0].name : null;
  }
  $('#hist-pick').hidden = !metrics.histograms.length;
  const gpus = metrics.gpus.filter((g) => g.has_activity).length;
  $('#charts-note').textContent = gpus
    ? `Measured over ${metrics.window.nvtx_range ? `the NVTX range “${metrics.window.nvtx_range.name}” (${metrics.window.instances} instance(s))` : 'the whole trace'}; definitions in metrics.json.`
    : 'No GPU activity in this trace: the GPU charts are empty.';
  renderCharts($('#chart-list'), overviewCharts(metrics, kernel), state.urls);
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
    const label = file.name.replace(/\.json$/i, '');
    state.runs = state.runs.filter((r) => r.label !== label);
    state.runs.push({ label, metrics: m });
    updateCompare();
  });
}

function updateCompare() {
  const section = $('#compare');
  section.hidden = state.runs.length < 1;
  const a = $('#run-a');
  const b = $('#run-b');
  const keepA = a.value;
  const keepB = b.value;
  const opts = () => state.runs.map((r, i) => new Option(r.label, String(i)));
  a.replaceChildren(...opts());
  b.replaceChildren(...opts());
  const n = state.runs.length;
  a.value = keepA && Number(keepA) < n ? keepA : String(Math.max(0, n - 2));
  b.value = keepB && Number(keepB) < n && keepB !== a.value ? keepB : String(n - 1);
  drawCompare();
}

function drawCompare() {
  const list = $('#compare-list');
  const ra = state.runs[Number($('#run-a').value)];
  const rb = state.runs[Number($('#run-b').value)];
  if (!ra || !rb || ra === rb) {
    list.replaceChildren();
    const p = document.createElement('p');
    p.className = 'help';
    p.textContent = 'Convert (or add) a second run to compare it with this one.';
    list.append(p);
    return;
  }
  renderCharts(list, compareCharts(ra.metrics, rb.metrics, ra.label, rb.label), state.urls);
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
    addFiles(input.files);
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
    if (e.dataTransfer && e.dataTransfer.files.length) addFiles(e.dataTransfer.files);
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
  $('#options').addEventListener('submit', convert);
  $('#options').addEventListener('change', readAhead);
  $('#cancel').addEventListener('click', () => converter.cancel());
  const keepChanged = () => {
    $('#opt-keep-instance').disabled = !$('#opt-keep').value;
    $('#opt-window').disabled = !!$('#opt-keep').value;
  };
  $('#opt-keep').addEventListener('change', keepChanged);
  keepChanged();
  $('#opt-metrics').addEventListener('change', () => {
    $('#metrics-options').disabled = !$('#opt-metrics').checked;
  });
  $('#hist-kernel').addEventListener('change', () => {
    if (state.result && state.result.metrics) showCharts(state.result.metrics, $('#hist-kernel').value);
  });
  $('#run-a').addEventListener('change', drawCompare);
  $('#run-b').addEventListener('change', drawCompare);
  $('#metrics-file').addEventListener('change', (e) => {
    for (const f of e.target.files) addMetricsFile(f);
    e.target.value = '';
  });
  converter.version().then((v) => {
    $('#version').textContent = v;
    document.documentElement.dataset.ready = 'yes';
  }, (e) => fail(e, 'The converter could not start'));
  // The browser's number formatting loads its locale data on first use (~10 ms in Chromium, the
  // report's record count its first use): done while the page is idle, not as the inspection
  // is shown (docs/PERFORMANCE.md item 28).
  setTimeout(() => (0).toLocaleString(), 0);
  // For scripts/bench/web.mjs, which times conversions on warmed-up workers.
  converter.warmedUp().then(() => {
    document.documentElement.dataset.warm = 'yes';
  }, () => {});
  registerServiceWorker();
  reportHeightWhenEmbedded();
}

main();

// For tests and the console: the state and helpers, not an API.
globalThis.prvsight = { state, fmtBytes, downloadUrl };
