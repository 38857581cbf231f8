// The converter's worker: owns the wasm core and runs it off the page's thread. A classic
// (non-module) worker on purpose: the single-file build starts it from a blob: URL, and
// Chromium refuses module workers there when the page comes from file://.
//
// Protocol (the page side is bridge.js, the only code that talks to this worker):
//   in:  {id, type: 'init', wasm?: ArrayBuffer,      wasm bytes (single-file build) or fetch pkg/;
//         warmUp?: {bytes: ArrayBuffer, role}}       an export to convert once first (warmUp())
//        {id, type: 'warm'}                              answered once the warm-up is done
//        {id, type: 'inspect', inputs: [{name, data: Blob}], keep?: bool}
//        {id, type: 'convert', inputs, options, inspected?: bool}
//        {id, type: 'readAhead', inputs, options}   the next 'read' of these inspected files, opened now
//        {id, type: 'read', inputs, options, inspected?: bool, port: MessagePort,  (to the writer)
//         helpPort: MessagePort}                      (the writer's, once everything is read)
//        {id, type: 'write', labels, options, port: MessagePort, deflaters: MessagePort[]}
//        {id, type: 'gzip', level?: number, port: MessagePort}              (from the writer)
//   out: {id, type: 'progress', progress: {phase, records_done, records_estimate}}
//        {id, type: 'chunk', tag: 'zip'|'trace'|'tail', bytes: Uint8Array,   (transferred)
//         seq?: number}                     (the .prv.gz's pieces: their place in it, see below)
//        {id, type: 'done', value}  |  {id, type: 'error', error: {kind, message, hint}}
//
// `keep`: the worker keeps the inspected files open, with the conversion's plan made for the
// inspection, for the next conversion; `inspected`: that conversion's inputs are those very files
// (the core checks names and sizes too, and plans anew where the options plan otherwise).
//
// A gzipped conversion is split over three workers where the page has them (bridge.js), each
// on its own core: the reader (`read`) opens the exports and sends the records to the writer as
// batches of bytes, at most IN_FLIGHT_BATCHES ahead of it; the writer (`write`) feeds them to
// the sinks, cuts the plain .prv into segments (the .prv.gz is deflated segment by segment:
// paraver/gzip.rs) and hands each whole segment to a deflating worker with room — the gzip
// worker (`gzip`) from the start, the reader too once it has read everything, so that the end
// of the .prv.gz is not left to one core — holding at most IN_FLIGHT_PLAIN bytes of segments
// not yet handed out. The deflaters send each segment's bytes to the page ('trace', with the
// segment's number as seq) and its sums to the writer, which puts the .prv.gz together: its
// header (seq -1) and end (seq n, after the n segments), and the archive around the trace entry
// ('zip' before it, 'tail' after it, which needs the .prv.gz's CRC-32 and size). The page puts
// the archive together in that order. Reader to writer: {header, estimate}, then batches
// (Uint8Array), then {summary}; writer to reader: {ack} per batch. Writer to a deflater:
// {seq, parts: Uint8Array[]} per segment, then null; deflater to writer: {ready} (the reader,
// when it starts to help), {seq, sums} per segment.
/* global wasm_bindgen, importScripts */
'use strict';

if (typeof wasm_bindgen === 'undefined') {
  importScripts('./pkg/prvsight.js');
}

let ready = null;
// The core's linear memory: it only grows, so its size after a conversion is the peak.
let memory = null;

function asError(e) {
  if (e && typeof e === 'object' && 'kind' in e && 'message' in e) return e;
  let message = e instanceof Error ? `${e.message}` : String(e);
  // A Rust panic traps as "unreachable"; the core kept its message.
  try {
    const panic = typeof wasm_bindgen.last_panic === 'function' && wasm_bindgen.last_panic();
    if (panic) message = panic;
  } catch {
    // The module is unusable after the trap; keep the JS message.
  }
  if (e instanceof RangeError || /out of memory|Out of memory/.test(message)) {
    return {
      kind: 'write',
      message: `the browser ran out of memory: ${message}`,
      hint: 'Close other tabs, convert fewer files or families at once, or use the prvsight command line for this run.',
    };
  }
  return {
    kind: 'internal',
    message: `the converter stopped: ${message}`,
    hint: 'This is a bug in prvsight; please report it with the message (the browser console has details).',
  };
}

// Records per batch from the reader, and how far the reader and the writer may run ahead of
// the worker they feed (a bound on the memory that waits in between). The first batch is
// FIRST_BATCH_RECORDS, each next one twice as large up to BATCH_RECORDS: the writer (and after
// it the gzip worker) idles until the first batch comes, so it comes early.
const BATCH_RECORDS = 16384;
const FIRST_BATCH_RECORDS = 1024;
const IN_FLIGHT_BATCHES = 4;
const IN_FLIGHT_PLAIN = 16 << 20;

/** The messages arriving on `port`, one `await next()` at a time, in order. */
function inbox(port) {
  const queue = [];
  let waiting = null;
  port.onmessage = (ev) => {
    if (waiting) {
      const wake = waiting;
      waiting = null;
      wake(ev.data);
    } else {
      queue.push(ev.data);
    }
  };
  return {
    next() {
      if (queue.length) return Promise.resolve(queue.shift());
      return new Promise((resolve) => {
        waiting = resolve;
      });
    },
  };
}

/** Sends a piece of the .prv.gz to the page: request `id`'s chunk number `seq` of the trace.
 * Empty ones too: the page writes the pieces to disk in order, so every number comes. */
function sendTrace(id, seq, bytes) {
  self.postMessage({ id, type: 'chunk', tag: 'trace', seq, bytes }, [bytes.buffer]);
}

/** This worker's share of the .prv.gz: deflates the segments the writer hands over on `port`,
 * one after the other (each one's bytes to the page in one piece, its sums to the writer),
 * until the writer sends null. */
function deflateSegments(id, port, level) {
  const deflater = new wasm_bindgen.TraceSegments(level ?? undefined);
  return new Promise((resolve, reject) => {
    port.onmessage = (ev) => {
      try {
        if (ev.data === null) {
          deflater.free();
          reportMemory();
          resolve(null);
          return;
        }
        const { seq, parts } = ev.data;
        for (const part of parts) deflater.write(part);
        const end = deflater.end();
        sendTrace(id, seq, end.bytes);
        const { plain_crc, plain_len, crc, len } = end;
        port.postMessage({ seq, sums: { plain_crc, plain_len, crc, len } });
      } catch (e) {
        reject(e);
      }
    };
  });
}

/** The writer's side of the .prv.gz (see the protocol above): cuts the plain .prv into whole
 * segments and hands each to a deflater with room (two at most each: one deflating, one
 * waiting in its queue, so none idles while segments wait here), then puts the .prv.gz
 * together from the segments' sums. `ports`: the deflaters', the first one ready from the start,
 * the others once they say so. */
class TraceDeflaters {
  constructor(id, ports, level) {
    this.id = id;
    this.level = level ?? undefined;
    this.segmentBytes = wasm_bindgen.segment_bytes();
    // The .prv.gz's header depends on the level only: sent first, so that the page can write
    // the trace to disk in order as its pieces come.
    const join = new wasm_bindgen.TraceJoin(this.level);
    try {
      sendTrace(id, -1, join.header());
    } finally {
      join.free();
    }
    this.open = { parts: [], bytes: 0 };
    /** Whole segments not handed out yet, and their plain bytes. */
    this.waiting = [];
    this.waitingBytes = 0;
    this.segments = 0;
    /** Per segment number, its sums once deflated. */
    this.sums = [];
    this.deflated = 0;
    this.wake = null;
    this.deflaters = ports.map((port, i) => ({ port, ready: i === 0, held: 0 }));
    for (const d of this.deflaters) {
      d.port.onmessage = (ev) => {
        const m = ev.data;
        if (m.ready) {
          d.ready = true;
        } else {
          this.sums[m.seq] = m.sums;
          this.deflated += 1;
          d.held -= 1;
        }
        this._handOut();
        if (this.wake) {
          const wake = this.wake;
          this.wake = null;
          wake();
        }
      };
    }
  }

  /** A piece of the plain .prv (transferred away from the caller). */
  add(bytes) {
    while (bytes.length) {
      const room = this.segmentBytes - this.open.bytes;
      // A piece across a segment's end is cut there; the rest, copied, goes on to the next
      // (a buffer is transferred with one segment only).
      const piece = bytes.length <= room ? bytes : bytes.subarray(0, room);
      bytes = bytes.length <= room ? bytes.subarray(bytes.length) : bytes.slice(room);
      this.open.parts.push(piece);
      this.open.bytes += piece.length;
      if (this.open.bytes === this.segmentBytes) this._close();
    }
  }

  _close() {
    if (!this.open.bytes) return;
    this.waiting.push({ seq: this.segments++, ...this.open });
    this.waitingBytes += this.open.bytes;
    this.open = { parts: [], bytes: 0 };
    this._handOut();
  }

  _handOut() {
    while (this.waiting.length) {
      let to = null;
      for (const d of this.deflaters) if (d.ready && d.held < 2 && (!to || d.held < to.held)) to = d;
      if (!to) return;
      const { seq, parts, bytes } = this.waiting.shift();
      this.waitingBytes -= bytes;
      to.held += 1;
      to.port.postMessage({ seq, parts }, parts.map((p) => p.buffer));
    }
  }

  _changed() {
    return new Promise((resolve) => {
      this.wake = resolve;
    });
  }

  /** Resolves once at most `limit` plain bytes wait here for a deflater. */
  async room(limit) {
    while (this.waitingBytes + this.open.bytes > limit) await this._changed();
  }

  /** Hands out the last segment, waits for every segment, ends the deflaters' share and sends
   * the .prv.gz's header and end to the page; its CRC-32 and size. */
  async finish() {
    this._close();
    while (this.deflated < this.segments) await this._changed();
    for (const d of this.deflaters) d.port.postMessage(null);
    const join = new wasm_bindgen.TraceJoin(this.level);
    try {
      for (const s of this.sums) join.segment(s.plain_crc, s.plain_len, s.crc, s.len);
      const end = join.finish();
      sendTrace(this.id, this.segments, end.bytes);
      return { crc: end.crc, size: end.size };
    } finally {
      join.free();
    }
  }
}

/** For the benchmark (scripts/bench/web.mjs adds these lines up): this worker's wasm memory
 * peak (it only grows). */
function reportMemory() {
  if (memory) console.debug(`prvsight: wasm memory ${memory.buffer.byteLength} bytes (${self.name || 'worker'})`);
}

/** A conversion's result for the page, its pcf and row transferred. */
function finished(value) {
  reportMemory();
  return { value, transfer: [value.pcf.buffer, value.row.buffer] };
}

/** Runs this worker's part of a conversion on `bytes` (the bundled sample), round after round,
 * and drops the results. Why: V8 first runs wasm as baseline code and compiles a function
 * optimized only once it has run a while, so a worker's first conversion ran ~1.2–2× slower
 * than its next ones (docs/PERFORMANCE.md). Done when the worker starts, while the user picks a
 * file, it makes the user's inspection and conversion run on optimized code. `role`: what the
 * page will ask of this worker — 'read' (the reader of a split conversion, which inspects the
 * files first), 'write' (its writer: the reader's records are made here for it), 'gzip'
 * (deflate over the sample's bytes: the same code whatever it compresses), or 'convert' (all of
 * it, alone). A failure here only costs that speed.
 *
 * Many rounds: V8 optimizes a function once its budget of work is spent, in the background, and
 * a call already running goes on in baseline code; the sample is small, so one round left much
 * of a conversion in baseline code (Chromium, 10 MB, eight alternated runs each, median from
 * the click: one round 0.332 s, three 0.304 s; three against ten and twenty rounds with the
 * inspection in each: 0.315 / 0.294 / 0.285 s; twenty / forty 0.296 / 0.283 s; forty / eighty
 * 0.276 / 0.275 s; in Node the first inspection of the 10 MB input took 145 ms after three
 * rounds, 49 ms after twenty). The rounds stop at the first
 * request (the user's work comes first: it then runs on what is optimized by then) and after
 * `WARM_UP_MS`, on a slow machine. */
async function warmUp(bytes, role) {
  const started = performance.now();
  let rounds = 0;
  while (rounds < WARM_UP_ROUNDS && !requested) {
    warmUpOnce(bytes, role);
    rounds += 1;
    if (performance.now() - started > WARM_UP_MS) break;
    // Lets a request in between rounds.
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
  return rounds;
}

const WARM_UP_ROUNDS = 40;
const WARM_UP_MS = 3000;
/** Whether a request other than the start and the warm-up's own has come (see `warmUp`). */
let requested = false;

/** One round of `warmUp`. */
function warmUpOnce(bytes, role) {
  const name = 'warm-up.sqlite';
  const inputs = [{ name, data: new Uint8Array(bytes) }];
  // The reader deflates too once it has read everything (`read`), so it warms up to both.
  if (role === 'gzip' || role === 'read') {
    const deflater = new wasm_bindgen.TraceSegments();
    try {
      deflater.write(inputs[0].data);
      deflater.end();
    } finally {
      deflater.free();
    }
    if (role === 'gzip') return;
  }
  // Inspecting first, as the page asks of the reader (keeping nothing).
  if (role === 'read' || role === 'convert') wasm_bindgen.inspect(inputs, false);
  if (role === 'convert') {
    wasm_bindgen.convert(inputs, {}, () => {}, () => true);
    return;
  }
  const reader = new wasm_bindgen.ReaderSession(inputs, {}, () => true);
  let writer = null;
  try {
    if (role === 'write') writer = new wasm_bindgen.WriterSession([name], {}, reader.header(), () => {});
    for (let batch; (batch = reader.next_batch(BATCH_RECORDS)); ) writer?.feed(batch);
    const summary = reader.finish();
    writer?.finish(summary).finish(0, 0);
  } finally {
    writer?.free();
    reader.free();
  }
}

/** Files this worker writes in the origin's private storage (OPFS), by name: a sync access
 * handle and the bytes written so far. Only the page's storage worker has any (bridge.js). */
const stores = new Map();

/** The folder of prvsight's outputs in the origin's private storage. */
async function outputsDir() {
  const root = await navigator.storage.getDirectory();
  return root.getDirectoryHandle('prvsight-outputs', { create: true });
}

function storeOf(name) {
  const s = stores.get(name);
  if (!s) throw asError(`no output file ${name} is open`);
  return s;
}

const handlers = {
  /** Creates (or empties) output file `name` and keeps it open for 'storeWrite'. */
  async storeOpen(msg) {
    const dir = await outputsDir();
    const file = await dir.getFileHandle(msg.name, { create: true });
    const access = await file.createSyncAccessHandle();
    access.truncate(0);
    stores.set(msg.name, { access, at: 0 });
    return true;
  },
  /** Appends `bytes` to output file `name`; gives its size. */
  storeWrite(msg) {
    const s = storeOf(msg.name);
    const n = s.access.write(msg.bytes, { at: s.at });
    s.at += n;
    if (n !== msg.bytes.length) {
      throw { kind: 'write', message: `the browser's storage is full: ${msg.name} stopped at ${s.at} bytes`, hint: 'Free disk space, or use the prvsight command line for this run.' };
    }
    return s.at;
  },
  /** Closes output file `name` (it can then be read as a File); gives its size. */
  storeClose(msg) {
    const s = storeOf(msg.name);
    s.access.flush();
    s.access.close();
    stores.delete(msg.name);
    return s.at;
  },
  /** Closes output file `name` if open and removes it. */
  async storeRemove(msg) {
    const s = stores.get(msg.name);
    if (s) {
      s.access.close();
      stores.delete(msg.name);
    }
    const dir = await outputsDir();
    await dir.removeEntry(msg.name).catch(() => {});
    return true;
  },
  init(msg) {
    const started = wasm_bindgen({ module_or_path: msg.wasm || './pkg/prvsight_bg.wasm' }).then((exports) => {
      memory = exports.memory;
      return wasm_bindgen.version();
    });
    // Requests wait for the warm-up; the page learns the version as soon as the core runs.
    ready = !msg.warmUp
      ? started
      : started.then(async (version) => {
          const { bytes, role } = msg.warmUp;
          const t0 = performance.now();
          try {
            const rounds = await warmUp(bytes, role);
            console.debug(`prvsight: warmed up to ${role} in ${Math.round(performance.now() - t0)} ms, ${rounds} of ${WARM_UP_ROUNDS} rounds (${self.name || 'worker'})`);
          } catch (e) {
            console.warn(`prvsight: warm-up to ${role} failed, conversions run slower (${asError(e).message.split('\n')[0]})`);
          }
          return version;
        });
    return started;
  },
  /** Answers once the core is ready and warmed up (or the warm-up was skipped). */
  async warm() {
    await ready;
    return true;
  },
  async inspect(msg) {
    await ready;
    const report = wasm_bindgen.inspect(msg.inputs, msg.keep === true);
    reportMemory();
    return report;
  },
  /** Two runs' metrics reports compared (wasm `compare`): the verdict and what it rests on. */
  async compare(msg) {
    await ready;
    return wasm_bindgen.compare(msg.a.label, msg.a.metrics, msg.b.label, msg.b.metrics);
  },
  /** Opens the reading of the inspected files with `options` before the conversion asks
   * (wasm `read_ahead`); answers whether it did. */
  async readAhead(msg) {
    await ready;
    return wasm_bindgen.read_ahead(msg.inputs, msg.options || {});
  },
  async convert(msg) {
    await ready;
    const { id } = msg;
    const onChunk = (tag, bytes) => {
      self.postMessage({ id, type: 'chunk', tag, bytes }, [bytes.buffer]);
    };
    const onProgress = (progress) => {
      self.postMessage({ id, type: 'progress', progress });
      return true;
    };
    const value = wasm_bindgen.convert(msg.inputs, msg.options || {}, onChunk, onProgress, msg.inspected === true);
    return finished(value);
  },
  async read(msg) {
    await ready;
    const { id, port } = msg;
    const onProgress = (progress) => {
      self.postMessage({ id, type: 'progress', progress });
      return true;
    };
    const session = new wasm_bindgen.ReaderSession(msg.inputs, msg.options || {}, onProgress, msg.inspected === true);
    console.debug(`prvsight: reading; taken from the inspection: ${session.reused()} (${self.name || 'worker'})`);
    try {
      const writer = inbox(port);
      port.postMessage({ header: session.header(), estimate: session.estimate() });
      let ahead = 0;
      for (let records = FIRST_BATCH_RECORDS; ; records = Math.min(2 * records, BATCH_RECORDS)) {
        while (ahead >= IN_FLIGHT_BATCHES) {
          await writer.next();
          ahead -= 1;
        }
        const batch = session.next_batch(records);
        if (!batch) break;
        port.postMessage(batch, [batch.buffer]);
        ahead += 1;
      }
      port.postMessage({ summary: session.finish() });
      reportMemory();
    } finally {
      session.free();
    }
    // Everything is read: this worker now deflates segments of the .prv.gz with the gzip
    // worker until the writer has them all.
    const help = deflateSegments(id, msg.helpPort, msg.options?.gzip_level);
    msg.helpPort.postMessage({ ready: true });
    return help;
  },
  async write(msg) {
    await ready;
    const { id, port } = msg;
    const reader = inbox(port);
    const trace = new TraceDeflaters(id, msg.deflaters, msg.options?.gzip_level);
    let tag = 'zip';
    const onChunk = (t, bytes) => {
      if (t === 'prv') trace.add(bytes);
      // The Chrome/Perfetto JSON is a file of its own; the rest is the archive's head or tail.
      else self.postMessage({ id, type: 'chunk', tag: t === 'json' ? t : tag, bytes }, [bytes.buffer]);
    };
    const { header, estimate } = await reader.next();
    const session = new wasm_bindgen.WriterSession(msg.labels, msg.options || {}, header, onChunk);
    try {
      let summary = null;
      while (summary === null) {
        const m = await reader.next();
        if (m instanceof Uint8Array) {
          const done = session.feed(m);
          port.postMessage({ ack: 1 });
          self.postMessage({ id, type: 'progress', progress: { phase: 'converting', records_done: done, records_estimate: estimate } });
          await trace.room(IN_FLIGHT_PLAIN);
        } else {
          ({ summary } = m);
        }
      }
      const pending = session.finish(summary);
      const { crc, size } = await trace.finish();
      tag = 'tail';
      return finished(pending.finish(crc, size));
    } finally {
      session.free();
    }
  },
  async gzip(msg) {
    await ready;
    return deflateSegments(msg.id, msg.port, msg.level);
  },
  /** One frame of the last conversion's timeline (wasm `timeline_frame`): RGBA pixels, slot by
   * slot, and each cell's value and coverage (the text alternative reads them). */
  async timelineFrame(msg) {
    await ready;
    const f = wasm_bindgen.timeline_frame(msg.view, msg.start, msg.end, msg.width, msg.slots);
    return { value: f, transfer: [f.rgba.buffer, f.values.buffer, f.busy.buffer] };
  },
  /** What is under the pointer on the timeline (wasm `timeline_at`), or null. */
  async timelineAt(msg) {
    await ready;
    return wasm_bindgen.timeline_at(msg.view, msg.row, msg.t, msg.tolerance);
  },
  /** The efficiency factors of a time range of the timeline (wasm `timeline_range`). */
  async timelineRange(msg) {
    await ready;
    return wasm_bindgen.timeline_range(msg.start, msg.end);
  },
};

self.onmessage = async (ev) => {
  const msg = ev.data;
  const handler = handlers[msg.type];
  if (msg.type !== 'init' && msg.type !== 'warm') requested = true;
  if (!handler) {
    self.postMessage({ id: msg.id, type: 'error', error: asError(`unknown request ${msg.type}`) });
    return;
  }
  try {
    const out = await handler(msg);
    if (out && out.transfer) {
      self.postMessage({ id: msg.id, type: 'done', value: out.value }, out.transfer);
    } else {
      self.postMessage({ id: msg.id, type: 'done', value: out });
    }
  } catch (e) {
    self.postMessage({ id: msg.id, type: 'error', error: asError(e) });
  }
};
