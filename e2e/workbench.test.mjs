// The page as the analyst's workbench, used as a newcomer would in headless Chromium: a choice
// that replaces (never joins silently), iterations and ranks on screen, a comparison that says
// which factor moved, charts that explain themselves and fit their labels, and 64 rank files in
// one drop. Screenshots in e2e/artifacts/workbench-*.png.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  SAMPLE, cli, convert, launch, openPage, serve, shot, tmp, tracesOrSkip, requireBuilt, DIST, REPO,
} from './helpers.mjs';

requireBuilt();

let server;
let browser;
let context;

before(async () => {
  server = await serve(DIST);
  browser = await launch();
  context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1280, height: 900 } });
});

after(async () => {
  await browser.close();
  server.close();
});

const FILES = 'input[data-testid="files"]';
const ADD = 'input[data-testid="add-files"]';
const COMPARE = 'input[data-testid="compare-input"]';

/** Chooses files in `input` and waits until their inspection ended (read or failed). */
async function choose(page, input, paths) {
  await page.setInputFiles(input, paths);
  await page.waitForSelector('#inspect[data-state="done"], #inspect[data-state="failed"]');
}

async function inputNames(page) {
  return page.$$eval('[data-testid="input-file"] th', (ths) => ths.map((t) => t.textContent));
}

/** Every text of every chart on the page lies inside its SVG (nothing clipped at an edge). */
async function assertNothingClipped(page, what) {
  const outside = await page.$$eval('svg.chart', (svgs) => svgs.flatMap((svg) => {
    const w = Number(svg.getAttribute('width'));
    return [...svg.querySelectorAll('text')].map((t) => {
      const b = t.getBBox();
      return { text: t.textContent, x: b.x, right: b.x + b.width, w, chart: svg.querySelector('title').textContent };
    }).filter((b) => b.x < -0.5 || b.right > b.w + 0.5);
  }));
  assert.deepEqual(outside, [], `${what}: labels outside their chart`);
}

describe('the workbench', () => {
  test('a new choice replaces the files, adding is explicit, every file stays listed', async (t) => {
    const traces = tracesOrSkip(t);
    if (!traces) return;
    const { page, errors } = await openPage(context, `${server.origin}/`);
    await page.click('#sample');
    await page.waitForSelector('#inspect[data-state="done"]');
    assert.deepEqual(await inputNames(page), ['testcuda_report1.sqlite']);
    // A pick after the sample replaces it.
    await choose(page, FILES, join(traces, 'mfu_2gpu_before.sqlite'));
    assert.deepEqual(await inputNames(page), ['mfu_2gpu_before.sqlite']);
    // Adding is its own action; the same file twice is warned about.
    await choose(page, ADD, join(traces, 'mfu_2gpu_after.sqlite'));
    assert.deepEqual(await inputNames(page), ['mfu_2gpu_before.sqlite', 'mfu_2gpu_after.sqlite']);
    await choose(page, ADD, join(traces, 'mfu_2gpu_after.sqlite'));
    assert.equal((await inputNames(page)).length, 3);
    assert.match(await page.textContent('#input-warnings'), /mfu_2gpu_after\.sqlite is chosen twice/);
    assert.match(await page.textContent('#input-warnings'), /given twice|same export/);
    // Two captures made an hour apart are two runs, not the ranks of one: said before converting.
    assert.match(await page.textContent('#input-warnings'), /minutes apart: they look like separate runs/);
    await shot(page, 'workbench-duplicates');
    // After a conversion, a new pick replaces the run's files and hides its results.
    await choose(page, FILES, join(traces, 'nsightful_power_iteration.sqlite'));
    await convert(page);
    assert.equal(await page.isVisible('#results'), true);
    await choose(page, FILES, SAMPLE);
    assert.deepEqual(await inputNames(page), ['testcuda_report1.sqlite']);
    assert.equal(await page.isHidden('#results'), true);
    // A bad file beside a good one: both stay listed, the bad one says why.
    const dir = tmp('bad-beside');
    writeFileSync(join(dir, 'notes.sqlite'), 'just text, renamed '.repeat(20));
    await choose(page, FILES, [SAMPLE, join(dir, 'notes.sqlite')]);
    assert.deepEqual(await inputNames(page), ['testcuda_report1.sqlite', 'notes.sqlite']);
    assert.match(await page.textContent('[data-testid="input-file"].bad'), /notes\.sqlite.*could not be read/);
    assert.equal(await page.isVisible('#error'), true);
    await shot(page, 'workbench-bad-beside-good');
    // Two exports both named report1.sqlite become two runs told apart by host and time.
    const a = tmp('r1a');
    const b = tmp('r1b');
    copyFileSync(SAMPLE, join(a, 'report1.sqlite'));
    copyFileSync(join(traces, 'weatherbench2_report1.sqlite'), join(b, 'report1.sqlite'));
    for (const d of [a, b]) {
      await choose(page, FILES, join(d, 'report1.sqlite'));
      await convert(page);
    }
    const runs = await page.$$eval('#run-a option', (o) => o.map((x) => x.textContent));
    const r1 = runs.filter((r) => r.startsWith('report1.sqlite'));
    assert.equal(r1.length, 2, runs.join(' | '));
    assert.notEqual(r1[0], r1[1]);
    assert.ok(r1.every((r) => / UTC/.test(r)), r1.join(' | '));
    assert.deepEqual(errors, []);
  });

  test('iterations and ranks of an MPI run on screen; one iteration kept alone', async (t) => {
    const traces = tracesOrSkip(t);
    if (!traces) return;
    const dir = join(traces, 'generated', 'mpi4');
    const { page, errors } = await openPage(context, `${server.origin}/`);
    await choose(page, FILES, [0, 1, 2, 3].map((r) => join(dir, `rank${r}.sqlite`)));
    await convert(page);
    assert.equal(await page.isHidden('#error'), true, await page.textContent('#error'));
    // No GPU: no empty chart, one line saying why.
    assert.equal(await page.$$eval('#chart-list figure', (f) => f.length), 0);
    assert.match(await page.textContent('#charts-note'), /No GPU activity/);
    const it = page.locator('[data-testid="iterations"]');
    assert.equal(await it.getAttribute('data-count'), '20');
    assert.match(await page.textContent('#iterations-note'), /20 iterations: NVTX range 'iteration'/);
    assert.deepEqual(await page.$$eval('#iterations-charts figure', (f) => f.map((x) => x.dataset.chart)), ['iteration-durations', 'iteration-factors']);
    const slowest = await page.$$eval('#iterations-table tbody tr', (rows) => rows.map((r) => r.children[6].textContent));
    assert.equal(slowest.length, 20);
    assert.ok(slowest.filter((s) => s === 'rank 3').length > 10, slowest.join(','));
    const ranks = page.locator('[data-testid="host-ranks"]');
    assert.equal(await ranks.getAttribute('data-count'), '4');
    assert.match(await page.textContent('#ranks-note'), /rank 3 is the straggler/);
    assert.equal(await page.$$eval('#ranks-table tbody tr', (r) => r.length), 4);
    await assertNothingClipped(page, 'mpi4');
    await page.locator('#iterations').scrollIntoViewIfNeeded();
    await shot(page, 'workbench-mpi4');
    // Keep iteration 5 alone: a conversion of that window, with every event.
    const item = await page.evaluate(() => globalThis.prvsight.state.runs.at(-1).metrics.iterations.items[5]);
    await page.click('#iterations-table button[data-iteration="5"]');
    await page.waitForFunction(() => globalThis.prvsight.state.runs.length === 2 && !document.querySelector('#results').hidden);
    const zoomed = await page.evaluate(() => globalThis.prvsight.state.runs.at(-1));
    assert.match(zoomed.label, /iteration 5$/);
    assert.equal(zoomed.metrics.window.elapsed_ns, item.end_ns - item.start_ns);
    assert.equal(zoomed.result.summary.records > 0, true);
    assert.deepEqual(errors, []);
  });

  test('a second run compared: the verdict first, factors that mean better or worse', async (t) => {
    const traces = tracesOrSkip(t);
    if (!traces) return;
    const { page, errors } = await openPage(context, `${server.origin}/`);
    await choose(page, FILES, join(traces, 'mfu_2gpu_before.sqlite'));
    await convert(page);
    await page.setInputFiles(COMPARE, join(traces, 'mfu_2gpu_after.sqlite'));
    await page.waitForSelector('[data-testid="verdict"]:not([hidden])', { timeout: 120000 });
    const verdict = await page.textContent('[data-testid="verdict"]');
    const cli1 = JSON.parse(cli(['compare', join(traces, 'mfu_2gpu_before.sqlite'), join(traces, 'mfu_2gpu_after.sqlite'), '--json']));
    assert.equal(await page.getAttribute('[data-testid="verdict"]', 'data-main-factor'), cli1.verdict.main_factor);
    assert.match(verdict, /^PE (fell|rose) \d+\.\d points .*, mostly /);
    assert.deepEqual(await page.$$eval('#compare-list figure', (f) => f.map((x) => x.dataset.chart)), ['compare-factors', 'compare-kernels', 'compare-breakdown']);
    // Colours: more kernel time in B is worse (vermillion), less is better (green).
    const bars = await page.$$eval('#fig-compare-kernels svg g rect', (r) => r.map((x) => x.getAttribute('fill')));
    const changes = cli1.kernels.filter((k) => k.change_ns !== null).map((k) => k.change_ns);
    assert.deepEqual(bars, changes.map((d) => (d <= 0 ? '#009E73' : '#D55E00')));
    // Capture lengths and iterations shown beside the factors.
    const runsText = await page.textContent('.runs-table');
    assert.match(runsText, /Measured time.*Iterations.*Time per iteration.*Kernel launches/s);
    await assertNothingClipped(page, 'compare');
    await page.locator('#compare').scrollIntoViewIfNeeded();
    await shot(page, 'workbench-compare');
    // A metrics.json becomes a run of its own.
    const m = join(tmp('mjson'), 'earlier.json');
    writeFileSync(m, cli(['metrics', '--json', join(traces, 'nsightful_power_iteration.sqlite')]));
    await page.setInputFiles(COMPARE, m);
    await page.waitForFunction(() => [...document.querySelectorAll('#run-b option')].some((o) => o.textContent.includes('metrics.json')));
    assert.deepEqual(errors, []);
  });

  test('charts explain themselves, transfers are per direction, labels fit', async () => {
    const { page, errors } = await openPage(context, `${server.origin}/`);
    await page.click('#sample');
    await page.waitForSelector('#inspect[data-state="done"]');
    await convert(page);
    const figs = await page.$$eval('#chart-list figure', (f) => f.map((x) => ({ id: x.dataset.chart, note: x.querySelector('.chart-note')?.textContent || '' })));
    assert.ok(figs.length >= 5);
    for (const f of figs) assert.ok(f.note.length > 40, `${f.id}: no explanation`);
    assert.ok(figs.some((f) => f.id === 'transfers'));
    const directions = await page.$$eval('#fig-transfers table.data tbody tr', (r) => r.map((x) => x.children[1].textContent));
    assert.deepEqual(directions, ['host → device', 'device → host']);
    assert.ok(await page.$$eval('#definitions dt', (d) => d.length) > 10);
    const axis = await page.$$eval('svg.chart text', (t) => t.map((x) => x.textContent).filter((x) => /e[+-]\d/.test(x)));
    assert.deepEqual(axis, []);
    await assertNothingClipped(page, 'sample');
    await page.locator('#charts').scrollIntoViewIfNeeded();
    await shot(page, 'workbench-sample-charts');
    assert.deepEqual(errors, []);
  });

  test('64 rank files in one drop stay readable', async (t) => {
    const traces = tracesOrSkip(t);
    if (!traces) return;
    const dir = tmp('ranks64');
    execFileSync('python3', [join(REPO, 'e2e', 'many_ranks.py'), join(traces, 'generated', 'mpi4'), dir, '64']);
    const files = readdirSync(dir).sort().map((f) => join(dir, f));
    const { page, errors } = await openPage(context, `${server.origin}/`);
    await choose(page, FILES, files);
    assert.equal((await inputNames(page)).length, 10, 'the file table summarises');
    assert.match(await page.textContent('#files-more'), /54 more files/);
    await shot(page, 'workbench-64-inspect');
    await convert(page);
    assert.equal(await page.isHidden('#error'), true, await page.textContent('#error'));
    const ranks = page.locator('[data-testid="host-ranks"]');
    assert.equal(await ranks.getAttribute('data-count'), '64');
    // A heat strip (one cell per rank), not 64 bars; the table pages.
    assert.equal(await page.$$eval('#fig-ranks svg g rect', (r) => r.length), 64);
    assert.equal(await page.$$eval('#ranks-table tbody tr', (r) => r.length), 32);
    assert.ok((await page.$$eval('#warnings li', (l) => l.length)) <= 3, 'warnings are grouped');
    await assertNothingClipped(page, '64 ranks');
    await page.locator('#ranks').scrollIntoViewIfNeeded();
    await shot(page, 'workbench-64-ranks');
    mkdirSync(join(REPO, 'e2e', 'artifacts'), { recursive: true });
    assert.deepEqual(errors, []);
  });
});

describe('outputs on disk', () => {
  test('the trace is kept in the origin\'s private storage, removable, and gone on the next visit', async () => {
    const ctx = await browser.newContext({ acceptDownloads: true });
    const listing = (page) => page.evaluate(async () => {
      const root = await navigator.storage.getDirectory();
      const dir = await root.getDirectoryHandle('prvsight-outputs', { create: true });
      const out = [];
      for await (const [name, h] of dir.entries()) out.push([name, (await h.getFile()).size]);
      return out;
    });
    const first = await openPage(ctx, `${server.origin}/`);
    await first.page.click('#sample');
    await first.page.waitForSelector('#inspect[data-state="done"]');
    await convert(first.page);
    const files = await listing(first.page);
    assert.equal(files.length, 1, JSON.stringify(files));
    assert.match(files[0][0], /testcuda_report1\.prv\.gz$/);
    // The trace file handed out is that file: its size is the download's.
    const size = await first.page.evaluate(() => globalThis.prvsight.state.result.files[0].blob.size);
    assert.equal(files[0][1], size);
    assert.match(await first.page.textContent('#storage'), /on disk .*\d+ KiB for this visit's outputs/);
    // A second visit while the first is open leaves its files alone.
    const second = await openPage(ctx, `${server.origin}/`);
    await second.page.waitForTimeout(500);
    assert.equal((await listing(second.page)).length, 1);
    // Removed on request: the storage is empty, the results hidden.
    await first.page.click('#remove-outputs');
    await first.page.waitForFunction(() => document.querySelector('#results').hidden);
    assert.deepEqual(await listing(second.page), []);
    // Left behind by a closed visit: removed when the page next opens.
    await first.page.click('#sample');
    await first.page.waitForSelector('#inspect[data-state="done"]');
    await convert(first.page);
    assert.equal((await listing(second.page)).length, 1);
    await first.page.close();
    await second.page.close();
    const third = await openPage(ctx, `${server.origin}/`);
    await third.page.waitForFunction(async () => {
      const root = await navigator.storage.getDirectory();
      const dir = await root.getDirectoryHandle('prvsight-outputs', { create: true });
      for await (const _ of dir.entries()) return false;
      return true;
    }, null, { timeout: 10000 });
    await ctx.close();
  });
});

describe('saving to a chosen file', () => {
  test('the bundle goes to the file the user picked first, the same bytes as the download', async () => {
    const ctx = await browser.newContext({ acceptDownloads: true });
    // The browser's save dialog, answered with a file of the origin's private storage.
    await ctx.addInitScript(() => {
      globalThis.showSaveFilePicker = async ({ suggestedName }) => {
        globalThis.pickedName = suggestedName;
        const root = await navigator.storage.getDirectory();
        return root.getFileHandle(`picked-${suggestedName}`, { create: true });
      };
    });
    const { page, errors } = await openPage(ctx, `${server.origin}/`);
    await page.click('#sample');
    await page.waitForSelector('#inspect[data-state="done"]');
    assert.equal(await page.isVisible('#save-to-label'), true);
    await page.check('#opt-save-to');
    await convert(page);
    await page.waitForFunction(() => document.querySelector('#saved-to').textContent.startsWith('Saved to'));
    assert.equal(await page.evaluate(() => globalThis.pickedName), 'testcuda_report1.zip');
    const picked = await page.evaluate(async () => {
      const root = await navigator.storage.getDirectory();
      const f = await (await root.getFileHandle('picked-testcuda_report1.zip')).getFile();
      return [...new Uint8Array(await f.arrayBuffer())];
    });
    const dir = tmp('picked');
    const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#bundle')]);
    const path = join(dir, 'dl.zip');
    await dl.saveAs(path);
    assert.ok(Buffer.from(picked).equals(readFileSync(path)), 'the picked file differs from the download');
    assert.deepEqual(errors, []);
    await ctx.close();
  });
});
