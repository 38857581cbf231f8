// The wasm core's linear memory over a conversion, in Node (no browser needed):
//   node wasm-memory.cjs GLUE_DIR INPUT.sqlite
// GLUE_DIR holds a `wasm-bindgen --target nodejs` build whose glue also exports `__memory`
// (scripts/bench/wasm-memory.sh makes it). The input is read into a Uint8Array (outside wasm
// memory, as the page's File is), converted to the bundle as the worker does, and a line is
// printed each time the memory grows, with the progress it grew at: when the peak is reached
// (preparing, or steadily while records flow) tells what holds it.
const path = require('path');
const fs = require('fs');
const [glue, file] = process.argv.slice(2);
if (!glue || !file) {
  console.error('usage: node wasm-memory.cjs GLUE_DIR INPUT.sqlite');
  process.exit(2);
}
const core = require(path.resolve(glue, 'prvsight.js'));
const memory = core.__memory();
const data = new Uint8Array(fs.readFileSync(file));
const t0 = Date.now();
let last = 0;
const mib = (b) => (b / 1048576).toFixed(0);
const sample = (what) => {
  const bytes = memory.buffer.byteLength;
  if (bytes !== last) {
    console.log(`${((Date.now() - t0) / 1000).toFixed(1)} s  ${mib(bytes)} MiB  ${what}`);
    last = bytes;
  }
};
sample('loaded');
let out = 0;
const result = core.convert(
  [{ name: path.basename(file), data }],
  {},
  (_tag, bytes) => { out += bytes.length; },
  (p) => { sample(`${p.phase}, ${p.records_done} records`); return true; },
);
sample('done');
console.log(`peak ${mib(memory.buffer.byteLength)} MiB; ${result.summary.records} records, ${out} bytes of bundle`);
