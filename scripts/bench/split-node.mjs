// The page's conversion in Node's worker threads, on machines with more cores than a browser
// run here can show: one worker converting alone (the page's `?workers=1`) against the page's
// three-worker split (reader | writer | gzip, the protocol of www/worker.js, same batch size
// and bounds). The same wasm on V8, Chromium's engine (Node's own version of it); no page, no
// Blob reads (the input is bytes in memory).
//
//   node scripts/bench/split-node.mjs GLUE_DIR INPUT.sqlite...
//
// GLUE_DIR: `wasm-bindgen --target nodejs --out-name prvsight` of the wasm build
// (target/wasm32-unknown-unknown/wasm/prvsight.wasm). Prints a markdown table: best of three
// wall times each, and whether the two archives are the same bytes (they must be).
import { Worker, isMainThread, parentPort, workerData, MessageChannel } from 'node:worker_threads';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { createHash } from 'node:crypto';
import { availableParallelism } from 'node:os';

// As in www/worker.js.
const BATCH_RECORDS = 16384;
const IN_FLIGHT_BATCHES = 4;
const IN_FLIGHT_PLAIN = 16 << 20;

/** The messages arriving on `port`, one `await next()` at a time, in order. */
function inbox(port) {
  const queue = [];
  let waiting = null;
  port.on('message', (m) => {
    if (waiting) {
      const wake = waiting;
      waiting = null;
      wake(m);
    } else queue.push(m);
  });
  return {
    next: () => (queue.length ? Promise.resolve(queue.shift()) : new Promise((r) => { waiting = r; })),
  };
}

async function role(core, { role: name, file, port, gzipPort }) {
  // [tag, bytes] in order, for the archive's checksum (the core's chunks are fresh copies).
  const out = [];
  if (name === 'convert') {
    const data = new Uint8Array(readFileSync(file));
    core.convert([{ name: basename(file), data }], {}, (tag, b) => out.push(['zip', b]), () => true);
  } else if (name === 'read') {
    const data = new Uint8Array(readFileSync(file));
    const session = new core.ReaderSession([{ name: basename(file), data }], {}, () => true);
    const writer = inbox(port);
    port.postMessage({ header: session.header() });
    let ahead = 0;
    for (;;) {
      while (ahead >= IN_FLIGHT_BATCHES) {
        await writer.next();
        ahead -= 1;
      }
      const batch = session.next_batch(BATCH_RECORDS);
      if (!batch) break;
      port.postMessage(batch, [batch.buffer]);
      ahead += 1;
    }
    port.postMessage({ summary: session.finish() });
    session.free();
  } else if (name === 'write') {
    const reader = inbox(port);
    const gzipper = inbox(gzipPort);
    let tag = 'zip';
    let plainAhead = 0;
    const onChunk = (t, bytes) => {
      if (t === 'prv') {
        plainAhead += bytes.length;
        gzipPort.postMessage(bytes, [bytes.buffer]);
      } else out.push([tag, bytes]);
    };
    const room = async (limit) => {
      while (plainAhead > limit) plainAhead -= (await gzipper.next()).ack;
    };
    const { header } = await reader.next();
    const session = new core.WriterSession([basename(file)], {}, header, onChunk);
    let summary = null;
    while (summary === null) {
      const m = await reader.next();
      if (m instanceof Uint8Array) {
        session.feed(m);
        port.postMessage({ ack: 1 });
        await room(IN_FLIGHT_PLAIN);
      } else ({ summary } = m);
    }
    const pending = session.finish(summary);
    gzipPort.postMessage(null);
    await room(0);
    const { crc, size } = await gzipper.next();
    tag = 'tail';
    pending.finish(crc, size);
    session.free();
  } else if (name === 'gzip') {
    const gz = new core.TraceGzip(undefined);
    const from = inbox(port);
    for (;;) {
      const m = await from.next();
      if (m === null) break;
      out.push(['trace', gz.write(m)]);
      port.postMessage({ ack: m.length });
    }
    const end = gz.finish();
    out.push(['trace', end.bytes]);
    port.postMessage({ crc: end.crc, size: end.size });
  }
  return out;
}

if (!isMainThread) {
  // Ready (wasm compiled, as the page's workers are before a conversion), then the job on 'go'.
  const core = createRequire(import.meta.url)(resolve(workerData.glue, 'prvsight.js'));
  parentPort.once('message', () => {
    role(core, workerData).then(
      (out) => parentPort.postMessage({ out }),
      (e) => parentPort.postMessage({ error: String(e?.stack || e) }),
    );
  });
  parentPort.postMessage('ready');
} else {
  const [glue, ...files] = process.argv.slice(2);
  if (!glue || !files.length) {
    console.error('usage: node scripts/bench/split-node.mjs GLUE_DIR INPUT.sqlite...');
    process.exit(2);
  }
  /** Starts the workers for `jobs`; once all are ready, times them from 'go' to the last
   * one's end. Returns [seconds, their outputs]. */
  const timed = async (jobs) => {
    const started = jobs.map(({ transfer = [], ...data }) => {
      const w = new Worker(new URL(import.meta.url), { workerData: { glue, ...data }, transferList: transfer });
      const ready = new Promise((ok, fail) => {
        w.once('message', ok);
        w.once('error', fail);
      });
      return { w, ready };
    });
    await Promise.all(started.map((s) => s.ready));
    const t = performance.now();
    const outs = await Promise.all(
      started.map(
        ({ w }) =>
          new Promise((ok, fail) => {
            w.once('message', (m) => {
              w.terminate(); // its ports would keep it alive
              if (m.error) fail(new Error(m.error));
              else ok(m.out);
            });
            w.once('error', fail);
            w.postMessage('go');
          }),
      ),
    );
    return [(performance.now() - t) / 1000, outs.flat()];
  };
  const digest = (parts) => {
    const h = createHash('sha256');
    for (const order of ['zip', 'trace', 'tail']) for (const [t, b] of parts) if (t === order) h.update(b);
    return h.digest('hex');
  };
  const best = async (jobs) => {
    let min = Infinity;
    let sum;
    for (let i = 0; i < 3; i++) {
      const [s, out] = await timed(jobs());
      sum = digest(out);
      min = Math.min(min, s);
    }
    return [min, sum];
  };
  console.log(`cores: ${availableParallelism()}; best of three; from the workers' start of work (their wasm already compiled, as the page's) to the archive's last byte`);
  console.log('| input | one worker s | three workers s | one / three | same archive |');
  console.log('|---|---|---|---|---|');
  for (const file of files) {
    const [one, a] = await best(() => [{ role: 'convert', file }]);
    const [three, b] = await best(() => {
      const records = new MessageChannel();
      const plain = new MessageChannel();
      return [
        { role: 'read', file, port: records.port1, transfer: [records.port1] },
        { role: 'write', file, port: records.port2, gzipPort: plain.port1, transfer: [records.port2, plain.port1] },
        { role: 'gzip', file, port: plain.port2, transfer: [plain.port2] },
      ];
    });
    const mb = (readFileSync(file).length / 1048576).toFixed(0);
    console.log(`| ${mb} MiB | ${one.toFixed(2)} | ${three.toFixed(2)} | ${(one / three).toFixed(2)} | ${a === b ? 'yes' : 'NO'} |`);
  }
}
