// The page's one door to the converter worker (the idea of Squoosh's worker bridge): UI code
// calls typed async methods here and never sees the worker, its messages or the wasm.

/**
 * @typedef {{ name: string, data: Blob }} Input
 * @typedef {{ phase: string, records_done: number, records_estimate: number }} Progress
 * @typedef {{ families?: string[] | null, gzip?: boolean, gzip_level?: number, metrics?: boolean,
 *             nvtx_range?: string | null, nccl_as?: 'communication' | 'useful' }} ConvertOptions
 * @typedef {{ name: string, blob: Blob, type: string }} OutputFile
 * @typedef {{ summary: object, names: {folder: string, prv: string, pcf: string, row: string},
 *             bundle: OutputFile, files: OutputFile[], metrics: object | null, readme: string }} Converted
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

/** Starts the worker: from the inlined sources of the single-file build when present
 * (`globalThis.PRVSIGHT_INLINE`), else worker.js beside this module. */
function startWorker() {
  const inline = globalThis.PRVSIGHT_INLINE;
  if (inline) {
    const url = URL.createObjectURL(new Blob([inline.workerSource], { type: 'text/javascript' }));
    const worker = new Worker(url, { name: 'prvsight-converter' });
    URL.revokeObjectURL(url);
    return { worker, wasm: () => inline.wasmBytes() };
  }
  const worker = new Worker(new URL('./worker.js', import.meta.url), { name: 'prvsight-converter' });
  return { worker, wasm: () => undefined };
}

export class Converter {
  constructor() {
    this._nextId = 1;
    /** @type {Map<number, {resolve: Function, reject: Function, onMessage?: Function}>} */
    this._pending = new Map();
    this._worker = null;
    this._version = null;
  }

  /** Version of the wasm core (starts the worker if needed). */
  async version() {
    await this._ensure();
    return this._version;
  }

  /** What the exports hold. @param {Input[]} inputs */
  async inspect(inputs) {
    await this._ensure();
    return this._call({ type: 'inspect', inputs });
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
    // Output arrives in order as tagged chunks; consecutive chunks of one tag form a segment.
    // Blobs of blobs share storage: the bundle and the trace file hold the trace bytes once.
    const segments = [];
    const onMessage = (msg) => {
      if (msg.type === 'progress' && onProgress) onProgress(msg.progress);
      if (msg.type === 'chunk') {
        const last = segments[segments.length - 1];
        if (last && last.tag === msg.tag) last.parts.push(msg.bytes);
        else segments.push({ tag: msg.tag, parts: [msg.bytes] });
      }
    };
    const value = await this._call({ type: 'convert', inputs, options }, onMessage);
    const blobs = segments.map((s) => ({ tag: s.tag, blob: new Blob(s.parts) }));
    const zip = new Blob(blobs.map((s) => s.blob), { type: 'application/zip' });
    const trace = new Blob(blobs.filter((s) => s.tag === 'trace').map((s) => s.blob), {
      type: 'application/octet-stream',
    });
    const text = 'text/plain';
    const files = [
      { name: value.names.prv, blob: trace, type: 'trace' },
      { name: value.names.pcf, blob: new Blob([value.pcf], { type: text }), type: 'pcf' },
      { name: value.names.row, blob: new Blob([value.row], { type: text }), type: 'row' },
    ];
    let metrics = null;
    if (value.metrics) {
      files.push({ name: 'metrics.json', blob: new Blob([value.metrics], { type: 'application/json' }), type: 'metrics' });
      metrics = JSON.parse(value.metrics);
    }
    files.push({ name: 'README.txt', blob: new Blob([value.readme], { type: text }), type: 'readme' });
    return {
      summary: value.summary,
      names: value.names,
      bundle: { name: value.bundle_name, blob: zip, type: 'bundle' },
      files,
      metrics,
      readme: value.readme,
    };
  }

  /** Stops the running request: the worker is ended (a busy worker cannot read messages) and a
   * fresh one starts with the next request. The pending promise rejects with kind "cancelled". */
  cancel() {
    if (!this._worker) return;
    this._worker.terminate();
    this._worker = null;
    this._failAll(CANCELLED);
  }

  dispose() {
    this.cancel();
  }

  async _ensure() {
    if (this._worker) return this._ready;
    const { worker, wasm } = startWorker();
    this._worker = worker;
    worker.onmessage = (ev) => this._receive(ev.data);
    worker.onerror = (ev) => {
      ev.preventDefault();
      this._worker = null;
      worker.terminate();
      this._failAll({
        kind: 'internal',
        message: `the converter could not start: ${ev.message || 'worker error'}`,
        hint: 'Reload the page. If it persists, the browser may block workers or WebAssembly here.',
      });
    };
    const bytes = wasm();
    this._ready = this._call({ type: 'init', wasm: bytes }, null, bytes ? [bytes.buffer] : []).then((v) => {
      this._version = v;
    });
    return this._ready;
  }

  _call(msg, onMessage = null, transfer = []) {
    // Cancelled between the start of a request and its message to the worker.
    if (!this._worker) return Promise.reject(new CoreError(CANCELLED));
    const id = this._nextId++;
    return new Promise((resolve, reject) => {
      this._pending.set(id, { resolve, reject, onMessage });
      this._worker.postMessage({ ...msg, id }, transfer);
    });
  }

  _receive(msg) {
    const p = this._pending.get(msg.id);
    if (!p) return;
    if (msg.type === 'done') {
      this._pending.delete(msg.id);
      p.resolve(msg.value);
    } else if (msg.type === 'error') {
      this._pending.delete(msg.id);
      // After a crash (a bug, or memory exhausted) the wasm instance is not to be trusted: the
      // next request gets a fresh worker.
      p.reject(new CoreError(msg.error));
      if (msg.error.kind === 'internal' || /out of memory/.test(msg.error.message)) {
        this._worker.terminate();
        this._worker = null;
        this._failAll(msg.error);
      }
    } else if (p.onMessage) {
      p.onMessage(msg);
    }
  }

  _failAll(error) {
    const pending = [...this._pending.values()];
    this._pending.clear();
    for (const p of pending) p.reject(new CoreError(error));
  }
}
