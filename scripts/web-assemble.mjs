// Final step of scripts/build-web.sh, on the copied site in DIR:
//  1. writes the offline file list and a content version into DIR/sw.js;
//  2. writes DIR/prvsight.html: the page as one file that works from file://.
//
// The single file keeps every module unchanged as a text block; a small inline loader turns
// them into blob: modules (rewriting only the `from './x.js'` specifiers) and imports app.js.
// The worker becomes a classic blob: worker made of the wasm-bindgen glue + worker.js, and the
// wasm and the sample export travel as base64. Its CSP allows exactly the loader and the
// stylesheet (by hash), blob: scripts, and no connections at all.
// Usage: node scripts/web-assemble.mjs DIR
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const dir = process.argv[2];
if (!dir) {
  console.error('usage: node scripts/web-assemble.mjs DIR');
  process.exit(2);
}
const read = (p) => readFileSync(join(dir, p), 'utf8');
const sha256 = (data) => createHash('sha256').update(data).digest('base64');

function files(d) {
  return readdirSync(d).flatMap((n) => {
    const p = join(d, n);
    return statSync(p).isDirectory() ? files(p) : [relative(dir, p)];
  });
}

// 1. Service worker: cache every file the page can load (not the docs, not the single file).
{
  const list = files(dir)
    .filter((f) => !['sw.js', 'prvsight.html', 'EMBED.md'].includes(f))
    .sort();
  const h = createHash('sha256');
  for (const f of list) h.update(f).update(readFileSync(join(dir, f)));
  const version = h.digest('hex').slice(0, 16);
  const urls = ['./', ...list.map((f) => `./${f}`)];
  const sw = read('sw.js').replace("'__VERSION__'", `'${version}'`).replace('__FILES__', JSON.stringify(urls));
  if (sw.includes('__VERSION__') || sw.includes('__FILES__')) throw new Error('sw.js placeholders not found');
  writeFileSync(join(dir, 'sw.js'), sw);
}

// 2. The single file.
{
  const entry = 'app.js';
  const importRe = /from '\.\/([\w-]+\.js)'/g;
  // Modules in dependency order, leaves first.
  const order = [];
  const visit = (name, stack = []) => {
    if (order.includes(name)) return;
    if (stack.includes(name)) throw new Error(`import cycle: ${[...stack, name].join(' → ')}`);
    for (const [, dep] of read(name).matchAll(importRe)) visit(dep, [...stack, name]);
    order.push(name);
  };
  visit(entry);

  const guard = (name, text) => {
    if (/<\/script/i.test(text)) throw new Error(`${name} contains "</script", which would end its block early`);
    return text;
  };
  const block = (id, text) => `<script type="text/plain" id="${id}">${guard(id, text)}</script>\n`;
  const b64 = (p) => readFileSync(join(dir, p)).toString('base64');

  const loader = `
const text = (id) => document.getElementById(id).textContent;
const bytes = (id) => { const s = atob(text(id)); const a = new Uint8Array(s.length); for (let i = 0; i < s.length; i++) a[i] = s.charCodeAt(i); return a; };
globalThis.PRVSIGHT_INLINE = { workerSource: text('worker-src'), wasmBytes: () => bytes('wasm-b64'), sampleBytes: () => bytes('sample-b64') };
const urls = {};
for (const name of ${JSON.stringify(order)}) {
  const src = text('m-' + name).replace(/from '\\.\\/([\\w-]+\\.js)'/g, (m, dep) => "from '" + urls[dep] + "'");
  urls[name] = URL.createObjectURL(new Blob([src], { type: 'text/javascript' }));
}
await import(urls[${JSON.stringify(entry)}]);
`;
  const css = read('style.css');
  const csp = [
    "default-src 'none'",
    `script-src 'sha256-${sha256(loader)}' blob: 'wasm-unsafe-eval'`,
    'worker-src blob:',
    "connect-src 'none'",
    'img-src blob: data:',
    `style-src 'sha256-${sha256(css)}'`,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');

  let html = read('index.html');
  const replaceOnce = (from, to) => {
    if (!html.includes(from)) throw new Error(`index.html: "${from}" not found`);
    html = html.replace(from, () => to);
  };
  html = html.replace(/<meta http-equiv="Content-Security-Policy" content="[^"]*">/, () => `<meta http-equiv="Content-Security-Policy" content="${csp}">`);
  if (!html.includes(csp)) throw new Error('index.html: CSP meta not found');
  replaceOnce('<link rel="stylesheet" href="style.css">', `<style>${css}</style>`);
  replaceOnce('<link rel="icon" href="icon.svg" type="image/svg+xml">', `<link rel="icon" href="data:image/svg+xml;base64,${b64('icon.svg')}" type="image/svg+xml">`);
  const payload =
    order.map((m) => block(`m-${m}`, read(m))).join('') +
    block('worker-src', `${read('pkg/prvsight.js')}\n${read('worker.js')}`) +
    block('wasm-b64', b64('pkg/prvsight_bg.wasm')) +
    block('sample-b64', b64('samples/testcuda_report1.sqlite')) +
    `<script type="module">${loader}</script>\n`;
  replaceOnce('<script type="module" src="app.js"></script>', '');
  replaceOnce('</body>', `${payload}</body>`);
  writeFileSync(join(dir, 'prvsight.html'), html);
}
