// The timeline's budgets in headless Chromium at 1400×900 (issue 42; docs/PERFORMANCE.md):
//   - the first picture after the conversion's results are shown (the page's data-first-frame-ms);
//   - each zoom / pan / view-change frame, from its request to the worker to the canvas drawn
//     (data-frame-ms), over a fixed walk: wheel zooms at the pointer, drags, keys, every view;
//   - the timeline's memory (its own count, `bytes`) and the workers' wasm memory, with the
//     timeline and without it (`?timeline=off`), and the conversion's time both ways (the page's
//     own timing), alternated run by run so that the machine's drift hits both alike.
//
//   node scripts/bench/timeline.mjs [--runs N] INPUT [INPUT ...]
//
// An INPUT is an export, or a folder whose .sqlite files are one run's ranks (e.g. 128 ranks x 4
// streams: `python3 e2e/gpu_ranks.py www/samples/testcuda_report1.sqlite /tmp/ranks128 128`).
//
// Make inputs with prvsight-inflate, e.g. `target/release/prvsight-inflate
// www/samples/testcuda_report1.sqlite --target-mb 600 -o /tmp/tl600.sqlite`.
// Uses the e2e helpers (headless Debian Chromium through playwright-core in e2e/node_modules).
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DIST, launch, requireBuilt, serve } from '../../e2e/helpers.mjs';

requireBuilt();
const args = process.argv.slice(2);
const runsAt = args.indexOf('--runs');
const runs = runsAt >= 0 ? Number(args[runsAt + 1]) : 3;
if (!(runs >= 1)) throw new Error('--runs takes a number of runs, 1 or more');
const inputs = args.filter((a, i) => !a.startsWith('--') && i !== runsAt + 1);
if (!inputs.length) throw new Error('usage: node scripts/bench/timeline.mjs [--runs N] INPUT.sqlite ...');
const TL = '[data-testid="timeline"]';

/** The files of one input: the export, or the .sqlite files of a folder. */
function filesOf(input) {
  if (!statSync(input).isDirectory()) return [input];
  return readdirSync(input).filter((f) => f.endsWith('.sqlite')).sort().map((f) => join(input, f));
}
const server = await serve(DIST);

async function settled(page) {
  await page.waitForFunction((sel) => {
    const el = document.querySelector(sel);
    return el.dataset.drawnRange === el.dataset.range && el.dataset.frameMs;
  }, TL, { timeout: 60000, polling: 20 });
  return Number(await page.getAttribute(TL, 'data-frame-ms'));
}

/** The walk: every frame's time (ms) after each step. */
async function walk(page) {
  const frames = [];
  const step = async (action, what) => {
    // A marker so that the next frame read is the one this step caused.
    await page.evaluate((sel) => { delete document.querySelector(sel).dataset.frameMs; }, TL);
    await action();
    frames.push({ ms: await settled(page), what });
  };
  const box = await page.evaluate(() => {
    const tl = globalThis.prvsight.timeline;
    tl.root.scrollIntoView({ block: 'start' });
    const r = tl.canvas.getBoundingClientRect();
    const first = tl.layout.placed.find((p) => p.line.slot);
    return { left: r.left + 240, width: r.width - 240, y: r.top + first.y + first.h / 2 };
  });
  const views = await page.$$eval('#tl-view option', (o) => o.map((x) => x.value));
  for (const frac of [0.8, 0.5, 0.3]) {
    await page.mouse.move(box.left + box.width * frac, box.y);
    for (let i = 0; i < 4; i++) await step(() => page.mouse.wheel(0, -400), 'wheel');
  }
  for (let i = 0; i < 6; i++) {
    await step(async () => {
      await page.mouse.move(box.left + 300, box.y);
      await page.mouse.down();
      await page.mouse.move(box.left + 300 + (i % 2 ? -120 : 120), box.y, { steps: 2 });
      await page.mouse.up();
    }, 'drag');
  }
  await page.focus(TL);
  for (const key of ['-', '-', 'ArrowLeft', 'ArrowRight', 'Home']) await step(() => page.keyboard.press(key), `key ${key}`);
  for (const v of views.slice(1)) await step(() => page.selectOption('#tl-view', v), `view ${v}`);
  return frames;
}

/** One conversion by the page in a browser of its own: times, memory, and (timeline on) frames. */
async function pageRun(input, withTimeline) {
  const browser = await launch();
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const workerMemory = new Map();
    page.on('console', (m) => {
      const hit = /prvsight: wasm memory (\d+) bytes \((.*)\)/.exec(m.text());
      if (hit) workerMemory.set(hit[2], Number(hit[1]));
    });
    await page.goto(`${server.origin}/${withTimeline ? '' : '?timeline=off'}`);
    await page.waitForSelector('html[data-warm]', { timeout: 600000 });
    await page.setInputFiles('#file', filesOf(input));
    await page.waitForSelector('#inspect[data-seconds]:not([hidden])', { timeout: 3600000 });
    await page.click('#convert');
    await page.waitForFunction(() => document.querySelector('#results[data-seconds], #error:not([hidden])'), null, { polling: 100, timeout: 3600000 });
    if (await page.isVisible('#error')) throw new Error(`page error: ${(await page.textContent('#error')).trim().slice(0, 300)}`);
    const seconds = Number(await page.getAttribute('#results', 'data-seconds'));
    const out = { seconds, memory: null, first: NaN, bytes: NaN, frames: [] };
    if (withTimeline) {
      await page.waitForFunction((sel) => document.querySelector(sel).dataset.firstFrameMs, TL, { polling: 20, timeout: 60000 });
      out.first = Number(await page.getAttribute(TL, 'data-first-frame-ms'));
      out.bytes = await page.evaluate(() => globalThis.prvsight.timeline.info.bytes);
      out.frames = await walk(page);
    }
    // Each worker reports its wasm memory (it only grows: the peak) as its conversion ends.
    out.memory = workerMemory.size ? [...workerMemory.values()].reduce((a, b) => a + b, 0) : null;
    return out;
  } finally {
    await browser.close();
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)] : NaN;
};
const mib = (b) => (b === null || Number.isNaN(b) ? '?' : (b / 1048576).toFixed(0));

try {
  console.log('| input | conversion s, timeline on / off | ratio | first picture ms | frames: median / max ms (n), slowest | timeline MiB | wasm MiB on / off |');
  console.log('|---|---|---|---|---|---|---|');
  for (const input of inputs) {
    const on = [];
    const off = [];
    for (let r = 0; r < runs; r++) {
      // Alternated, each round starting with the other one.
      const order = r % 2 ? [false, true] : [true, false];
      for (const w of order) (w ? on : off).push(await pageRun(input, w));
    }
    const fastOn = on.reduce((a, b) => (b.seconds < a.seconds ? b : a));
    const fastOff = off.reduce((a, b) => (b.seconds < a.seconds ? b : a));
    const frames = on.flatMap((x) => x.frames);
    const slowest = frames.reduce((a, b) => (b.ms > a.ms ? b : a));
    const ms = frames.map((f) => f.ms);
    const cells = [
      `${(filesOf(input).reduce((a, f) => a + statSync(f).size, 0) / 1048576).toFixed(0)} MiB in ${filesOf(input).length}`,
      `${fastOn.seconds.toFixed(2)} / ${fastOff.seconds.toFixed(2)}`,
      (fastOn.seconds / fastOff.seconds).toFixed(3),
      `${median(on.map((x) => x.first)).toFixed(0)}`,
      `${median(ms).toFixed(1)} / ${slowest.ms.toFixed(1)} (${ms.length}), ${slowest.what}`,
      mib(fastOn.bytes),
      `${mib(fastOn.memory)} / ${mib(fastOff.memory)}`,
    ];
    console.log(`| ${cells.join(' | ')} |`);
  }
} finally {
  server.close();
}
