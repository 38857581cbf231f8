// Each part of the page's split conversion alone, in Node, on the same wasm (dist/, built by
// scripts/build-web.sh): the reader (its plan, then its stream of batches), the writer (fed the
// reader's batches, made first) and the deflaters (fed the writer's plain .prv, kept first).
// On two cores the three share the CPU, so what the page's conversion costs is their sum; this
// says which part a change made cheaper. Inputs are bytes in memory (no Blob reads).
//
//   scripts/build-web.sh && node scripts/bench/roles-node.mjs [--runs N] INPUT.sqlite...
//
// Prints a markdown table: the fastest of N runs (default 5) of each part, after one run of the
// bundled sample (as the page's warm-up does).
import { readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';

const DIST = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist');
const args = process.argv.slice(2);
const runsAt = args.indexOf('--runs');
const runs = runsAt >= 0 ? Number(args[runsAt + 1]) : 5;
const files = args.filter((a, i) => !a.startsWith('--') && !(runsAt >= 0 && i === runsAt + 1));
if (!files.length || !(runs >= 1)) {
  console.error('usage: scripts/build-web.sh && node scripts/bench/roles-node.mjs [--runs N] INPUT.sqlite...');
  process.exit(2);
}

globalThis.self = globalThis;
vm.runInThisContext(readFileSync(join(DIST, 'pkg', 'prvsight.js'), 'utf8'));
await wasm_bindgen({ module_or_path: readFileSync(join(DIST, 'pkg', 'prvsight_bg.wasm')) });

const ms = (t) => performance.now() - t;
const fastest = (xs) => Math.min(...xs);

/** The reader's part: [plan ms, stream ms, {header, batches, summary}]. */
function read(name, data) {
  const t = performance.now();
  const session = new wasm_bindgen.ReaderSession([{ name, data }], {}, () => true);
  const plan = ms(t);
  const t1 = performance.now();
  const batches = [];
  for (let b; (b = session.next_batch(16384)); ) batches.push(b);
  const summary = session.finish();
  const stream = ms(t1);
  const header = session.header();
  session.free();
  return [plan, stream, { header, batches, summary }];
}

/** The writer's part, fed `made`: [ms, plain .prv pieces]. */
function write(name, made) {
  const plain = [];
  const t = performance.now();
  const w = new wasm_bindgen.WriterSession([name], {}, made.header, (tag, bytes) => {
    if (tag === 'prv') plain.push(bytes);
  });
  for (const b of made.batches) w.feed(b);
  w.finish(made.summary).finish(0, 0);
  w.free();
  return [ms(t), plain];
}

/** The deflaters' part (the gzip worker's and, at the end, the reader's), fed `plain` cut
 * into segments as the writer cuts it: ms. */
function gzip(plain) {
  const t = performance.now();
  const segment = wasm_bindgen.segment_bytes();
  const deflater = new wasm_bindgen.TraceSegments();
  let open = 0;
  for (let p of plain) {
    while (p.length) {
      const piece = p.subarray(0, segment - open);
      deflater.write(piece);
      open += piece.length;
      p = p.subarray(piece.length);
      if (open === segment) {
        deflater.end();
        open = 0;
      }
    }
  }
  if (open) deflater.end();
  deflater.free();
  return ms(t);
}

const sample = new Uint8Array(readFileSync(join(DIST, 'samples', 'testcuda_report1.sqlite')));
gzip(write('s.sqlite', read('s.sqlite', sample)[2])[1]);

console.log(`fastest of ${runs}`);
console.log('| input | reader plan ms | reader stream ms | writer ms | gzip ms | sum ms | plain .prv MiB |');
console.log('|---|---|---|---|---|---|---|');
for (const file of files) {
  const name = basename(file);
  const data = new Uint8Array(readFileSync(file));
  const [plans, streams, writes, gzips] = [[], [], [], []];
  let plainBytes = 0;
  for (let r = 0; r < runs; r++) {
    const [plan, stream, made] = read(name, data);
    const [w, plain] = write(name, made);
    plans.push(plan);
    streams.push(stream);
    writes.push(w);
    gzips.push(gzip(plain));
    plainBytes = plain.reduce((n, p) => n + p.length, 0);
  }
  const cells = [plans, streams, writes, gzips].map(fastest);
  const sum = cells.reduce((a, b) => a + b, 0);
  const mib = (readFileSync(file).length / 1048576).toFixed(0);
  console.log(`| ${mib} MiB | ${cells.map((c) => c.toFixed(0)).join(' | ')} | ${sum.toFixed(0)} | ${(plainBytes / 1048576).toFixed(0)} |`);
}
