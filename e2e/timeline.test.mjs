// The timeline as a newcomer uses it in headless Chromium: shown after every conversion, zoomed
// by wheel at the pointer, panned by drag and keys, a record named on hover, a selected range's
// factors, "keep only this range", downloads, the text alternative; on the sample, a real 2-GPU
// export, the 4-rank MPI run, 128 ranks x 4 streams and a large inflated export. Screenshots in
// e2e/artifacts/timeline-*.png.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import {
  ARTIFACTS, CLI, DIST, REPO, SAMPLE, convert, download, launch, openPage, recordRequests, serve, tmp,
  tracesOrSkip, requireBuilt,
} from './helpers.mjs';

requireBuilt();

let server;
let browser;
let context;
let requests;

before(async () => {
  server = await serve(DIST);
  browser = await launch();
  context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1400, height: 900 } });
  requests = recordRequests(context);
});

after(async () => {
  await browser.close();
  server.close();
});

const TL = '[data-testid="timeline"]';

/** The CLI's description of the same timeline (rows, views, end), for the page to agree with. */
function cliTimeline(inputs, view = 'states') {
  const out = execFileSync(CLI, ['timeline', ...inputs, '--view', view, '--width', '1', '--json'], { encoding: 'utf8', maxBuffer: 1 << 28 });
  return JSON.parse(out);
}

/** The first kernel in the trace's time, as the Chrome JSON writer places it (exact to the ns). */
function firstKernel(input) {
  const json = join(tmp('kernel'), 'trace.json');
  execFileSync(CLI, ['convert', '-q', input, '-o', json]);
  const events = JSON.parse(readFileSync(json, 'utf8')).traceEvents.filter((e) => e.cat === 'kernel');
  events.sort((a, b) => a.ts - b.ts);
  const start = Math.round(events[0].ts * 1000);
  return { start, end: start + Math.round(events[0].dur * 1000), name: events[0].args.short_name, grid: events[0].args.grid };
}

/** Waits until the picture drawn is of the range asked for (frames are computed by the worker). */
async function settled(page) {
  await page.waitForFunction((sel) => {
    const el = document.querySelector(sel);
    return el.dataset.drawnRange === el.dataset.range && el.dataset.rows !== '0';
  }, TL, { timeout: 30000 });
  return page.$eval(TL, (el) => ({ range: el.dataset.range.split('-').map(Number), rows: Number(el.dataset.rows) }));
}

/** `settled`, after waiting (a while at most) for the timeline to draw `rows` rows. */
async function settledWithRows(page, rows) {
  await page.waitForFunction(([sel, n]) => document.querySelector(sel).dataset.rows === String(n), [TL, rows], { timeout: 10000 }).catch(() => {});
  return settled(page);
}

async function convertFiles(page, files) {
  if (files) await page.setInputFiles('#file', files);
  else await page.click('#sample');
  await page.waitForSelector('#inspect[data-state="done"]');
  await convert(page);
  assert.equal(await page.isVisible('#error'), false, 'the conversion failed');
  await page.waitForSelector(`${TL}:not([data-rows="0"])`, { timeout: 60000 });
  return settled(page);
}

/** The canvas' box, and the page-x of a time and the page-y of a line's middle (by its title). */
async function geometry(page) {
  return page.evaluate(() => {
    const tl = globalThis.prvsight.timeline;
    // Pointer positions are in the viewport: the timeline goes to its top first.
    tl.root.scrollIntoView({ block: 'start' });
    const r = tl.canvas.getBoundingClientRect();
    return {
      left: r.left,
      top: r.top,
      width: r.width,
      plotLeft: r.left + 240,
      lines: tl.layout.placed.map((p) => ({ title: p.line.title, label: p.line.label, y: r.top + p.y + p.h / 2, slot: p.line.slot, group: p.line.group })),
    };
  });
}

async function xOf(page, t) {
  return page.evaluate((time) => {
    const tl = globalThis.prvsight.timeline;
    return tl.canvas.getBoundingClientRect().left + tl.xOf(time);
  }, t);
}

async function snap(page, name) {
  const box = await page.$('#timeline-section');
  await box.screenshot({ path: join(ARTIFACTS, `timeline-${name}.png`) });
}

/** Names drawn twice or more: labels cut to fit the names column must still tell lines apart. */
async function ambiguousNames(page) {
  return page.evaluate(() => {
    const seen = new Map();
    for (const p of globalThis.prvsight.timeline.layout.placed) {
      if (p.drawn === undefined) continue;
      seen.set(p.drawn, (seen.get(p.drawn) || 0) + 1);
    }
    return [...seen].filter(([, n]) => n > 1).map(([name]) => name);
  });
}

describe('the timeline', () => {
  test('the sample: whole run, wheel zoom at the pointer, pan, keys, hover, select, keep', async () => {
    const { page, errors } = await openPage(context, `${server.origin}/`);
    const ref = cliTimeline([SAMPLE]);
    const first = await convertFiles(page, null);
    // Whole run first, the first view (thread states), one drawn row per row of the CLI's view.
    assert.deepEqual(first.range, [0, ref.timeline.end_ns]);
    const states = ref.timeline.views.find((v) => v.id === 'states');
    assert.equal(first.rows, states.rows.length);
    assert.equal(first.rows, 8);
    assert.match(await page.textContent('#tl-range-text'), /^Showing 0 ns to 1\.75 s \(1\.75 s of 1\.75 s\)$/);
    assert.deepEqual(await page.$$eval('#tl-view option', (o) => o.map((x) => x.value)), ref.timeline.views.map((v) => v.id));
    const legend = await page.$$eval('#tl-legend li', (li) => li.map((x) => x.textContent));
    assert.ok(legend.some((l) => l.includes('Inside CUDA API call')), legend.join(' | '));
    await snap(page, 'sample-whole');

    // The kernels view: the four GPU streams.
    await page.selectOption('#tl-view', 'kernels');
    const kernels = await settled(page);
    assert.equal(kernels.rows, ref.timeline.views.find((v) => v.id === 'kernels').rows.length);
    assert.equal(kernels.rows, 4);

    // A wheel turn over the first kernel zooms in around it: the time under the pointer stays put.
    const k = firstKernel(SAMPLE);
    const g = await geometry(page);
    const row = g.lines.find((l) => l.slot);
    const timeAt = (x) => page.evaluate((px) => globalThis.prvsight.timeline.timeAt(px - globalThis.prvsight.timeline.canvas.getBoundingClientRect().left), x);
    const px = Math.round(await xOf(page, k.start));
    const timeUnder = await timeAt(px);
    await page.mouse.move(px, row.y);
    for (let i = 0; i < 6; i++) await page.mouse.wheel(0, -400);
    const zoomed = await settled(page);
    const span = zoomed.range[1] - zoomed.range[0];
    assert.ok(span < ref.timeline.end_ns / 50, `zoomed to ${span} ns`);
    const after = await timeAt(px);
    assert.ok(Math.abs(after - timeUnder) <= span / 100, `the time under the pointer moved from ${timeUnder} to ${after}`);
    // Closer, a pixel now being short enough to aim at the kernel (134 µs).
    await page.mouse.move(Math.round(await xOf(page, (k.start + k.end) / 2)), row.y);
    for (let i = 0; i < 4; i++) await page.mouse.wheel(0, -400);
    const close = await settled(page);
    assert.ok(close.range[0] <= k.start && close.range[1] >= k.end, `${close.range} lost the kernel`);
    await page.mouse.move(g.left + 10, g.top + 5);
    await snap(page, 'sample-zoomed');

    // Hovering the first kernel names it with its launch configuration, as the export holds it.
    const kx = Math.round(await xOf(page, (k.start + k.end) / 2));
    const g2 = await geometry(page);
    let tip = '';
    for (const l of g2.lines.filter((x) => x.slot)) {
      await page.mouse.move(kx, l.y);
      try {
        await page.waitForSelector('#tl-tooltip:not([hidden])', { timeout: 1500 });
        tip = await page.textContent('#tl-tooltip');
        if (tip.includes('add_parallel')) break;
      } catch { /* nothing on this line */ }
    }
    assert.match(tip, new RegExp(k.name));
    assert.ok(tip.includes(k.grid.join(' × ')), tip);
    // The exact start and duration (the kernel is drawn as it is at this zoom).
    assert.ok(tip.includes(`lasted ${await page.evaluate((ns) => globalThis.prvsight.fmtTime(ns), k.end - k.start)}`), tip);
    await page.screenshot({ path: join(ARTIFACTS, 'timeline-sample-hover.png') });

    // Drag pans: dragging right by a tenth of the plot moves the range earlier by a tenth.
    const before = await settled(page);
    const gd = await geometry(page);
    const dragY = gd.lines.find((l) => l.slot).y;
    await page.mouse.move(gd.plotLeft + 400, dragY);
    await page.mouse.down();
    await page.mouse.move(gd.plotLeft + 400 + (gd.width - 240) / 10, dragY, { steps: 4 });
    await page.mouse.up();
    const panned = await settled(page);
    const shift = before.range[0] - panned.range[0];
    const tenth = (before.range[1] - before.range[0]) / 10;
    assert.ok(Math.abs(shift - tenth) <= tenth / 20 + 1, `panned by ${shift} ns, a tenth is ${tenth}`);

    // Keys, with the timeline focused: + zooms in, → pans, Home shows the whole run.
    await page.focus(TL);
    await page.keyboard.press('+');
    const plus = await settled(page);
    assert.ok(plus.range[1] - plus.range[0] < panned.range[1] - panned.range[0]);
    await page.keyboard.press('ArrowRight');
    const right = await settled(page);
    assert.ok(right.range[0] > plus.range[0]);
    await page.keyboard.press('Home');
    assert.deepEqual((await settled(page)).range, [0, ref.timeline.end_ns]);

    // Shift-drag selects a range; its factors come from the metric core; the CLI agrees.
    await page.selectOption('#tl-view', 'useful');
    await settled(page);
    const g3 = await geometry(page);
    const y = g3.lines.find((l) => l.slot).y;
    await page.keyboard.down('Shift');
    await page.mouse.move(g3.plotLeft + (g3.width - 240) * 0.70, y);
    await page.mouse.down();
    await page.mouse.move(g3.plotLeft + (g3.width - 240) * 0.95, y, { steps: 5 });
    await page.mouse.up();
    await page.keyboard.up('Shift');
    await page.waitForSelector('#tl-sel-factors .tl-factor');
    const factors = await page.$$eval('#tl-sel-factors .tl-factor', (f) => f.map((x) => x.dataset.factor));
    assert.deepEqual(factors, ['Parallel efficiency', 'Load balance', 'Communication efficiency', 'Orchestration efficiency']);
    const sel = await page.evaluate(() => globalThis.prvsight.timeline.selection);
    assert.ok(sel.end > sel.start);
    await snap(page, 'sample-selection');

    // "Keep only this range" converts that window again: the new timeline spans just it.
    await page.click('#tl-keep');
    await page.waitForFunction((s) => {
      const el = document.querySelector(s);
      return el.dataset.drawnRange === el.dataset.range && Number(el.dataset.range.split('-')[1]) < 1.7e9;
    }, TL, { timeout: 60000 });
    const kept = await settled(page);
    assert.equal(kept.range[0], 0);
    // The kept trace ends at the window's end, or earlier where its last record ends first.
    assert.ok(kept.range[1] <= sel.end - sel.start + 1, `${kept.range[1]} > ${sel.end - sel.start}`);
    assert.equal(await page.inputValue('#opt-window'), `${sel.start}ns..${sel.end}ns`);
    // The selection belonged to the trace before: gone with it.
    assert.equal(await page.isVisible('#tl-selection'), false);
    await snap(page, 'sample-kept');
    assert.deepEqual(errors, []);
  });

  test('downloads, text alternative, keyboard reach, and no request leaves the page', async () => {
    const { page, errors } = await openPage(context, `${server.origin}/`);
    await convertFiles(page, null);
    const dir = tmp('tl');
    const png = await download(page, '#tl-png', dir);
    const bytes = readFileSync(png);
    assert.equal(bytes.subarray(1, 4).toString(), 'PNG');
    assert.ok(bytes.length > 5000, `PNG of ${bytes.length} bytes`);
    const svg = readFileSync(await download(page, '#tl-svg', dir), 'utf8');
    assert.match(svg, /^<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    // Its rows' names, its title and its legend, as the page shows them.
    for (const name of ['>thread 17068 (async.out)<', 'Thread states, 0 ns to 1.75 s', 'Blocked (OS call) (1.10 s)', 'blank: ']) {
      assert.ok(svg.includes(name), `SVG lacks ${name}`);
    }

    // The text alternative: the visible range and one table row per drawn row.
    await page.click('#tl-text summary');
    await page.waitForSelector('#tl-text tbody tr');
    const rows = await page.$$eval('#tl-text tbody tr', (r) => r.map((x) => x.textContent));
    assert.equal(rows.length, 8);
    assert.ok(rows.some((r) => r.includes('Blocked (OS call)')), rows.join(' | '));
    assert.match(await page.textContent('#tl-text-range'), /^Thread states, from 0 ns to 1\.75 s\.$/);
    await page.screenshot({ path: join(ARTIFACTS, 'timeline-text.png'), fullPage: true });

    // Tab reaches the timeline after its toolbar.
    await page.focus('#tl-svg');
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement.dataset.testid), 'timeline');
    const origin = new URL(server.origin).origin;
    assert.deepEqual(requests.filter((u) => !u.startsWith(origin) && !u.startsWith('blob:') && !u.startsWith('data:')), []);
    assert.deepEqual(errors, []);
  });

  test('a real 2-GPU export: NCCL against compute, two GPUs', async (t) => {
    const traces = tracesOrSkip(t);
    if (!traces) return;
    const file = join(traces, 'mfu_2gpu_before.sqlite');
    const ref = cliTimeline([file], 'nccl');
    const { page, errors } = await openPage(context, `${server.origin}/`);
    const first = await convertFiles(page, [file]);
    assert.deepEqual(first.range, [0, ref.timeline.end_ns]);
    assert.deepEqual(await page.$$eval('#tl-view option', (o) => o.map((x) => x.value)), ref.timeline.views.map((v) => v.id));
    await page.selectOption('#tl-view', 'nccl');
    const nccl = await settled(page);
    assert.equal(nccl.rows, ref.timeline.views.find((v) => v.id === 'nccl').rows.length);
    const titles = (await geometry(page)).lines.map((l) => l.title).join(' | ');
    assert.match(titles, /GPU0/);
    assert.match(titles, /GPU1/);
    assert.deepEqual(await ambiguousNames(page), []);
    await snap(page, '2gpu-nccl');
    await page.selectOption('#tl-view', 'useful');
    await settled(page);
    await snap(page, '2gpu-useful');
    assert.deepEqual(errors, []);
  });

  test('the 4-rank MPI run: ranks fold and unfold, an iteration bar zooms there', async (t) => {
    const traces = tracesOrSkip(t);
    if (!traces) return;
    const dir = join(traces, 'generated', 'mpi4');
    const files = readdirSync(dir).filter((f) => f.endsWith('.sqlite')).sort().map((f) => join(dir, f));
    const ref = cliTimeline(files, 'mpi');
    const { page, errors } = await openPage(context, `${server.origin}/`);
    await convertFiles(page, files);
    await page.selectOption('#tl-view', 'mpi');
    const mpi = await settled(page);
    const want = ref.timeline.views.find((v) => v.id === 'mpi').rows.length;
    const lines = await geometry(page);
    // In the MPI view each rank is one thread: one line per rank, named by rank.
    assert.equal(mpi.rows, want);
    assert.deepEqual(lines.lines.map((l) => l.label.replace(/ · .*/, '')), ['rank 0', 'rank 1', 'rank 2', 'rank 3']);
    await snap(page, 'mpi4-mpi');
    // In the states view a rank has several threads: its group folds into one line and back.
    await page.selectOption('#tl-view', 'states');
    const states = await settled(page);
    const g = await geometry(page);
    const group = g.lines.find((l) => l.group && l.label.startsWith('rank 0'));
    assert.ok(group, g.lines.map((l) => l.label).join(' | '));
    const members = await page.evaluate((key) => globalThis.prvsight.timeline.lines.find((l) => l.key === key).rows.length,
      await page.evaluate(() => globalThis.prvsight.timeline.lines.find((l) => l.group && l.label.startsWith('rank 0')).key));
    await page.mouse.click(g.left + 20, group.y);
    const folded = await settledWithRows(page, states.rows - members + 1);
    assert.equal(folded.rows, states.rows - members + 1);
    // The page is shorter once folded and may have scrolled: find the line again.
    const again = (await geometry(page)).lines.find((l) => l.group && l.label.startsWith('rank 0'));
    await page.mouse.click(g.left + 20, again.y);
    assert.equal((await settledWithRows(page, states.rows)).rows, states.rows);
    await page.selectOption('#tl-view', 'mpi');
    await settled(page);
    // A bar of the iteration durations chart zooms the timeline onto that iteration.
    const bar = await page.$('#iterations-charts [data-iteration]');
    assert.ok(bar, 'no iteration bar');
    const index = await bar.getAttribute('data-iteration');
    await bar.click();
    const zoomed = await settled(page);
    const item = await page.evaluate((i) => {
      const run = globalThis.prvsight.state.runs[globalThis.prvsight.state.current];
      const it = run.metrics.iterations.items.find((x) => String(x.index) === i);
      return { start: it.start_ns - globalThis.prvsight.state.result.timeline.offset_ns, end: it.end_ns - globalThis.prvsight.state.result.timeline.offset_ns };
    }, index);
    // The iteration fills the view, with a margin either side.
    assert.ok(zoomed.range[0] <= item.start && zoomed.range[1] >= item.end, `${zoomed.range} does not hold ${item.start}-${item.end}`);
    assert.ok(zoomed.range[1] - zoomed.range[0] <= 1.5 * (item.end - item.start) + 100);
    await page.$eval(TL, (el) => el.scrollIntoView());
    await snap(page, 'mpi4-iteration');
    assert.deepEqual(errors, []);
  });

  test('128 ranks x 4 streams: rows summarised to stay readable, still smooth', async () => {
    const dir = tmp('ranks');
    execFileSync('python3', [join(REPO, 'e2e', 'gpu_ranks.py'), SAMPLE, dir, '128']);
    const files = readdirSync(dir).sort().map((f) => join(dir, f));
    const ref = cliTimeline(files, 'kernels');
    assert.equal(ref.timeline.views.find((v) => v.id === 'kernels').rows.length, 512);
    const { page, errors } = await openPage(context, `${server.origin}/`);
    await convertFiles(page, files);
    await page.selectOption('#tl-view', 'kernels');
    const whole = await settled(page);
    const g = await geometry(page);
    // Folded: no more lines than fit at a readable height; every rank still named.
    assert.equal(g.lines.length, 128, `${g.lines.length} lines`);
    assert.equal(whole.rows, g.lines.filter((l) => l.slot).length);
    assert.ok(g.lines.some((l) => /node127/.test(l.title)));
    assert.deepEqual(await ambiguousNames(page), []);
    await snap(page, 'ranks128-kernels');
    // A zoom frame of all those rows stays well inside a frame time budget (measured in the
    // benchmark; here only that it is drawn).
    const g2 = await geometry(page);
    const row = g2.lines.find((l) => l.slot);
    const k = firstKernel(SAMPLE);
    await page.mouse.move(Math.round(await xOf(page, k.start)), row.y);
    for (let i = 0; i < 5; i++) await page.mouse.wheel(0, -400);
    const zoomed = await settled(page);
    assert.ok(zoomed.range[1] - zoomed.range[0] < whole.range[1] - whole.range[0]);
    assert.ok(Number(await page.getAttribute(TL, 'data-frame-ms')) > 0);
    await snap(page, 'ranks128-zoomed');
    assert.deepEqual(errors, []);
  });

  test('a large inflated export: short records summarised, hover still names them', async () => {
    const dir = tmp('large');
    const big = join(dir, 'large.sqlite');
    const inflate = join(REPO, 'target', 'release', 'prvsight-inflate');
    if (!existsSync(inflate)) throw new Error(`${inflate} is missing: cargo build --release --bins`);
    execFileSync(inflate, [SAMPLE, '-o', big, '--target-mb', '120'], { stdio: 'ignore' });
    assert.ok(statSync(big).size > 100e6);
    const ref = cliTimeline([big], 'kernels');
    const { page, errors } = await openPage(context, `${server.origin}/`);
    const first = await convertFiles(page, [big]);
    assert.deepEqual(first.range, [0, ref.timeline.end_ns]);
    const info = await page.evaluate(() => globalThis.prvsight.timeline.info);
    assert.equal(info.spans_kept, ref.timeline.spans_kept);
    assert.equal(info.spans_shorter_not_kept_ns, ref.timeline.spans_shorter_not_kept_ns);
    assert.ok(info.bytes <= 256 * 2 ** 20, `${info.bytes} bytes`);
    await page.selectOption('#tl-view', 'kernels');
    await settled(page);
    if (info.spans_shorter_not_kept_ns > 0) assert.match(await page.textContent('#tl-note'), /show as summaries/);
    await snap(page, 'large-kernels');
    const g = await geometry(page);
    const row = g.lines.find((l) => l.slot);
    await page.mouse.move(g.plotLeft + 300, row.y);
    for (let i = 0; i < 10; i++) await page.mouse.wheel(0, -400);
    await settled(page);
    await snap(page, 'large-zoomed');
    assert.deepEqual(errors, []);
  });
});
