// The page's one door to the converter worker (the idea of Squoosh's worker bridge): UI code
// calls typed async methods here and never sees the worker, its messages or the wasm.

/**
 * @typedef {{ name: string, data: Blob }} Input
 * @typedef {{ phase: string, records_done: number, records_estimate: number }} Progress
 * @typedef {{ families?: string[] | null, gzip?: boolean, gzip_level?: number, metrics?: boolean,
 *             nvtx_range?: string | null, nccl_as?: 'communication' | 'useful', json?: boolean,
 *             nvtx_config?: string | null, nvtx_config_name?: string | null }} ConvertOptions
 * @typedef {{ name: string, blob: Blob, type: string }} OutputFile
 * @typedef {{ summary: object, names: {folder: string, prv: string, pcf: string, row: string},
 *             bundle: OutputFile, json: OutputFile | null, files: OutputFile[], metrics: object | null,
 *             readme: string }} Converted
 */

/** An error from the core: `kind` is stable (not-sqlite, not-nsys, schema, read, bad-data,
 * write, unreadable, usage, cancelled, internal), `hint` says what to do. */
export class CoreError extends Error {
  constructor({ kind, message, hint }) {
    super(message);
    this.name = 'CoreError';
    this.kind = kind;
    this.hint = hint;
  }
}

const CANCELLED = { kind: 'cancelled', message: 'conversion cancelled', hint: 'Nothing was written. Convert again when ready.' };

/** Starts a worker: from the inlined sources of the single-file build when present
 * (`globalThis.PRVSIGHT_INLINE`), else worker.js beside this module. */
function startWorker(name) {
  const inline = globalThis.PRVSIGHT_INLINE;
  if (inline) {
    const url = URL.createObjectURL(new Blob([inline.workerSource], { type: 'text/javascript' }));
    const worker = new Worker(url, { name });
    URL.revokeObjectURL(url);
    return { worker, wasm: () => inline.wasmBytes() };
  }
  const worker = new Worker(new URL('./worker.js', import.meta.url), { name });
  return { worker, wasm: () => undefined };
}

let warmUpSample = null;

/** The bundled sample's bytes, which each worker converts once right after it starts (see
 * worker.js `warmUp`), or null: not wanted (`?warmup=0` in the page's address, to measure a
 * first conversion on unoptimized code), or not to be had. Fetched once per page. */
function sampleForWarmUp() {
  if (new URLSearchParams(globalThis.location?.search ?? '').get('warmup') === '0') {
    return Promise.resolve(null);
  }
  if (!warmUpSample) {
    const inline = globalThis.PRVSIGHT_INLINE;
    warmUpSample = inline
      ? Promise.resolve(inline.sampleBytes().buffer)
      : fetch(new URL('./samples/testcuda_report1.sqlite', import.meta.url))
          .then((r) => (r.ok ? r.arrayBuffer() : null))
          .catch(() => null);
  }
  return warmUpSample;
}

/** One worker running the wasm core, and its requests (ids, replies, streamed messages). A
 * crash, or a terminate, fails every request still pending. */
class CoreWorker {
  /** `role`: what it will mostly do (worker.js `warmUp`): 'convert', 'read', 'write', 'gzip';
   * 'store' (the outputs' storage worker) starts no wasm core at all. */
  constructor(name, role) {
    this._nextId = 1;
    /** @type {Map<number, {resolve: Function, reject: Function, onMessage?: Function}>} */
    this._pending = new Map();
    const { worker, wasm } = startWorker(name);
    this._worker = worker;
    worker.onmessage = (ev) => this._receive(ev.data);
    worker.onerror = (ev) => {
      ev.preventDefault();
      this.terminate({
        kind: 'internal',
        message: `the converter could not start: ${ev.message || 'worker error'}`,
        hint: 'Reload the page. If it persists, the browser may block workers or WebAssembly here.',
      });
    };
    const bytes = wasm();
    if (role === 'store') {
      this.ready = Promise.resolve(null);
      return;
    }
    /** Resolves to the core's version once its wasm is ready (requests then wait in the worker
     * for its warm-up). */
    this.ready = sampleForWarmUp().then((sample) => {
      const warmUp = sample && { bytes: sample, role };
      return this.call({ type: 'init', wasm: bytes, warmUp }, null, bytes ? [bytes.buffer] : []);
    });
  }

  get alive() {
    return this._worker !== null;
  }

  call(msg, onMessage = null, transfer = []) {
    // Ended between the start of a request and its message to the worker.
    if (!this._worker) return Promise.reject(new CoreError(CANCELLED));
    const id = this._nextId++;
    return new Promise((resolve, reject) => {
      this._pending.set(id, { resolve, reject, onMessage });
      this._worker.postMessage({ ...msg, id }, transfer);
    });
  }

  /** Ends the worker (a busy worker cannot read messages); pending requests fail with `error`. */
  terminate(error = CANCELLED) {
    if (!this._worker) return;
    this._worker.terminate();
    this._worker = null;
    const pending = [...this._pending.values()];
    this._pending.clear();
    for (const p of pending) p.reject(new CoreError(error));
  }

  _receive(msg) {
    const p = this._pending.get(msg.id);
    if (!p) return;
    if (msg.type === 'done') {
      this._pending.delete(msg.id);
      p.resolve(msg.value);
    } else if (msg.type === 'error') {
      this._pending.delete(msg.id);
      p.reject(new CoreError(msg.error));
      // After a crash (a bug, or memory exhausted) the wasm instance is not to be trusted.
      if (msg.error.kind === 'internal' || /out of memory/.test(msg.error.message)) {
        this.terminate(msg.error);
      }
    } else if (p.onMessage) {
      p.onMessage(msg);
    }
  }
}

/** This visit's name among the outputs kept in the origin's private storage: its files are
 * `<session>-…`, and a Web Lock of that name held while the page lives tells other tabs (and
 * the next visit's clean-up) which files are still in use. */
const SESSION = `s${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
const LOCK = 'prvsight-outputs-';

/** The outputs folder in the origin's private storage, or null where the browser has none. */
async function outputsDir() {
  try {
    const root = await globalThis.navigator.storage.getDirectory();
    return await root.getDirectoryHandle('prvsight-outputs', { create: true });
  } catch {
    return null;
  }
}

/** Removes the outputs of earlier visits (their tabs closed: no lock held), and holds this
 * visit's lock until the page goes. Gives whether outputs can go to disk here. */
async function prepareDisk() {
  // `?outputs=memory` in the page's address keeps them in memory (to measure the difference).
  if (new URLSearchParams(globalThis.location?.search ?? '').get('outputs') === 'memory') return false;
  // Sync access handles exist in workers only: the storage worker's first open tells whether
  // they work here (TraceOutput falls back to memory when not).
  const dir = await outputsDir();
  if (!dir) return false;
  const locks = globalThis.navigator.locks;
  let live = new Set([SESSION]);
  if (locks) {
    locks.request(`${LOCK}${SESSION}`, () => new Promise(() => {})).catch(() => {});
    const held = await locks.query();
    live = new Set([SESSION, ...held.held.map((l) => l.name).filter((n) => n.startsWith(LOCK)).map((n) => n.slice(LOCK.length))]);
  }
  for await (const [name] of dir.entries()) {
    if (!live.has(name.split('-')[0])) await dir.removeEntry(name).catch(() => {});
  }
  return true;
}

let diskReady = null;
let outputNo = 0;

/** Where a conversion's trace goes as its pieces come: a file in the origin's private storage
 * (written in order by the storage worker), so that a trace of gigabytes never sits in the
 * page's memory; memory where the browser has no such storage. `first`: the number of the
 * first piece (the split conversion numbers its pieces from -1; one worker's come in order). */
class TraceOutput {
  static async open(store, stem, first) {
    const out = new TraceOutput(first);
    if (!(await (diskReady ??= prepareDisk()))) return out;
    out.name = `${SESSION}-${++outputNo}-${stem.replace(/[^\w.-]/g, '_')}`;
    out.store = store;
    try {
      await store.call({ type: 'storeOpen', name: out.name });
    } catch {
      out.store = null;
    }
    return out;
  }

  constructor(first) {
    this.store = null;
    this.name = null;
    this.next = first;
    /** Pieces that came before their turn, by number. */
    this.early = new Map();
    /** In memory: the pieces as Blobs. */
    this.parts = [];
    this.written = Promise.resolve();
  }

  get onDisk() {
    return this.store !== null;
  }

  /** Piece `seq` of the trace (undefined: the next one in order). */
  add(seq, bytes) {
    if (seq === undefined) {
      this._write(bytes);
      return;
    }
    this.early.set(seq, bytes);
    while (this.early.has(this.next)) {
      this._write(this.early.get(this.next));
      this.early.delete(this.next);
      this.next += 1;
    }
  }

  _write(bytes) {
    if (!bytes.length) return;
    if (!this.store) {
      this.parts.push(new Blob([bytes]));
      return;
    }
    // Sent at once (the worker writes them in the order they come); the first failure, a full
    // disk, is kept for finish().
    const w = this.store.call({ type: 'storeWrite', name: this.name, bytes }, null, [bytes.buffer]);
    this.written = this.written.then(() => w);
  }

  /** The whole trace: a disk-backed File, or a Blob in memory. */
  async finish(type) {
    if (this.early.size) throw new CoreError({ kind: 'internal', message: `the trace is missing piece ${this.next}`, hint: 'Convert again; if it persists, please report it.' });
    if (!this.store) return new Blob(this.parts, { type });
    await this.written;
    await this.store.call({ type: 'storeClose', name: this.name });
    const dir = await outputsDir();
    return (await dir.getFileHandle(this.name)).getFile();
  }

  /** Drops what was written (a failed or cancelled conversion). */
  abort() {
    if (this.store) this.store.call({ type: 'storeRemove', name: this.name }).catch(() => {});
    this.parts = [];
  }
}

/** Whether a gzipped conversion is split over three workers (reader, writer, gzip; see
 * worker.js): where the browser reports a second core. `?workers=1` in the page's address
 * turns it off. */
function splitWorkers() {
  const cores = globalThis.navigator?.hardwareConcurrency ?? 1;
  const one = new URLSearchParams(globalThis.location?.search ?? '').get('workers') === '1';
  return cores >= 2 && !one;
}

export class Converter {
  constructor() {
    /** @type {CoreWorker | null} inspects; converts alone, or reads for the writer */
    this._main = null;
    /** @type {CoreWorker | null} writes the bundle from the main worker's records */
    this._writer = null;
    /** @type {CoreWorker | null} gzips the writer's trace */
    this._gzip = null;
    /** @type {CoreWorker | null} writes outputs to the origin's private storage */
    this._store = null;
    this._version = null;
    /** @type {Input[] | null} the inputs of the last inspection, which the main worker keeps
     * open with its plan for the next conversion (worker.js `keep`) */
    this._inspected = null;
  }

  /** Version of the wasm core (starts the worker if needed). */
  async version() {
    await this._ensure();
    return this._version;
  }

  /** What the exports hold. @param {Input[]} inputs */
  async inspect(inputs) {
    await this._ensure();
    this._inspected = null;
    const report = await this._main.call({ type: 'inspect', inputs, keep: true });
    this._inspected = [...inputs];
    return report;
  }

  /** Run B compared with run A (each `{label, metrics}`): `{a, b, model, factors, verdict:
   * {main_factor, direction, summary}, scale, kernel_time, kernels}` (docs/METRICS.md). */
  async compare(a, b) {
    await this._ensure();
    return this._main.call({ type: 'compare', a, b });
  }

  /** Whether `inputs` are the very files of the last inspection (the same Blobs, in order). */
  _isInspected(inputs) {
    const last = this._inspected;
    return !!last && last.length === inputs.length && last.every((x, i) => x.name === inputs[i].name && x.data === inputs[i].data);
  }

  /** Whether `inputs` are the files of the last inspection: the conversion then starts from
   * what the inspection found. Once only: a conversion takes it. */
  _takeInspected(inputs) {
    const inspected = this._isInspected(inputs);
    this._inspected = null;
    return inspected;
  }

  /** Has the reader open the reading of a split conversion of `inputs` with `options` now,
   * before the click (worker.js `readAhead`): the conversion then starts with the records
   * flowing, where its options are these. Call it when the inspection is shown and when an
   * option changes. Nothing where the conversion would not be split or `inputs` are not the
   * inspected files; a failure shows in the conversion, which opens the files anew. */
  readAhead(inputs, options) {
    if (!this._main?.alive || options.gzip === false || !splitWorkers() || !this._isInspected(inputs)) return;
    this._main.call({ type: 'readAhead', inputs, options }).catch(() => {});
  }

  /**
   * Converts the inputs into one trace and its bundle.
   * @param {Input[]} inputs
   * @param {ConvertOptions} options
   * @param {(p: Progress) => void} [onProgress]
   * @returns {Promise<Converted>}
   */
  async convert(inputs, options, onProgress) {
    await this._ensure();
    const inspected = this._takeInspected(inputs);
    const split = options.gzip !== false && splitWorkers();
    // The trace goes to disk as its pieces come (TraceOutput); the rest of the archive, small,
    // stays in memory: the bundle is a Blob of [head, trace file, tail], which keeps the
    // trace's bytes on disk once. The .prv.gz's pieces of a split conversion come from several
    // workers: they are put in order by their number (worker.js, protocol); everything else in
    // the order it came.
    const stem = (options.stem || inputs[0]?.name || 'trace').replace(/\.[^.]*$/, '');
    const trace = await TraceOutput.open(this._ensureStore(), `${stem}.prv${options.gzip === false ? '' : '.gz'}`, split ? -1 : undefined);
    // The Chrome/Perfetto JSON, where asked for: written by the same pass, kept as the trace is.
    const json = options.json ? await TraceOutput.open(this._ensureStore(), `${stem}.json`, undefined) : null;
    const arrived = [];
    const collect = (msg) => {
      if (msg.type === 'progress' && onProgress) onProgress(msg.progress);
      if (msg.type === 'chunk') {
        if (msg.tag === 'json') {
          json.add(undefined, msg.bytes);
        } else if (msg.tag === 'trace') {
          // One worker's archive holds the trace where its first piece came.
          if (!split && !arrived.some((c) => c.tag === 'trace')) arrived.push({ tag: 'trace' });
          trace.add(msg.seq, msg.bytes);
        } else {
          arrived.push({ tag: msg.tag, part: new Blob([msg.bytes]) });
        }
      }
    };
    let value;
    let traceFile;
    let jsonFile = null;
    // The last conversion's timeline lives in the worker that ran its sinks; a new one replaces it.
    this._timeline = null;
    try {
      value = split
        ? await this._convertSplit(inputs, options, inspected, collect)
        : await this._main.call({ type: 'convert', inputs, options, inspected }, collect);
      traceFile = await trace.finish('application/octet-stream');
      jsonFile = json && (await json.finish('application/json'));
    } catch (e) {
      trace.abort();
      json?.abort();
      throw e;
    }
    const tagged = (tag) => arrived.filter((c) => c.tag === tag).map((c) => c.part);
    const archive = split
      ? [...tagged('zip'), traceFile, ...tagged('tail')]
      : arrived.map((c) => (c.tag === 'trace' ? traceFile : c.part));
    const zip = new Blob(archive, { type: 'application/zip' });
    const text = 'text/plain';
    const files = [
      { name: value.names.prv, blob: traceFile, type: 'trace' },
      { name: value.names.pcf, blob: new Blob([value.pcf], { type: text }), type: 'pcf' },
      { name: value.names.row, blob: new Blob([value.row], { type: text }), type: 'row' },
    ];
    let metrics = null;
    if (value.metrics) {
      files.push({ name: 'metrics.json', blob: new Blob([value.metrics], { type: 'application/json' }), type: 'metrics' });
      metrics = JSON.parse(value.metrics);
    }
    files.push({ name: 'README.txt', blob: new Blob([value.readme], { type: text }), type: 'readme' });
    if (value.timeline) this._timeline = split ? this._writer : this._main;
    return {
      summary: value.summary,
      names: value.names,
      bundle: { name: value.bundle_name, blob: zip, type: 'bundle' },
      json: jsonFile && value.json ? { name: value.json.name, blob: jsonFile, type: 'json', stats: value.json.stats } : null,
      files,
      metrics,
      readme: value.readme,
      onDisk: trace.onDisk,
      timeline: value.timeline || null,
    };
  }

  /** One frame of the last conversion's timeline: `{ rgba, values, busy, from_spans }` for
   * `view` over [start, end) ns, `width` pixels, `slots` (arrays of rows, each drawn as one). */
  timelineFrame(view, start, end, width, slots) {
    return this._timelineCall({ type: 'timelineFrame', view, start, end, width, slots });
  }

  /** The record under the pointer: `view`, `row`, time `t` and a tolerance in ns; or null. */
  timelineAt(view, row, t, tolerance) {
    return this._timelineCall({ type: 'timelineAt', view, row, t, tolerance });
  }

  /** The efficiency factors of [start, end) ns of the timeline. */
  timelineRange(start, end) {
    return this._timelineCall({ type: 'timelineRange', start, end });
  }

  _timelineCall(msg) {
    const w = this._timeline;
    if (!w || !w.alive) return Promise.reject({ kind: 'usage', message: 'the timeline is gone (the conversion was cancelled or replaced)', hint: 'Convert again to see it.' });
    return w.call(msg);
  }

  /** Bytes of this visit's outputs kept in the origin's private storage (null: none there). */
  async storageUsed() {
    const dir = await outputsDir();
    if (!dir) return null;
    let used = 0;
    for await (const [name, handle] of dir.entries()) {
      if (name.startsWith(`${SESSION}-`)) used += (await handle.getFile()).size;
    }
    return used;
  }

  /** Removes this visit's outputs from the origin's private storage (their links stop working). */
  async removeOutputs() {
    const dir = await outputsDir();
    if (!dir) return;
    for await (const [name] of dir.entries()) {
      if (name.startsWith(`${SESSION}-`)) await this._ensureStore().call({ type: 'storeRemove', name });
    }
  }

  /** Whether outputs go to disk here (the origin's private storage, with sync access handles). */
  async outputsOnDisk() {
    return (diskReady ??= prepareDisk());
  }

  /** The reader (main), writer and gzip workers joined by three channels; the writer's result. */
  async _convertSplit(inputs, options, inspected, collect) {
    const [main, writer, gzip] = await Promise.all(
      [this._main, this._ensureWriter(), this._ensureGzip()].map(async (w) => {
        await w.ready;
        return w;
      }),
    );
    // Reader to writer (records), writer to the gzip worker and, once it has read everything,
    // to the reader (segments of the .prv to deflate).
    const records = new MessageChannel();
    const toGzip = new MessageChannel();
    const toReader = new MessageChannel();
    const labels = inputs.map((i) => i.name);
    const read = main.call(
      { type: 'read', inputs, options, inspected, port: records.port1, helpPort: toReader.port1 },
      collect,
      [records.port1, toReader.port1],
    );
    const written = writer.call(
      { type: 'write', labels, options, port: records.port2, deflaters: [toGzip.port1, toReader.port2] },
      collect,
      [records.port2, toGzip.port1, toReader.port2],
    );
    const gzipped = gzip.call({ type: 'gzip', level: options.gzip_level, port: toGzip.port2 }, collect, [toGzip.port2]);
    try {
      const [, value] = await Promise.all([read, written, gzipped]);
      return value;
    } catch (e) {
      // One failed: the others wait for it forever, or hold junk. The reader's error says most
      // (a bad file, a bad option fail there first), then the writer's.
      for (const w of [main, writer, gzip]) w.terminate();
      const errorOf = (p) => p.then(() => null, (x) => (x.kind === 'cancelled' ? null : x));
      const [readError, writeError] = await Promise.all([errorOf(read), errorOf(written)]);
      throw readError || writeError || e;
    }
  }

  /** Stops the running request: the workers are ended and fresh ones start with the next
   * request. The pending promise rejects with kind "cancelled". */
  cancel() {
    this._inspected = null;
    this._main?.terminate();
    this._writer?.terminate();
    this._gzip?.terminate();
  }

  dispose() {
    this.cancel();
  }

  /** Resolves once every worker a conversion will use has started and warmed up (see
   * worker.js `warmUp`); a conversion started before only waits for the rest of it. */
  async warmedUp() {
    await this._ensure();
    const workers = [this._main, ...(splitWorkers() ? [this._writer, this._gzip] : [])];
    await Promise.all(workers.map(async (w) => {
      await w.ready;
      await w.call({ type: 'warm' });
    }));
  }

  async _ensure() {
    if (!this._main?.alive) {
      this._main = new CoreWorker('prvsight-converter', splitWorkers() ? 'read' : 'convert');
      this._main.ready.then((v) => {
        this._version = v;
      }, () => {});
    }
    // The other workers start alongside, so that their wasm is ready when a conversion begins.
    if (splitWorkers()) {
      this._ensureWriter().ready.catch(() => {});
      this._ensureGzip().ready.catch(() => {});
    }
    await this._main.ready;
  }

  _ensureWriter() {
    if (!this._writer?.alive) this._writer = new CoreWorker('prvsight-writer', 'write');
    return this._writer;
  }

  _ensureGzip() {
    if (!this._gzip?.alive) this._gzip = new CoreWorker('prvsight-gzip', 'gzip');
    return this._gzip;
  }

  _ensureStore() {
    if (!this._store?.alive) this._store = new CoreWorker('prvsight-storage', 'store');
    return this._store;
  }
}
