// Shared by the end-to-end tests: paths, a local static server, headless Debian Chromium,
// request recording, unzip and the native CLI.
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

export const REPO = join(dirname(fileURLToPath(import.meta.url)), '..');
export const DIST = join(REPO, 'dist');
export const TRACES = join(REPO, '..', 'shared', 'traces');
export const CLI = join(REPO, 'target', 'release', 'prvsight');
export const ARTIFACTS = join(REPO, 'e2e', 'artifacts');
export const SAMPLE = join(REPO, 'www', 'samples', 'testcuda_report1.sqlite');
mkdirSync(ARTIFACTS, { recursive: true });

export function requireBuilt() {
  for (const p of [join(DIST, 'index.html'), join(DIST, 'prvsight.html'), CLI]) {
    if (!existsSync(p)) throw new Error(`${p} is missing: run scripts/build-web.sh and cargo build --release first (scripts/test-web.sh does both)`);
  }
}

/** The shared real exports, or null (and a visible SKIP) when this checkout lacks them. */
export function tracesOrSkip(t) {
  if (existsSync(TRACES)) return TRACES;
  t.diagnostic(`SKIP: ${TRACES} is not present`);
  t.skip(`SKIP: ${TRACES} is not present`);
  return null;
}

/** Serves `dir` on 127.0.0.1 with python's http.server on a free port. */
export async function serve(dir) {
  const proc = spawn('python3', ['-u', '-m', 'http.server', '0', '--bind', '127.0.0.1', '--directory', dir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const port = await new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`http.server did not start: ${out}`)), 10000);
    proc.stdout.on('data', (d) => {
      out += d;
      const m = /port (\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    proc.on('exit', (c) => reject(new Error(`http.server exited (${c}): ${out}`)));
  });
  return { origin: `http://127.0.0.1:${port}`, close: () => proc.kill() };
}

/** Chromium's flags for the tests and benchmarks. */
export const LAUNCH_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'];

export async function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: LAUNCH_ARGS,
  });
}

/** Every request the context makes (pages, workers, service worker), as URLs. */
export function recordRequests(context) {
  const urls = [];
  context.on('request', (r) => urls.push(r.url()));
  return urls;
}

export function tmp(prefix) {
  return mkdtempSync(join(tmpdir(), `prvsight-e2e-${prefix}-`));
}

/** Extracts a zip with the standard `unzip` (the bundle must open with standard tools). */
export function unzip(zip, dest) {
  execFileSync('unzip', ['-q', '-o', zip, '-d', dest]);
  return dest;
}

export function cli(args, cwd = REPO) {
  return execFileSync(CLI, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

export function sameBytes(a, b) {
  const x = readFileSync(a);
  const y = readFileSync(b);
  return x.length === y.length && x.equals(y);
}

/** Opens `url`, waits until the converter's worker answered its version. */
export async function openPage(context, url) {
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  await page.goto(url);
  await page.waitForSelector('html[data-ready="yes"]', { timeout: 30000 });
  return { page, errors };
}

/** Clicks Convert and waits for the results (or an error). */
export async function convert(page) {
  await page.click('#convert');
  await page.waitForSelector('#results:not([hidden]), #error:not([hidden])', { timeout: 120000 });
}

/** Downloads what the link `selector` points at into `dir`; returns the saved path. */
export async function download(page, selector, dir) {
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click(selector)]);
  const path = join(dir, dl.suggestedFilename());
  await dl.saveAs(path);
  return path;
}

export async function shot(page, name) {
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}
