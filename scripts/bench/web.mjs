// Browser throughput: the page (dist/, built by scripts/build-web.sh) converts an export in its
// workers, timed by the page itself from the Convert click to the results and charts shown;
// compared with the native CLI doing the same job (`prvsight bundle`: .prv.gz, .pcf, .row, cfgs
// and metrics.json in a zip, as the page does), with and without its second reading thread.
// The page inspects a file as soon as it is picked, and that inspection is the conversion's
// discovery, which the conversion then reuses (src/wasm/warm_start.rs); so the inspection's time is
// reported too (timed by the page from the file chosen to its report shown), and the sum of the
// two is set against the native bundle as well: the page's time for the whole job.
//
//   node scripts/bench/web.mjs [--page-only] [--cold] [--runs N] [--cli PATH] INPUT [INPUT ...]
//
// An INPUT is an export, or a folder whose .sqlite files are one run's ranks (all chosen at
// once, as a user picks them; e.g. `prvsight synth mpi_run --ranks 256 -o DIR`).
//
// --cli PATH: the native CLI to compare with (default target/release/prvsight, the plain release
// build; scripts/build-cli.sh prints the profile-guided one's path).
//
// --runs N: each timing is the fastest of N runs (default 3; this project's VMs drift by ±10 %
// from one run to the next), native and page alike.
//
// --cold: the page without its workers' warm-up (`?warmup=0`), the conversion then running on
// V8's baseline code until its hot functions are optimized.
//
// Uses the e2e helpers (headless Debian Chromium through playwright-core in e2e/node_modules).
import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, DIST, launch, requireBuilt, serve, tmp } from '../../e2e/helpers.mjs';

requireBuilt();
// --page-only: skip the native timings (e.g. to measure the worker's memory alone).
const args = process.argv.slice(2);
const pageOnly = args.includes('--page-only');
const coldStart = args.includes('--cold');
const runsAt = args.indexOf('--runs');
const runs = runsAt >= 0 ? Number(args[runsAt + 1]) : 3;
if (!(runs >= 1)) throw new Error('--runs takes a number of runs, 1 or more');
const cliAt = args.indexOf('--cli');
const cli = cliAt >= 0 ? args[cliAt + 1] : CLI;
if (!cli) throw new Error('--cli takes the path of a prvsight binary');
const valued = [runsAt, cliAt].filter((i) => i >= 0).map((i) => i + 1);
const inputs = args.filter((a, i) => !a.startsWith('--') && !valued.includes(i));
const fastest = (times) => Math.min(...times);
/** The files of one input: the export, or the .sqlite files of a folder, in name order. */
const filesOf = (input) =>
  statSync(input).isDirectory()
    ? readdirSync(input).filter((f) => f.endsWith('.sqlite')).sort().map((f) => join(input, f))
    : [input];
// Native first, before the browser starts, so that the two never share the CPU: as it runs by
// default (reading on a second thread), and on one thread as the worker does (--read-ahead off).
const bundle = (input, extra) => {
  const out = join(tmp('bench'), 'native.zip');
  const t0 = performance.now();
  execFileSync(cli, ['bundle', '-q', ...extra, ...filesOf(input), '-o', out], { stdio: 'ignore' });
  return (performance.now() - t0) / 1000;
};
const nativeRuns = (input, extra) => fastest(Array.from({ length: runs }, () => bundle(input, extra)));
const native = inputs.map((input) => (pageOnly ? NaN : nativeRuns(input, [])));
const nativeOne = inputs.map((input) => (pageOnly ? NaN : nativeRuns(input, ['--read-ahead', 'off'])));
const server = await serve(DIST);

/** One conversion of `input` by the page: its seconds (the page's own timing), the workers'
 * wasm memory (bytes, their sum; null if none reported), or a note on the page's error. */
async function pageRun(input) {
  // A browser of its own per run: no compiled code or cache left from an earlier page.
  const browser = await launch();
  try {
    const page = await browser.newPage();
    // Each worker reports its wasm memory size (it only grows: the peak) on the console; the
    // page's is their sum.
    const workerMemory = new Map();
    page.on('console', (m) => {
      const hit = /prvsight: wasm memory (\d+) bytes \((.*)\)/.exec(m.text());
      if (hit) workerMemory.set(hit[2], Number(hit[1]));
    });
    await page.goto(`${server.origin}/${coldStart ? '?warmup=0' : ''}`);
    // The workers convert the bundled sample once when they start (worker.js `warmUp`), while a
    // user looks for a file; the file comes after, as a user's would (`?warmup=0`: without it).
    if (!coldStart) await page.waitForSelector('html[data-warm]', { timeout: 600000 });
    await page.setInputFiles('#file', filesOf(input));
    await page.waitForSelector('#inspect[data-seconds]:not([hidden])', { timeout: 3600000 });
    const inspection = Number(await page.getAttribute('#inspect', 'data-seconds'));
    await page.click('#convert');
    // Looked for every 100 ms: Playwright's selector waits query the page at every animation
    // frame, on the page's main thread, which shares the two cores with the conversion's
    // workers (~25 ms of that thread during a 10 MB conversion in a CPU profile). The page times
    // itself, so when this script notices the end does not change what it reads.
    await page.waitForFunction(() => document.querySelector('#results[data-seconds], #error:not([hidden])'), null, {
      polling: 100,
      timeout: 3600000,
    });
    // The page's own time from the click to the results and charts shown (app.js): what this
    // script would time itself adds Playwright's latency (~0.3 s, most of a 10 MB conversion).
    if (await page.isVisible('#error')) {
      return { seconds: NaN, inspection, memory: null, note: ` (page error: ${(await page.textContent('#error')).trim().slice(0, 200)})` };
    }
    const seconds = Number(await page.getAttribute('#results', 'data-seconds'));
    const memory = workerMemory.size ? [...workerMemory.values()].reduce((a, b) => a + b, 0) : null;
    return { seconds, inspection, memory, note: '' };
  } finally {
    await browser.close();
  }
}

try {
  console.log('| input | native bundle s | native bundle, one thread s | page (wasm, workers) s | wasm / native | wasm / native one thread | wasm memory MiB | page inspection s | inspection + conversion s | (inspection + conversion) / native |');
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const [i, input] of inputs.entries()) {
    const files = filesOf(input);
    const mb = files.reduce((sum, f) => sum + statSync(f).size, 0) / 1048576;
    const tries = [];
    for (let r = 0; r < runs; r++) tries.push(await pageRun(input));
    const failed = tries.find((t) => t.note);
    const wasm = failed ? NaN : fastest(tries.map((t) => t.seconds));
    const note = failed ? failed.note : '';
    // Memory and inspection of the fastest run (the runs differ by little).
    const { memory, inspection } = tries.find((t) => t.seconds === wasm) || tries[0];
    const whole = fastest(tries.map((t) => t.inspection + t.seconds));
    const fixed = (x) => (Number.isNaN(x) ? '-' : x.toFixed(2));
    const cells = [
      `${mb.toFixed(0)} MiB${files.length > 1 ? ` (${files.length} files)` : ''}`,
      fixed(native[i]),
      fixed(nativeOne[i]),
      `${wasm.toFixed(2)}${note}`,
      fixed(wasm / native[i]),
      fixed(wasm / nativeOne[i]),
      memory === null ? '?' : (memory / 1048576).toFixed(0),
      fixed(inspection),
      fixed(whole),
      fixed(whole / native[i]),
    ];
    console.log(`| ${cells.join(' | ')} |`);
  }
} finally {
  server.close();
}
