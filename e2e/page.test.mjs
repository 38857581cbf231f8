// The page served from dist/ by a local static server, in headless Debian Chromium: sample and
// real exports convert, the downloads equal the native CLI's output byte for byte and pass the
// checker, charts render, bad files explain themselves, cancel works, it works offline, and no
// request goes anywhere but the page's own origin.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import {
  SAMPLE, TRACES, cli, convert, download, launch, openPage, recordRequests, requireBuilt, sameBytes, serve, shot, tmp,
  tracesOrSkip, unzip, DIST,
} from './helpers.mjs';

requireBuilt();

let server;
let browser;
let context;
let requests;

before(async () => {
  server = await serve(DIST);
  browser = await launch();
  context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1280, height: 900 } });
  requests = recordRequests(context);
});

after(async () => {
  await browser.close();
  server.close();
});

/** The native bundle and plain trace of `files` (run from their folder, so the labels are the
 * bare file names the page uses). */
function native(dir, files, stem) {
  const out = tmp('native');
  cli(['bundle', ...files, '-o', join(out, `${stem}.zip`)], dir);
  cli(['convert', '-q', ...files, '-o', join(out, `${stem}.prv`)], dir);
  return out;
}

/** Checks a downloaded bundle against the CLI: the archive itself, and each file inside. */
function checkBundle(zipPath, nativeDir, stem) {
  assert.ok(sameBytes(zipPath, join(nativeDir, `${stem}.zip`)), 'the browser bundle differs from `prvsight bundle`');
  const x = unzip(zipPath, tmp('unzipped'));
  const folder = join(x, stem);
  const names = readdirSync(folder).sort();
  assert.deepEqual(names.filter((n) => !['cfgs'].includes(n)), ['README.txt', 'metrics.json', `${stem}.pcf`, `${stem}.prv.gz`, `${stem}.row`].sort());
  const prv = gunzipSync(readFileSync(join(folder, `${stem}.prv.gz`)));
  assert.ok(prv.equals(readFileSync(join(nativeDir, `${stem}.prv`))), 'the .prv differs from `prvsight convert`');
  assert.ok(sameBytes(join(folder, `${stem}.pcf`), join(nativeDir, `${stem}.pcf`)), '.pcf differs');
  assert.ok(sameBytes(join(folder, `${stem}.row`), join(nativeDir, `${stem}.row`)), '.row differs');
  // The project's own Paraver checker accepts the trace as downloaded.
  const report = cli(['check', join(folder, `${stem}.prv.gz`)]);
  assert.match(report, /OK: no problem found/);
  const readme = readFileSync(join(folder, 'README.txt'), 'utf8');
  assert.ok(readme.includes(`File > Load Trace... and choose ${stem}.prv.gz.`), readme);
  return folder;
}

describe('served page', () => {
  test('the sample: inspect, convert, bundle equal to the CLI, files, charts', async () => {
    const { page, errors } = await openPage(context, `${server.origin}/`);
    await shot(page, 'page-start');
    await page.click('#sample');
    await page.waitForSelector('#inspect[data-state="done"]');
    const row = await page.textContent('#files tbody tr');
    assert.match(row, /testcuda_report1\.sqlite/);
    assert.match(row, /2026\.1\.1\.204/);
    assert.match(row, /NVIDIA GeForce RTX 4060 Ti/);
    assert.match(await page.textContent('#trace-summary'), /1 GPU\(s\)/);
    await shot(page, 'page-inspect-sample');

    await convert(page);
    assert.equal(await page.isHidden('#error'), true, await page.textContent('#error'));
    // Three workers: one reads the export, one writes the bundle, one gzips the trace (bridge.js,
    // worker.js).
    // Beside them the storage worker, which writes the trace to the origin's private storage.
    assert.equal(page.workers().length, 4, 'a reader, a writer, a gzip worker and the storage worker');
    assert.match(await page.textContent('#storage'), /kept on disk in this browser's private storage/);
    assert.equal(await page.getAttribute('#bundle', 'download'), 'testcuda_report1.zip');
    const dir = tmp('dl-sample');
    const zip = await download(page, '#bundle', dir);
    const nat = native(join(SAMPLE, '..'), ['testcuda_report1.sqlite'], 'testcuda_report1');
    const folder = checkBundle(zip, nat, 'testcuda_report1');

    // The individual trace download is the same bytes as the archive's.
    const trace = await download(page, '#files-out a[data-type="trace"]', dir);
    assert.ok(sameBytes(trace, join(folder, 'testcuda_report1.prv.gz')));
    const metrics = await download(page, '#files-out a[data-type="metrics"]', dir);
    assert.ok(sameBytes(metrics, join(folder, 'metrics.json')));

    // Seven overview charts, each an accessible SVG with drawn content and a data table.
    const charts = await page.$$eval('#chart-list figure', (figs) => figs.map((f) => ({
      id: f.dataset.chart,
      role: f.querySelector('svg').getAttribute('role'),
      title: f.querySelector('svg > title').textContent,
      shapes: f.querySelectorAll('svg g rect').length,
      rows: f.querySelectorAll('table.data tbody tr').length,
    })));
    assert.deepEqual(charts.map((c) => c.id), ['efficiency', 'timeline', 'breakdown', 'transfers', 'kernels', 'overlap', 'histogram']);
    for (const c of charts) {
      assert.equal(c.role, 'img', c.id);
      assert.ok(c.title.length > 5, c.id);
      assert.ok(c.shapes >= 1, `${c.id} draws nothing`);
      assert.ok(c.rows > 0, `${c.id} has no data table`);
    }
    // The sample runs one kernel, add_parallel, 4 times.
    const kernels = await page.$$eval('#fig-kernels table.data tbody tr', (r) => r.map((x) => x.textContent));
    assert.equal(kernels.length, 1);
    assert.match(kernels[0], /add_parallel.*4/);
    // A chart downloads as a standalone SVG and as a PNG.
    const svg = await download(page, '#fig-breakdown a[download$=".svg"]', dir);
    assert.match(readFileSync(svg, 'utf8'), /^<\?xml[^]*<svg[^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"[^]*GPU time breakdown/);
    const png = await download(page, '#fig-breakdown button:has-text("PNG")', dir);
    assert.deepEqual([...readFileSync(png).subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    await shot(page, 'page-converted-sample');
    assert.deepEqual(errors, []);
  });

  test('the workers warm up on the bundled sample as they start, each for its part', async () => {
    // worker.js `warmUp`: V8 optimizes wasm as it runs, so each worker runs its part once on the
    // sample before the user's conversion. Success and failure are both on the console.
    const page = await context.newPage();
    const said = [];
    page.on('console', (m) => {
      if (/prvsight: warm/.test(m.text())) said.push(`${m.type()}: ${m.text()}`);
    });
    await page.goto(`${server.origin}/`);
    await page.waitForSelector('html[data-warm="yes"]', { timeout: 60000 });
    const roles = said.map((s) => /^debug: prvsight: warmed up to (\w+) in \d+ ms/.exec(s)?.[1]).sort();
    assert.deepEqual(roles, ['gzip', 'read', 'write'], said.join('\n'));
    await page.close();
    // Asked not to (`?warmup=0`), none does.
    const cold = await context.newPage();
    const coldSaid = [];
    cold.on('console', (m) => {
      if (/prvsight: warm/.test(m.text())) coldSaid.push(m.text());
    });
    await cold.goto(`${server.origin}/?warmup=0`);
    await cold.waitForSelector('html[data-warm="yes"]', { timeout: 60000 });
    assert.deepEqual(coldSaid, []);
    await cold.close();
  });

  test('a file picked while the workers warm up stops the warm-up, and its conversion still starts from its inspection', async () => {
    // worker.js `warmUp` runs up to WARM_UP_ROUNDS rounds, the reader inspecting the sample in
    // each, and lets a request in between rounds: the user's inspection then ends the warm-up
    // (no round runs after it to drop the files it keeps), and the conversion takes them.
    const { page, errors } = await openPage(context, `${server.origin}/`);
    const rounds = {};
    const most = {};
    const taken = [];
    page.on('console', (m) => {
      const warm = /prvsight: warmed up to (\w+) in \d+ ms, (\d+) of (\d+) rounds/.exec(m.text());
      if (warm) {
        rounds[warm[1]] = Number(warm[2]);
        most[warm[1]] = Number(warm[3]);
      }
      const hit = /prvsight: reading; taken from the inspection: (.*) \(/.exec(m.text());
      if (hit) taken.push(hit[1]);
    });
    assert.equal(await page.getAttribute('html', 'data-warm'), null, 'picked before the warm-up ends');
    await page.click('#sample');
    await page.waitForSelector('#inspect[data-state="done"]');
    await convert(page);
    assert.equal(await page.isHidden('#error'), true, await page.textContent('#error'));
    const nat = native(join(SAMPLE, '..'), ['testcuda_report1.sqlite'], 'testcuda_report1');
    checkBundle(await download(page, '#bundle', tmp('dl-during-warm-up')), nat, 'testcuda_report1');
    assert.deepEqual(taken, ['files and plan, read ahead']);
    // Said as the warm-up ended, before the inspection ran.
    assert.ok(rounds.read >= 1 && rounds.read < most.read, `the reader's warm-up stopped early: ${rounds.read} of ${most.read} rounds`);
    assert.deepEqual(errors, []);
  });

  test('with one worker (?workers=1) the bundle is the same', async () => {
    const { page, errors } = await openPage(context, `${server.origin}/?workers=1`);
    await page.click('#sample');
    await page.waitForSelector('#inspect[data-state="done"]');
    await convert(page);
    assert.equal(await page.isHidden('#error'), true, await page.textContent('#error'));
    assert.equal(page.workers().length, 2, 'the converter gzips the trace itself (beside the storage worker)');
    const zip = await download(page, '#bundle', tmp('dl-one-worker'));
    const nat = native(join(SAMPLE, '..'), ['testcuda_report1.sqlite'], 'testcuda_report1');
    checkBundle(zip, nat, 'testcuda_report1');
    assert.deepEqual(errors, []);
  });

  test('a conversion starts from the inspection of its files, and gives the CLI\'s bytes whatever the options', async () => {
    // The reader worker keeps the inspected files open, with the plan made for them (src/wasm/warm_start.rs):
    // the conversion that follows takes both where its options plan alike, the files alone where
    // they do not; a second conversion of the same files reads them anew. The reader says which.
    const { page, errors } = await openPage(context, `${server.origin}/`);
    const taken = [];
    page.on('console', (m) => {
      const hit = /prvsight: reading; taken from the inspection: (.*) \(/.exec(m.text());
      if (hit) taken.push(hit[1]);
    });
    const sample = ['testcuda_report1.sqlite'];
    const dir = tmp('dl-kept');
    const nat = native(join(SAMPLE, '..'), sample, 'testcuda_report1');
    await page.click('#sample');
    await page.waitForSelector('#inspect[data-state="done"]');
    await convert(page);
    checkBundle(await download(page, '#bundle', dir), nat, 'testcuda_report1');
    await convert(page);
    checkBundle(await download(page, '#bundle', dir), nat, 'testcuda_report1');
    // Inspected again, then fewer families: the same files, a plan of its own.
    await page.click('#sample');
    await page.waitForSelector('#inspect[data-state="done"]');
    const boxes = page.locator('#families input[type=checkbox]');
    assert.ok((await boxes.count()) > 1);
    await boxes.first().uncheck();
    const chosen = await page.$$eval('#families input[type=checkbox]:checked', (b) => b.map((x) => x.value));
    await convert(page);
    assert.equal(await page.isHidden('#error'), true, await page.textContent('#error'));
    const fewer = tmp('native-fewer');
    cli(['bundle', '-t', chosen.join(','), ...sample, '-o', join(fewer, 'testcuda_report1.zip')], join(SAMPLE, '..'));
    assert.ok(sameBytes(await download(page, '#bundle', dir), join(fewer, 'testcuda_report1.zip')), 'the bundle with fewer families');
    // The reading was opened ahead as the inspection showed; after the families changed, opened
    // anew with them (files kept, a plan of their own) before the click.
    assert.deepEqual(taken, ['files and plan, read ahead', 'nothing', 'files and plan, read ahead']);
    assert.deepEqual(errors, []);
  });

  test('a real 2-GPU export: charts per GPU, and a second run compares with it', async (t) => {
    const traces = tracesOrSkip(t);
    if (!traces) return;
    const { page, errors } = await openPage(context, `${server.origin}/`);
    const dir = tmp('dl-mfu');
    for (const name of ['mfu_2gpu_before', 'mfu_2gpu_after']) {
      await page.setInputFiles('#file', join(traces, `${name}.sqlite`));
      await page.waitForSelector('#inspect[data-state="done"]');
      assert.match(await page.textContent('#trace-summary'), /2 GPU\(s\)/);
      // The NVTX names found are offered as metrics windows.
      assert.ok((await page.$$('#opt-nvtx option')).length > 5);
      await convert(page);
      assert.equal(await page.isHidden('#error'), true, await page.textContent('#error'));
      const zip = await download(page, '#bundle', dir);
      checkBundle(zip, native(traces, [`${name}.sqlite`], name), name);
    }
    const gpuRows = await page.$$eval('#fig-timeline table.data tbody tr', (r) => r.length);
    assert.equal(gpuRows, 2);
    await page.waitForSelector('#compare:not([hidden])');
    const compared = await page.$$eval('#compare-list figure', (f) => f.map((x) => x.dataset.chart));
    assert.deepEqual(compared, ['compare-factors', 'compare-kernels', 'compare-breakdown']);
    const factors = await page.textContent('#fig-compare-factors table.data');
    assert.match(factors, /PE/);
    assert.match(factors, /pts/);
    await page.locator('#compare').scrollIntoViewIfNeeded();
    await shot(page, 'page-compare-mfu');
    assert.deepEqual(errors, []);
  });

  test('four MPI ranks become one trace, each file showing its rank', async (t) => {
    const traces = tracesOrSkip(t);
    if (!traces) return;
    const dir = join(traces, 'generated', 'mpi4');
    const files = [0, 1, 2, 3].map((r) => `rank${r}.sqlite`);
    const { page, errors } = await openPage(context, `${server.origin}/`);
    await page.setInputFiles('#file', files.map((f) => join(dir, f)));
    await page.waitForSelector('#inspect[data-state="done"]');
    const rows = await page.$$eval('#files tbody tr', (trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent)));
    assert.deepEqual(rows.map((r) => [r[0], r[5]]), files.map((f, i) => [f, String(i)]));
    assert.equal(await page.isVisible('#align-options'), true);
    await shot(page, 'page-inspect-mpi4');
    await convert(page);
    assert.equal(await page.isHidden('#error'), true, await page.textContent('#error'));
    const zip = await download(page, '#bundle', tmp('dl-mpi'));
    checkBundle(zip, native(dir, files, 'rank0+3'), 'rank0+3');
    assert.deepEqual(errors, []);
  });

  test('an NVTX config file picked gives the bundle of --nvtx-config, and a bad one is refused', async () => {
    const dir = tmp('nvtx-config');
    cli(['synth', 'nvtx_payloads', '-o', join(dir, 'payloads.sqlite')]);
    writeFileSync(join(dir, 'good.toml'), '[domains.Trainer]\npayloads = ["Step", "Phase"]\n');
    writeFileSync(join(dir, 'bad.toml'), '[domains.Solver]\n');
    const nat = tmp('nvtx-config-native');
    cli(['bundle', 'payloads.sqlite', '--nvtx-config', 'good.toml', '-o', join(nat, 'payloads.zip')], dir);
    const { page, errors } = await openPage(context, `${server.origin}/`);
    // Offered only where the files hold NVTX ranges: not for the sample, for the payloads export.
    await page.click('#sample');
    await page.waitForSelector('#inspect[data-state="done"]');
    assert.equal(await page.isHidden('#nvtx-config-options'), true, 'an NVTX config offered without NVTX');
    await page.setInputFiles('#file', join(dir, 'payloads.sqlite'));
    // Visible once the new files' inspection is shown.
    await page.waitForSelector('#nvtx-config-options:not([hidden])');
    await page.setInputFiles('#opt-nvtx-config', join(dir, 'good.toml'));
    await page.waitForSelector('#opt-nvtx-config[data-loaded="good.toml"]');
    await convert(page);
    assert.equal(await page.isHidden('#error'), true, await page.textContent('#error'));
    const zip = await download(page, '#bundle', tmp('dl-nvtx-config'));
    assert.ok(sameBytes(zip, join(nat, 'payloads.zip')), 'the bundle with an NVTX config');
    assert.deepEqual(errors, []);
    await page.setInputFiles('#opt-nvtx-config', join(dir, 'bad.toml'));
    await page.waitForSelector('#opt-nvtx-config[data-loaded="bad.toml"]');
    await convert(page);
    assert.equal(await page.isVisible('#error'), true, 'a config naming a missing domain converts');
    assert.match(await page.textContent('#error-message'), /bad\.toml: the exports have no NVTX domain 'Solver'/);
  });

  test('bad files show what is wrong and what to do', async () => {
    const { page } = await openPage(context, `${server.origin}/`);
    const dir = tmp('bad');
    const cases = [
      ['notes.sqlite', Buffer.from('not a database at all, just a text file that someone renamed '.repeat(4)), 'not-sqlite', /notes\.sqlite: not a readable SQLite database/],
      ['report.sqlite', Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 1, 2, 3]), 'not-sqlite', /gzip/],
      ['half.sqlite', readFileSync(SAMPLE).subarray(0, 100000), null, /half\.sqlite: /],
    ];
    for (const [name, bytes, kind, message] of cases) {
      writeFileSync(join(dir, name), bytes);
      await page.setInputFiles('#file', join(dir, name));
      await page.waitForSelector('#inspect[data-state="done"], #inspect[data-state="failed"]');
      if (await page.isHidden('#error')) {
        // Opened: the damage shows when converting.
        await convert(page);
      }
      assert.equal(await page.isVisible('#error'), true, `${name}: no error shown`);
      assert.match(await page.textContent('#error-message'), message);
      assert.ok((await page.textContent('#error-hint')).length > 20, `${name}: no hint`);
      if (kind) assert.equal(await page.getAttribute('#error', 'data-kind'), kind);
      await shot(page, `page-error-${name.replace('.', '-')}`);
    }
  });

  test('cancel stops a conversion and the next one works', async () => {
    const { page } = await openPage(context, `${server.origin}/`);
    await page.click('#sample');
    await page.waitForSelector('#inspect[data-state="done"]');
    // Click Convert and Cancel in the same task: the worker is stopped before it answers.
    await page.evaluate(() => {
      document.querySelector('#convert').click();
      document.querySelector('#cancel').click();
    });
    await page.waitForSelector('#error:not([hidden])');
    assert.equal(await page.getAttribute('#error', 'data-kind'), 'cancelled');
    assert.equal(await page.isHidden('#progress'), true);
    await convert(page);
    assert.equal(await page.isHidden('#error'), true);
    assert.equal(await page.isVisible('#bundle'), true);
  });

  test('works offline once visited', async () => {
    const page = await context.newPage();
    await page.goto(`${server.origin}/`);
    await page.waitForSelector('html[data-offline-ready="yes"]', { timeout: 30000 });
    await context.setOffline(true);
    try {
      await page.reload();
      await page.waitForSelector('html[data-ready="yes"]', { timeout: 30000 });
      await page.click('#sample');
      await page.waitForSelector('#inspect[data-state="done"]');
      await convert(page);
      assert.equal(await page.isHidden('#error'), true, await page.textContent('#error'));
      assert.match(await page.textContent('#offline-status'), /offline/);
      await shot(page, 'page-offline');
    } finally {
      await context.setOffline(false);
    }
  });

  test('the embed snippet shows the converter inside another site\'s page', async () => {
    // The host page lives on another origin, as a course wiki would.
    const hostDir = tmp('host');
    writeFileSync(join(hostDir, 'course.html'), `<!doctype html><html lang="en"><head><title>GPU course</title></head><body>
<h1>Lab 3: look at your run</h1>
<script src="${server.origin}/embed.js" defer></script>
<prvsight-converter></prvsight-converter>
</body></html>`);
    const host = await serve(hostDir);
    const other = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    try {
      const page = await other.newPage();
      await page.goto(`${host.origin}/course.html`);
      const frame = page.frameLocator('prvsight-converter iframe');
      await frame.locator('html[data-ready="yes"]').waitFor({ timeout: 30000 });
      assert.equal(await frame.locator('html').getAttribute('class'), 'embedded');
      await frame.locator('#sample').click();
      await frame.locator('#inspect[data-state="done"]').waitFor();
      // The frame grew to its content (no inner scroll bar).
      await page.waitForFunction(() => document.querySelector('prvsight-converter iframe').offsetHeight > 1000);
      // Converted inside the frame, the timeline shows too.
      await frame.locator('#convert').click();
      await frame.locator('[data-testid="timeline"][data-rows="8"]').waitFor({ timeout: 60000 });
      await shot(page, 'embed-host-page');
    } finally {
      await other.close();
      host.close();
    }
  });

  test('no request left the page\'s origin', () => {
    assert.ok(requests.length > 10, 'requests were recorded');
    const foreign = requests.filter((u) => !u.startsWith(`${server.origin}/`) && !u.startsWith('blob:') && !u.startsWith('data:'));
    assert.deepEqual(foreign, []);
  });
});
