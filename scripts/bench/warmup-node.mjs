// How many warm-up rounds the page's wasm needs: in Node (V8, as in Chromium), the page's own
// worker code (dist/worker.js after dist/pkg/prvsight.js, as split-node.mjs runs it) makes N
// rounds of the reader's warm-up on the bundled sample (its `warmUpOnce(…, 'read')`: deflate,
// inspect, read), then inspects INPUT three times, timed. The
// first inspection after few rounds runs partly on V8's baseline code (not yet optimized);
// the later ones show the optimized time.
//
//   scripts/build-web.sh && node scripts/bench/warmup-node.mjs INPUT.sqlite [ROUNDS...]
//
// Each ROUNDS (default 1 3 10 20 40) runs in a fresh Node process, so that nothing is warm.
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';

const DIST = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist');
const [input, ...rest] = process.argv.slice(2);
if (!input) {
  console.error('usage: scripts/build-web.sh && node scripts/bench/warmup-node.mjs INPUT.sqlite [ROUNDS...]');
  process.exit(2);
}

if (process.env.WARMUP_ROUNDS === undefined) {
  const counts = rest.length ? rest.map(Number) : [1, 3, 10, 20, 40];
  console.log('| warm-up rounds | warm-up ms | first inspection ms | second | third |');
  console.log('|---|---|---|---|---|');
  for (const n of counts) {
    const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), input], {
      env: { ...process.env, WARMUP_ROUNDS: String(n) },
      encoding: 'utf8',
    });
    console.log(out.trim());
  }
} else {
  // The globals the worker script uses; its functions then are this context's.
  globalThis.self = globalThis;
  const source = `${readFileSync(join(DIST, 'pkg', 'prvsight.js'), 'utf8')}\n${readFileSync(join(DIST, 'worker.js'), 'utf8')}`;
  vm.runInThisContext(source, { filename: 'worker.js' });
  await wasm_bindgen({ module_or_path: readFileSync(join(DIST, 'pkg', 'prvsight_bg.wasm')) });
  const sample = readFileSync(join(DIST, 'samples', 'testcuda_report1.sqlite'));
  const bytes = sample.buffer.slice(sample.byteOffset, sample.byteOffset + sample.length);
  const data = new Uint8Array(readFileSync(input));
  const rounds = Number(process.env.WARMUP_ROUNDS);
  const t0 = performance.now();
  for (let i = 0; i < rounds; i++) warmUpOnce(bytes, 'read');
  const warm = performance.now() - t0;
  const times = [];
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    wasm_bindgen.inspect([{ name: 'input.sqlite', data }], false);
    times.push((performance.now() - t).toFixed(0));
  }
  console.log(`| ${rounds} | ${warm.toFixed(0)} | ${times.join(' | ')} |`);
}
