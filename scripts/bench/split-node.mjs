// The page's conversion in Node's worker threads, for machines with more cores than a browser
// run here can show: one worker converting alone (the page's `?workers=1`) against the page's
// three-worker split (reader | writer | gzip, the reader deflating too once it has read all). Each worker runs the page's own worker code
// (dist/worker.js after dist/pkg/prvsight.js, as the single-file build joins them) under a
// small shim for the worker globals, and this script plays bridge.js's part. The same wasm on
// V8, Chromium's engine (Node's own version of it); no page, and the input is bytes in memory,
// not a Blob.
//
//   scripts/build-web.sh && node scripts/bench/split-node.mjs INPUT.sqlite...
//
// Prints a markdown table: best of three wall times each, from the request to the last byte of
// the archive (the workers' wasm compiled and warmed up on the bundled sample before, as the
// page's is), and whether the two archives are the same bytes (they must be). Unlike the page,
// no inspection comes first: each conversion plans for itself.
import { Worker, isMainThread, parentPort, workerData, MessageChannel } from 'node:worker_threads';
import { readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHash } from 'node:crypto';
import { availableParallelism } from 'node:os';
import vm from 'node:vm';

const DIST = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist');

if (!isMainThread) {
  // The globals a dedicated worker script uses: `self`, its messages, its name.
  globalThis.self = globalThis;
  self.name = workerData.name;
  self.postMessage = (m, transfer) => parentPort.postMessage(m, transfer);
  console.debug = () => {}; // the worker's memory lines are web.mjs's
  parentPort.on('message', (data) => self.onmessage({ data }));
  const source = `${readFileSync(join(DIST, 'pkg', 'prvsight.js'), 'utf8')}\n${readFileSync(join(DIST, 'worker.js'), 'utf8')}`;
  vm.runInThisContext(source, { filename: 'worker.js' });
} else {
  const files = process.argv.slice(2);
  if (!files.length) {
    console.error('usage: scripts/build-web.sh && node scripts/bench/split-node.mjs INPUT.sqlite...');
    process.exit(2);
  }
  const wasm = readFileSync(join(DIST, 'pkg', 'prvsight_bg.wasm'));

  // The page's warm-up (worker.js `warmUp`): each worker runs its part once on the bundled
  // sample before the timed conversion, so that V8 has optimized its hot code, as in the page.
  const sample = readFileSync(join(DIST, 'samples', 'testcuda_report1.sqlite'));

  /** A page worker, its wasm ready and warmed up for `role`; `call` sends a request and gathers
   * its chunks until done. */
  async function start([name, role]) {
    const w = new Worker(fileURLToPath(import.meta.url), { workerData: { name } });
    let next = 0;
    const pending = new Map();
    w.on('message', (m) => {
      const p = pending.get(m.id);
      if (m.type === 'chunk') p.chunks.push([m.tag, m.bytes, m.seq]);
      else if (m.type === 'done') p.ok(p.chunks);
      else if (m.type === 'error') p.fail(new Error(`${name}: ${m.error.message}`));
    });
    const call = (msg, transfer = []) =>
      new Promise((ok, fail) => {
        const id = ++next;
        pending.set(id, { ok, fail, chunks: [] });
        w.postMessage({ id, ...msg }, transfer);
      });
    const bytes = sample.buffer.slice(sample.byteOffset, sample.byteOffset + sample.length);
    await call({ type: 'init', wasm, warmUp: { bytes, role } });
    await call({ type: 'warm' });
    return { call, end: () => w.terminate() };
  }

  const inputsOf = (file) => {
    const data = new Uint8Array(readFileSync(file));
    return [[{ name: basename(file), data }], [data.buffer]];
  };
  // The archive as bridge.js puts it together: the writer's head, the .prv.gz's pieces by
  // their place in it (seq; in arrival order within one), the writer's tail.
  const digest = (chunks) => {
    const h = createHash('sha256');
    for (const [, b] of chunks.filter(([t]) => t === 'zip')) h.update(b);
    const trace = chunks.filter(([t]) => t === 'trace');
    for (const [, b] of trace.map((c, i) => [c[2], c[1], i]).sort((x, y) => x[0] - y[0] || x[2] - y[2])) h.update(b);
    for (const [, b] of chunks.filter(([t]) => t === 'tail')) h.update(b);
    return h.digest('hex');
  };

  /** One conversion of `file` by `job` on fresh workers (the file read before the timing);
   * [seconds from the request to the end, digest]. */
  async function timed(names, file, job) {
    const workers = await Promise.all(names.map(start));
    try {
      const [inputs, transfer] = inputsOf(file);
      const t = performance.now();
      const chunks = await job(inputs, transfer, ...workers);
      return [(performance.now() - t) / 1000, digest(chunks)];
    } finally {
      for (const w of workers) await w.end();
    }
  }
  const best = async (names, file, job) => {
    let min = Infinity;
    let sum;
    for (let i = 0; i < 3; i++) {
      const [s, d] = await timed(names, file, job);
      [min, sum] = [Math.min(min, s), d];
    }
    return [min, sum];
  };

  console.log(`cores: ${availableParallelism()}; best of three`);
  console.log('| input | one worker s | three workers s | one / three | same archive |');
  console.log('|---|---|---|---|---|');
  for (const file of files) {
    const [one, a] = await best([['prvsight', 'convert']], file, (inputs, transfer, main) => {
      // Every chunk of one worker is the archive in order ('zip' here stands for all of them).
      return main.call({ type: 'convert', inputs, options: {} }, transfer).then((c) => c.map(([, b]) => ['zip', b]));
    });
    const workers = [['prvsight', 'read'], ['prvsight-writer', 'write'], ['prvsight-gzip', 'gzip']];
    const [three, b] = await best(workers, file, async (inputs, transfer, main, writer, gzip) => {
      // As bridge.js's _convertSplit does.
      const records = new MessageChannel();
      const toGzip = new MessageChannel();
      const toReader = new MessageChannel();
      const parts = await Promise.all([
        main.call(
          { type: 'read', inputs, options: {}, port: records.port1, helpPort: toReader.port1 },
          [records.port1, toReader.port1, ...transfer],
        ),
        writer.call(
          { type: 'write', labels: [basename(file)], options: {}, port: records.port2, deflaters: [toGzip.port1, toReader.port2] },
          [records.port2, toGzip.port1, toReader.port2],
        ),
        gzip.call({ type: 'gzip', port: toGzip.port2 }, [toGzip.port2]),
      ]);
      return parts.flat();
    });
    const mb = (readFileSync(file).length / 1048576).toFixed(0);
    console.log(`| ${mb} MiB | ${one.toFixed(2)} | ${three.toFixed(2)} | ${(one / three).toFixed(2)} | ${a === b ? 'yes' : 'NO'} |`);
  }
}
