//! The wasm API as the worker calls it, run in Node (wasm-bindgen-test): inspect, convert with
//! its chunked bundle, options, progress, cancel and the errors the page shows. Inputs are
//! `Uint8Array`s read through the same read-only VFS as the browser's Blobs.
//!
//! Where `scripts/test-web.sh` left native CLI outputs in target/web-ref/, the wasm outputs must
//! equal them byte for byte.
#![cfg(all(target_family = "wasm", target_os = "unknown"))]

#[path = "../support/zipread.rs"]
mod zipread;

#[path = "../support/grow.rs"]
mod grow;

use std::cell::RefCell;
use std::io::Read;
use std::rc::Rc;

use js_sys::{Array, Function, Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

mod kept_inspection;
mod native_bytes;
mod sample;

const SAMPLE: &[u8] = include_bytes!("../../www/samples/testcuda_report1.sqlite");
const REPO: &str = env!("CARGO_MANIFEST_DIR");

#[wasm_bindgen(inline_js = "
export function read_file(p) {
  try { return new Uint8Array(process.getBuiltinModule('node:fs').readFileSync(p)); }
  catch (e) { return undefined; }
}
export function log(s) { console.log(s); }
")]
extern "C" {
    fn read_file(path: &str) -> JsValue;
    fn log(s: &str);
}

fn file(path: &str) -> Option<Vec<u8>> {
    let v = read_file(path);
    v.dyn_ref::<Uint8Array>().map(|a| a.to_vec())
}

fn input(name: &str, bytes: &[u8]) -> JsValue {
    let o = Object::new();
    Reflect::set(&o, &"name".into(), &name.into()).unwrap();
    Reflect::set(&o, &"data".into(), &Uint8Array::from(bytes)).unwrap();
    o.into()
}

fn inputs(list: &[(&str, &[u8])]) -> Array {
    list.iter().map(|(n, b)| input(n, b)).collect()
}

fn get(v: &JsValue, path: &str) -> JsValue {
    path.split('.')
        .fold(v.clone(), |o, k| match k.parse::<u32>() {
            Ok(i) => Reflect::get_u32(&o, i).unwrap(),
            Err(_) => Reflect::get(&o, &k.into()).unwrap(),
        })
}

fn string(v: &JsValue, path: &str) -> String {
    get(v, path)
        .as_string()
        .unwrap_or_else(|| panic!("{path} is not a string"))
}

fn number(v: &JsValue, path: &str) -> f64 {
    get(v, path)
        .as_f64()
        .unwrap_or_else(|| panic!("{path} is not a number"))
}

fn strings(v: &JsValue, path: &str) -> Vec<String> {
    Array::from(&get(v, path))
        .iter()
        .map(|x| x.as_string().unwrap())
        .collect()
}

/// What `convert` gave: the result object, and the chunk stream split by tag.
struct Converted {
    result: JsValue,
    zip: Vec<u8>,
    trace: Vec<u8>,
    /// The Chrome/Perfetto JSON (chunks tagged "json"), where asked for.
    json: Vec<u8>,
    phases: Vec<String>,
}

fn convert_with(
    list: &Array,
    options: JsValue,
    cancel_at: Option<f64>,
) -> Result<Converted, JsValue> {
    convert_after(list, options, cancel_at, None)
}

/// [`convert_with`], saying whether the inputs are those of the last kept inspection.
fn convert_after(
    list: &Array,
    options: JsValue,
    cancel_at: Option<f64>,
    inspected: Option<bool>,
) -> Result<Converted, JsValue> {
    let zip = Rc::new(RefCell::new(Vec::new()));
    let trace = Rc::new(RefCell::new(Vec::new()));
    let phases = Rc::new(RefCell::new(Vec::new()));
    let json = Rc::new(RefCell::new(Vec::new()));
    let (z, t, j) = (zip.clone(), trace.clone(), json.clone());
    let on_chunk =
        Closure::<dyn FnMut(String, Uint8Array)>::new(move |tag: String, bytes: Uint8Array| {
            let b = bytes.to_vec();
            if tag == "json" {
                // A file of its own, not part of the archive.
                j.borrow_mut().extend_from_slice(&b);
                return;
            }
            if tag == "trace" {
                t.borrow_mut().extend_from_slice(&b);
            } else {
                assert_eq!(tag, "zip");
            }
            z.borrow_mut().extend_from_slice(&b);
        });
    let p = phases.clone();
    let on_progress = Closure::<dyn FnMut(JsValue) -> bool>::new(move |v: JsValue| {
        p.borrow_mut().push(string(&v, "phase"));
        let done = number(&v, "records_done");
        cancel_at.is_none_or(|limit| done < limit)
    });
    let result = prvsight::wasm::convert(
        list.clone(),
        options,
        on_chunk.as_ref().unchecked_ref::<Function>(),
        on_progress.as_ref().unchecked_ref::<Function>(),
        inspected,
    )?;
    let zip = zip.borrow().clone();
    let trace = trace.borrow().clone();
    let phases = phases.borrow().clone();
    let json = json.borrow().clone();
    Ok(Converted {
        result,
        zip,
        trace,
        json,
        phases,
    })
}

/// The trace end of the native conversion of the sample (its .prv header), when present.
fn native_end_ns() -> Option<f64> {
    let prv = file(&format!("{REPO}/target/web-ref/testcuda_report1.prv"))?;
    let header =
        String::from_utf8_lossy(&prv[..prv.iter().position(|&b| b == b'\n')?]).into_owned();
    header.split("):").nth(1)?.split("_ns").next()?.parse().ok()
}

fn options(json: &str) -> JsValue {
    js_sys::JSON::parse(json).unwrap()
}

fn gunzip(b: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    flate2::read::GzDecoder::new(b).read_to_end(&mut v).unwrap();
    v
}

fn err_kind_and_message(e: JsValue) -> (String, String, String) {
    (
        string(&e, "kind"),
        string(&e, "message"),
        string(&e, "hint"),
    )
}

/// `plain` made a .prv.gz as the page's workers make it: cut into segments, each deflated in
/// pieces of `piece` bytes by one of `workers` deflaters in turn (`TraceSegments`), the
/// segments put together in order (`TraceJoin`). The .prv.gz, and what `TraceJoin::finish` said.
fn segments_joined(plain: &[u8], piece: usize, workers: usize) -> (Vec<u8>, JsValue) {
    let mut deflaters: Vec<_> = (0..workers)
        .map(|_| prvsight::wasm::TraceSegments::new(None).unwrap())
        .collect();
    let mut join = prvsight::wasm::TraceJoin::new(None).unwrap();
    let mut gz = join.header().to_vec();
    let segment = prvsight::wasm::segment_bytes() as usize;
    for (i, seg) in plain.chunks(segment).enumerate() {
        let d = &mut deflaters[i % workers];
        for p in seg.chunks(piece) {
            d.write(p).unwrap();
        }
        let end = d.end().unwrap();
        gz.extend(Uint8Array::from(get(&end, "bytes")).to_vec());
        let n = |k| number(&end, k);
        join.segment(
            n("plain_crc") as u32,
            n("plain_len"),
            n("crc") as u32,
            n("len"),
        )
        .unwrap();
    }
    let end = join.finish().unwrap();
    gz.extend(Uint8Array::from(get(&end, "bytes")).to_vec());
    assert!(join.finish().is_err(), "a .prv.gz ends once");
    (gz, end)
}
