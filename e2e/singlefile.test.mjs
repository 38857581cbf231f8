// dist/prvsight.html opened from disk (file://), as on a USB stick: it converts the inlined
// sample to the same bundle as the CLI, draws its charts, and requests nothing from any server.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { DIST, SAMPLE, cli, convert, download, launch, openPage, recordRequests, requireBuilt, sameBytes, shot, tmp, unzip } from './helpers.mjs';

requireBuilt();

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser.close();
});

test('the single file works from file:// with no network at all', async () => {
  const context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1280, height: 900 } });
  const requests = recordRequests(context);
  const url = pathToFileURL(join(DIST, 'prvsight.html')).href;
  const { page, errors } = await openPage(context, url);
  assert.match(await page.textContent('#offline-status'), /single file/);
  await page.click('#sample');
  await page.waitForSelector('#inspect[data-state="done"]');
  assert.match(await page.textContent('#files tbody'), /2026\.1\.1\.204/);
  await convert(page);
  assert.equal(await page.isHidden('#error'), true, await page.textContent('#error'));
  const dir = tmp('single');
  const zip = await download(page, '#bundle', dir);

  const nat = tmp('single-native');
  const samples = join(SAMPLE, '..');
  cli(['bundle', 'testcuda_report1.sqlite', '-o', join(nat, 'testcuda_report1.zip')], samples);
  cli(['convert', '-q', 'testcuda_report1.sqlite', '-o', join(nat, 'testcuda_report1.prv')], samples);
  assert.ok(sameBytes(zip, join(nat, 'testcuda_report1.zip')), 'the single-file bundle differs from `prvsight bundle`');
  const x = unzip(zip, tmp('single-unzip'));
  const prv = gunzipSync(readFileSync(join(x, 'testcuda_report1', 'testcuda_report1.prv.gz')));
  assert.ok(prv.equals(readFileSync(join(nat, 'testcuda_report1.prv'))));

  assert.equal(await page.$$eval('#chart-list svg[role="img"]', (s) => s.length), 7);
  // The timeline too: drawn, and a wheel turn over it zooms in.
  const tl = '[data-testid="timeline"]';
  await page.waitForSelector(`${tl}[data-rows="8"][data-drawn-range="0-${prv.toString('latin1', 0, 200).match(/:(\d+)_ns:/)[1]}"]`);
  await page.$eval(tl, (el) => el.scrollIntoView({ block: 'start' }));
  const box = await page.$eval('#tl-canvas', (c) => c.getBoundingClientRect().toJSON());
  await page.mouse.move(box.x + 240 + (box.width - 240) / 2, box.y + 60);
  await page.mouse.wheel(0, -400);
  await page.waitForFunction((sel) => {
    const el = document.querySelector(sel);
    return el.dataset.range === el.dataset.drawnRange && !el.dataset.range.startsWith('0-');
  }, tl);
  await shot(page, 'single-file-converted');

  // Only the file itself and in-page blob:/data: URLs: no http(s), no other file.
  const other = requests.filter((u) => u !== url && !u.startsWith('blob:') && !u.startsWith('data:'));
  assert.deepEqual(other, []);
  assert.deepEqual(errors, []);
  await context.close();
});

test('the single file refuses network connections by its CSP', async () => {
  const context = await browser.newContext();
  const { page } = await openPage(context, pathToFileURL(join(DIST, 'prvsight.html')).href);
  const csp = await page.getAttribute('meta[http-equiv="Content-Security-Policy"]', 'content');
  assert.match(csp, /connect-src 'none'/);
  assert.match(csp, /default-src 'none'/);
  const outcome = await page.evaluate(() => fetch('https://example.org/').then(() => 'fetched', (e) => `blocked: ${e.name}`));
  assert.match(outcome, /^blocked/);
  await context.close();
});
