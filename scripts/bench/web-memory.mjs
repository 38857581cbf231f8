// Browser memory on a big export: how much the whole Chromium process tree grows over its idle
// footprint while the page inspects the export, converts it and hands out the bundle, sampled
// from /proc every 200 ms; the page's own timing of the conversion beside the native CLI's
// `bundle`; and whether the page's bundle is the CLI's, byte for byte.
//
//   node scripts/bench/web-memory.mjs INPUT.sqlite [--cli PATH] [--memory]
//
// --memory: the page keeps its outputs in memory (`?outputs=memory`) instead of on disk.
//
// Make the input with prvsight-inflate (e.g. `target/release/prvsight-inflate
// www/samples/testcuda_report1.sqlite --target-mb 1850 -o /tmp/big.sqlite`); docs/PERFORMANCE.md
// gives the figures. Linux only (/proc). Uses the e2e helpers (headless Debian Chromium).
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { chromium } from '../../e2e/node_modules/playwright-core/index.mjs';
import { CLI, DIST, LAUNCH_ARGS, requireBuilt, sameBytes, serve, tmp } from '../../e2e/helpers.mjs';

requireBuilt();
const args = process.argv.slice(2);
const cliAt = args.indexOf('--cli');
const cli = cliAt >= 0 ? args[cliAt + 1] : CLI;
const input = args.find((a, i) => !a.startsWith('--') && (cliAt < 0 || i !== cliAt + 1));
if (!input) throw new Error('usage: node scripts/bench/web-memory.mjs INPUT.sqlite [--cli PATH]');

/** Chromium's name for a process of its tree: its `--type=` (renderer, gpu-process, …) or
 * `browser`; other programs by their name. */
function kind(p) {
  try {
    // Chromium rewrites its children's command lines into one string: look for the flag in it.
    const cmd = readFileSync(`/proc/${p}/cmdline`, 'utf8');
    const type = /--type=([\w-]+)/.exec(cmd);
    if (type) return type[1];
    return /chrom/.test(cmd) ? 'browser' : basename(cmd.split('\0')[0]);
  } catch {
    return 'gone';
  }
}

/** Resident memory (bytes) of the descendants of process `pid` (not itself), in all and per
 * kind of process. */
function treeRss(pid) {
  const children = new Map();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(d));
    } catch {
      // Gone meanwhile.
    }
  }
  let total = 0;
  const byKind = new Map();
  const stack = [...(children.get(pid) || [])];
  while (stack.length) {
    const p = stack.pop();
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${p}/status`, 'utf8'));
      if (m) {
        total += Number(m[1]) * 1024;
        const k = kind(p);
        byKind.set(k, (byKind.get(k) || 0) + Number(m[1]) * 1024);
      }
    } catch {
      // Gone meanwhile.
    }
    stack.push(...(children.get(p) || []));
  }
  return { total, byKind };
}

/** Samples the RSS of `pid`'s descendants every 200 ms into phases; `phase(name)` starts the
 * next one. */
function sampler(pid) {
  const peaks = new Map();
  const kinds = new Map();
  let current = 'idle';
  const timer = setInterval(() => {
    const { total, byKind } = treeRss(pid);
    peaks.set(current, Math.max(peaks.get(current) || 0, total));
    for (const [k, v] of byKind) {
      const key = `${current} ${k}`;
      kinds.set(key, Math.max(kinds.get(key) || 0, v));
    }
  }, 200);
  return {
    phase(name) {
      current = name;
    },
    stop() {
      clearInterval(timer);
      return { peaks, kinds };
    },
  };
}

const mib = (b) => (b / 2 ** 20).toFixed(0);

// Native first, alone on the machine.
const nat = tmp('memory-native');
const name = basename(input);
const t0 = performance.now();
execFileSync(cli, ['bundle', '-q', name, '-o', join(nat, `${name.replace(/\.sqlite$/, '')}.zip`)], { cwd: dirname(input), stdio: 'ignore' });
const nativeSeconds = (performance.now() - t0) / 1000;

const server = await serve(DIST);
// A persistent profile, as a user's: in an incognito one (Playwright's default contexts) the
// origin's private storage is kept in the browser's memory, not on disk.
const context = await chromium.launchPersistentContext(tmp('memory-profile'), {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  acceptDownloads: true,
  args: LAUNCH_ARGS,
});
// Chromium runs as this script's child: its whole process tree is what this script spawned.
const pid = process.pid;
try {
  const page = await context.newPage();
  // The workers report their wasm memory (it only grows: its peak) after an inspection and a
  // conversion.
  const wasm = [];
  page.on('console', (m) => {
    if (/prvsight: wasm memory/.test(m.text())) wasm.push(m.text().replace('prvsight: ', ''));
  });
  await page.goto(`${server.origin}/${args.includes('--memory') ? '?outputs=memory' : ''}`);
  await page.waitForSelector('html[data-warm]', { timeout: 600000 });
  await new Promise((r) => setTimeout(r, 2000));
  const s = sampler(pid);
  await new Promise((r) => setTimeout(r, 2000));
  s.phase('inspection');
  await page.setInputFiles('input[data-testid="files"]', input);
  await page.waitForSelector('#inspect[data-state="done"], #inspect[data-state="failed"]', { timeout: 3600000 });
  s.phase('conversion');
  await page.click('#convert');
  await page.waitForFunction(() => document.querySelector('#results[data-seconds], #error:not([hidden])'), null, { polling: 500, timeout: 3600000 });
  if (await page.isVisible('#error')) throw new Error(`the page failed: ${await page.textContent('#error')}`);
  const pageSeconds = Number(await page.getAttribute('#results', 'data-seconds'));
  s.phase('download');
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#bundle')]);
  const saved = join(tmp('memory-page'), dl.suggestedFilename());
  await dl.saveAs(saved);
  const storage = await page.textContent('#storage');
  const { peaks, kinds } = s.stop();
  const idle = peaks.get('idle');
  const same = sameBytes(saved, join(nat, dl.suggestedFilename()));
  console.log(`input: ${input} (${mib(statSync(input).size)} MiB)`);
  console.log(`native bundle: ${nativeSeconds.toFixed(1)} s; page (from the click): ${pageSeconds.toFixed(1)} s = ${(pageSeconds / nativeSeconds).toFixed(2)}× native`);
  console.log(`bundle ${dl.suggestedFilename()}: ${mib(statSync(saved).size)} MiB, ${same ? 'the same bytes as the CLI' : 'DIFFERENT from the CLI'}`);
  console.log(`Chromium process tree, idle: ${mib(idle)} MiB`);
  for (const phase of ['inspection', 'conversion', 'download']) {
    console.log(`  ${phase}: peak ${mib(peaks.get(phase) || 0)} MiB, +${mib((peaks.get(phase) || 0) - idle)} MiB over idle`);
  }
  const byKind = [...kinds.entries()].map(([k, v]) => `${k} ${mib(v)}`).join(', ');
  console.log(`  peaks per process kind (MiB): ${byKind}`);
  console.log(`page says: ${storage}`);
  console.log(`workers: ${wasm.join('; ')}`);
  if (!same) process.exitCode = 1;
} finally {
  await context.close();
  server.close();
}
