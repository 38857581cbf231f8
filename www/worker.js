// The converter's worker: owns the wasm core and runs it off the page's thread. A classic
// (non-module) worker on purpose: the single-file build starts it from a blob: URL, and
// Chromium refuses module workers there when the page comes from file://.
//
// Protocol (the page side is bridge.js, the only code that talks to this worker):
//   in:  {id, type: 'init', wasm?: ArrayBuffer}      wasm bytes (single-file build) or fetch pkg/
//        {id, type: 'inspect', inputs: [{name, data: Blob}]}
//        {id, type: 'convert', inputs, options, gzipPort?: MessagePort}
//        {id, type: 'gzip', level?: number, port: MessagePort}
//   out: {id, type: 'progress', progress: {phase, records_done, records_estimate}}
//        {id, type: 'chunk', tag: 'zip'|'trace'|'tail', bytes: Uint8Array}   (transferred)
//        {id, type: 'done', value}  |  {id, type: 'error', error: {kind, message, hint}}
//
// Two workers share a gzipped conversion when the page has them (bridge.js): this one converts
// (`convert` with a `gzipPort`), sending the plain .prv through the port and the archive around
// the trace entry to the page ('zip' before the trace, 'tail' after it); the other gzips what
// arrives on its port (`gzip`), sends the .prv.gz to the page ('trace') and its CRC-32 and size
// back through the port, which the archive's tail needs. The page puts the archive together.
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

const handlers = {
  init(msg) {
    ready = wasm_bindgen({ module_or_path: msg.wasm || './pkg/prvsight_bg.wasm' }).then((exports) => {
      memory = exports.memory;
      return wasm_bindgen.version();
    });
    return ready;
  },
  async inspect(msg) {
    await ready;
    return wasm_bindgen.inspect(msg.inputs);
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
    const port = msg.gzipPort;
    let value;
    if (port) {
      let tag = 'zip';
      const onOutput = (t, bytes) => {
        if (t === 'prv') port.postMessage(bytes, [bytes.buffer]);
        else onChunk(tag, bytes);
      };
      const pending = wasm_bindgen.convert_trace_elsewhere(msg.inputs, msg.options || {}, onOutput, onProgress);
      // The plain trace is all sent: the other worker ends the .prv.gz and says what it is.
      const gz = new Promise((resolve) => {
        port.onmessage = (ev) => resolve(ev.data);
      });
      port.postMessage(null);
      const { crc, size } = await gz;
      tag = 'tail';
      value = pending.finish(crc, size);
    } else {
      value = wasm_bindgen.convert(msg.inputs, msg.options || {}, onChunk, onProgress);
    }
    const transfer = [value.pcf.buffer, value.row.buffer];
    // For the benchmark (scripts/bench/web.mjs reads this line): the wasm memory's peak size.
    if (memory) console.debug(`prvsight: wasm memory ${memory.buffer.byteLength} bytes`);
    return { value, transfer };
  },
  async gzip(msg) {
    await ready;
    const { id, port } = msg;
    const gz = new wasm_bindgen.TraceGzip(msg.level ?? undefined);
    const send = (bytes) => {
      if (bytes.length) self.postMessage({ id, type: 'chunk', tag: 'trace', bytes }, [bytes.buffer]);
    };
    return new Promise((resolve, reject) => {
      port.onmessage = (ev) => {
        try {
          if (ev.data === null) {
            const end = gz.finish();
            send(end.bytes);
            port.postMessage({ crc: end.crc, size: end.size });
            resolve({ crc: end.crc, size: end.size });
          } else {
            send(gz.write(ev.data));
          }
        } catch (e) {
          reject(e);
        }
      };
    });
  },
};

self.onmessage = async (ev) => {
  const msg = ev.data;
  const handler = handlers[msg.type];
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
