// Browser throughput: the page (dist/, built by scripts/build-web.sh) converts an export in its
// workers, timed by the page itself from the Convert click to the results and charts shown;
// compared with the native CLI doing the same job (`prvsight bundle`: .prv.gz, .pcf, .row, cfgs
// and metrics.json in a zip, as the page does), with and without its second reading thread.
//
//   node scripts/bench/web.mjs [--page-only] [--cold] INPUT.sqlite [INPUT.sqlite ...]
//
// --cold: the page without its workers' warm-up (`?warmup=0`), the conversion then running on
// V8's baseline code until its hot functions are optimized.
//
// Uses the e2e helpers (headless Debian Chromium through playwright-core in e2e/node_modules).
import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, DIST, launch, requireBuilt, serve, tmp } from '../../e2e/helpers.mjs';

requireBuilt();
// --page-only: skip the native timings (e.g. to measure the worker's memory alone).
const pageOnly = process.argv.includes('--page-only');
const coldStart = process.argv.includes('--cold');
const inputs = process.argv.slice(2).filter((a) => !a.startsWith('--'));
// Native first, before the browser starts, so that the two never share the CPU: as it runs by
// default (reading on a second thread), and on one thread as the worker does (--read-ahead off).
const bundle = (input, extra) => {
  const out = join(tmp('bench'), 'native.zip');
  const t0 = performance.now();
  execFileSync(CLI, ['bundle', '-q', ...extra, input, '-o', out], { stdio: 'ignore' });
  return (performance.now() - t0) / 1000;
};
const native = inputs.map((input) => (pageOnly ? NaN : bundle(input, [])));
const nativeOne = inputs.map((input) => (pageOnly ? NaN : bundle(input, ['--read-ahead', 'off'])));
const server = await serve(DIST);
try {
  console.log('| input | native bundle s | native bundle, one thread s | page (wasm, workers) s | wasm / native | wasm / native one thread | wasm memory MiB |');
  console.log('|---|---|---|---|---|---|---|');
  for (const [i, input] of inputs.entries()) {
    const mb = statSync(input).size / 1048576;
    // A browser of its own per input: no compiled code or cache left from an earlier page.
    const browser = await launch();
    const page = await browser.newPage();
    // Each worker reports its wasm memory size (it only grows: the peak) on the console; the
    // page's is their sum.
    const workerMemory = new Map();
    page.on('console', (m) => {
      const hit = /prvsight: wasm memory (\d+) bytes \((.*)\)/.exec(m.text());
      if (hit) workerMemory.set(hit[2], Number(hit[1]));
    });
    await page.goto(`${server.origin}/${coldStart ? '?warmup=0' : ''}`);
    await page.setInputFiles('#file', input);
    await page.waitForSelector('#inspect:not([hidden])', { timeout: 600000 });
    // The workers convert the bundled sample once when they start (worker.js `warmUp`), while a
    // user picks a file; the click comes after, as a user's would (`?warmup=0`: without it).
    if (!coldStart) await page.waitForSelector('html[data-warm]', { timeout: 600000 });
    await page.click('#convert');
    await page.waitForSelector('#results[data-seconds], #error:not([hidden])', { timeout: 3600000 });
    // The page's own time from the click to the results and charts shown (app.js): what this
    // script would time itself adds Playwright's latency (~0.3 s, most of a 10 MB conversion).
    const failed = await page.isVisible('#error');
    const wasm = failed ? NaN : Number(await page.getAttribute('#results', 'data-seconds'));
    const note = failed ? ` (page error: ${(await page.textContent('#error')).trim().slice(0, 200)})` : '';
    await page.close();
    await browser.close();
    const fixed = (x) => (Number.isNaN(x) ? '-' : x.toFixed(2));
    const cells = [
      `${mb.toFixed(0)} MiB`,
      fixed(native[i]),
      fixed(nativeOne[i]),
      `${wasm.toFixed(2)}${note}`,
      fixed(wasm / native[i]),
      fixed(wasm / nativeOne[i]),
      workerMemory.size ? ([...workerMemory.values()].reduce((a, b) => a + b, 0) / 1048576).toFixed(0) : '?',
    ];
    console.log(`| ${cells.join(' | ')} |`);
  }
} finally {
  server.close();
}
