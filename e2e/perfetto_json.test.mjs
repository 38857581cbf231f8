// The Chrome/Perfetto JSON beside the bundle: asked for under Options, made by the same pass as
// the bundle (on the split workers and on one), downloaded from the results, the bytes of
// `prvsight convert -o NAME.json`, parsing as JSON with one complete event per record of each
// family; the bundle is unchanged by it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SAMPLE, cli, convert, download, launch, openPage, requireBuilt, sameBytes, serve, shot, tmp, DIST } from './helpers.mjs';

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

/** The CLI's JSON and bundle of the sample (run from its folder: the page's labels). */
function nativeOutputs() {
  const out = tmp('native-json');
  const dir = join(SAMPLE, '..');
  cli(['convert', '-q', 'testcuda_report1.sqlite', '-o', join(out, 'testcuda_report1.json')], dir);
  cli(['bundle', '-q', 'testcuda_report1.sqlite', '-o', join(out, 'testcuda_report1.zip')], dir);
  return out;
}

/** Complete events per `cat`. */
function categories(path) {
  const trace = JSON.parse(readFileSync(path, 'utf8'));
  const counts = {};
  for (const e of trace.traceEvents) if (e.ph === 'X') counts[e.cat] = (counts[e.cat] || 0) + 1;
  return { trace, counts };
}

/** Converts the sample with the JSON asked for in the page at `query`; checks the downloads. */
async function convertWithJson(query, name) {
  const { page, errors } = await openPage(context, `${server.origin}/${query}`);
  await page.click('#sample');
  await page.waitForSelector('#inspect[data-state="done"]');
  await page.check('#opt-json');
  await convert(page);
  assert.equal(await page.isHidden('#error'), true, await page.textContent('#error'));
  assert.equal(await page.isVisible('#json-out'), true, 'the JSON download is offered');
  assert.equal(await page.getAttribute('#json-out', 'download'), 'testcuda_report1.json');
  const dir = tmp(`dl-json-${name}`);
  const json = await download(page, '#json-out', dir);
  const nat = nativeOutputs();
  assert.ok(sameBytes(json, join(nat, 'testcuda_report1.json')), 'the page\'s JSON differs from `prvsight convert -o x.json`');
  // The bundle made in the same pass is the one made without the JSON.
  assert.ok(sameBytes(await download(page, '#bundle', dir), join(nat, 'testcuda_report1.zip')), 'the bundle changed');
  const { trace, counts } = categories(json);
  assert.equal(trace.displayTimeUnit, 'ns');
  // The sample's rows: 4 kernels, 12 memcpys, 44 CUDA API calls (docs/test-data.md).
  assert.equal(counts.kernel, 4);
  assert.equal(counts.memcpy, 12);
  assert.equal(counts['cuda-api'], 44);
  // The nsys2prv 0.6 families the sample holds: 2 CUDA events, 4 pthread calls.
  assert.equal(counts['cuda-event'], 2);
  assert.equal(counts.pthread, 4);
  // The page says what it holds: as many events as the complete events of every category.
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  assert.match(await page.textContent('#json-help'), new RegExp(`\\(${total.toLocaleString('en-US')} events`));
  return { page, errors };
}

describe('the Chrome/Perfetto JSON in the page', () => {
  test('split over three workers: downloaded beside the bundle, the CLI\'s bytes', async () => {
    const { page, errors } = await convertWithJson('', 'split');
    await page.locator('#results').screenshot({ path: join(import.meta.dirname, 'artifacts', 'page-json-results.png') });
    await shot(page, 'page-json-converted');
    assert.deepEqual(errors, []);
  });

  test('on one worker (?workers=1) the same JSON', async () => {
    const { errors } = await convertWithJson('?workers=1', 'one');
    assert.deepEqual(errors, []);
  });

  test('not asked for: no JSON, a line saying how to get one', async () => {
    const { page, errors } = await openPage(context, `${server.origin}/`);
    await page.click('#sample');
    await page.waitForSelector('#inspect[data-state="done"]');
    await convert(page);
    assert.equal(await page.isHidden('#json-line'), true);
    assert.match(await page.textContent('#json-help'), /tick “Also a Chrome\/Perfetto JSON”/);
    assert.deepEqual(errors, []);
  });
});
