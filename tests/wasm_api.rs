//! The wasm API as the worker calls it, run in Node (wasm-bindgen-test): inspect, convert with
//! its chunked bundle, options, progress, cancel and the errors the page shows. Inputs are
//! `Uint8Array`s read through the same read-only VFS as the browser's Blobs.
//!
//! Where `scripts/test-web.sh` left native CLI outputs in target/web-ref/, the wasm outputs must
//! equal them byte for byte.
#![cfg(all(target_family = "wasm", target_os = "unknown"))]

#[path = "support/zipread.rs"]
mod zipread;

#[path = "support/grow.rs"]
mod grow;

use std::cell::RefCell;
use std::io::Read;
use std::rc::Rc;

use js_sys::{Array, Function, Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

const SAMPLE: &[u8] = include_bytes!("../www/samples/testcuda_report1.sqlite");
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

#[wasm_bindgen_test]
fn inspect_tells_what_the_sample_holds() {
    let r = prvsight::wasm::inspect(inputs(&[("testcuda_report1.sqlite", SAMPLE)]), None).unwrap();
    assert_eq!(string(&r, "files.0.name"), "testcuda_report1.sqlite");
    assert_eq!(number(&r, "files.0.size"), 577_536.0);
    assert_eq!(string(&r, "files.0.nsys_version"), "2026.1.1.204");
    assert_eq!(string(&r, "files.0.schema_version"), "3.24.14");
    assert_eq!(string(&r, "files.0.hostname"), "0x822a5b873");
    assert_eq!(
        strings(&r, "files.0.gpus"),
        ["GPU0 (NVIDIA GeForce RTX 4060 Ti)"]
    );
    // Families with rows in this export (more may be added to the converter; these are the
    // export's facts).
    let fams = strings(&r, "files.0.families");
    for f in ["kernel", "memcpy", "cuda-api", "osrt"] {
        assert!(fams.iter().any(|x| x == f), "{f} missing from {fams:?}");
    }
    for f in ["memset", "nvtx", "mpi"] {
        assert!(
            !fams.iter().any(|x| x == f),
            "{f} is not in this export: {fams:?}"
        );
    }
    assert_eq!(Array::from(&get(&r, "files.0.ranks")).length(), 0);
    assert_eq!(number(&r, "files.0.processes.0.pid"), 17068.0);
    assert_eq!(Array::from(&get(&r, "files.0.nvtx_names")).length(), 0);
    // The trace spans at least the last kernel's end (1,523,137,788 ns after the session start,
    // less the origin); the native CLI's header has the exact value.
    let duration = number(&r, "trace.duration_ns");
    match native_end_ns() {
        Some(end) => assert_eq!(duration, end),
        None => assert!(duration > 1.0e9 && duration < 2.0e9, "{duration}"),
    }
    // 4 GPU streams and at least the 4 host threads with CUDA calls; the native .row has the count.
    let threads = number(&r, "trace.threads");
    match file(&format!("{REPO}/target/web-ref/testcuda_report1.row")) {
        Some(row) => {
            let row = String::from_utf8(row).unwrap();
            let line = row
                .lines()
                .find(|l| l.starts_with("LEVEL THREAD SIZE "))
                .expect("thread level");
            assert_eq!(threads.to_string(), line["LEVEL THREAD SIZE ".len()..]);
        }
        None => assert!(threads >= 8.0, "{threads}"),
    }
    assert!(get(&r, "problem").is_null());
}

#[wasm_bindgen_test]
fn convert_streams_a_bundle_whose_trace_bytes_are_the_trace_file() {
    let c = convert_with(
        &inputs(&[("testcuda_report1.sqlite", SAMPLE)]),
        JsValue::UNDEFINED,
        None,
    )
    .unwrap();
    let r = &c.result;
    assert_eq!(string(r, "bundle_name"), "testcuda_report1.zip");
    assert_eq!(string(r, "names.prv"), "testcuda_report1.prv.gz");
    assert_eq!(number(r, "summary.counts.kernel"), 4.0);
    assert_eq!(number(r, "summary.counts.memcpy"), 12.0);
    assert_eq!(number(r, "summary.counts.cuda-api"), 44.0);
    let entries = zipread::read_zip(&c.zip).unwrap();
    let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        names[..3],
        [
            "testcuda_report1/testcuda_report1.prv.gz",
            "testcuda_report1/testcuda_report1.pcf",
            "testcuda_report1/testcuda_report1.row"
        ]
    );
    assert!(
        names.contains(&"testcuda_report1/metrics.json")
            && names.last() == Some(&"testcuda_report1/README.txt")
    );
    // The bytes tagged "trace" are exactly the stored .prv.gz entry.
    assert!(c.trace == entries[0].data);
    let prv = gunzip(&c.trace);
    assert!(prv.starts_with(b"#Paraver (25/01/2026 at 02:26):"));
    if let Some(end) = native_end_ns() {
        assert!(prv.starts_with(format!("#Paraver (25/01/2026 at 02:26):{end}_ns:").as_bytes()));
    }
    // pcf and row come back as arrays too, equal to their entries.
    assert_eq!(Uint8Array::from(get(r, "pcf")).to_vec(), entries[1].data);
    assert_eq!(Uint8Array::from(get(r, "row")).to_vec(), entries[2].data);
    // metrics.json is returned as text and parses with the documented top-level fields.
    let metrics = js_sys::JSON::parse(&string(r, "metrics")).unwrap();
    assert_eq!(number(&metrics, "schema_version"), 2.0);
    assert_eq!(
        string(&metrics, "gpus.0.label"),
        "GPU0 (NVIDIA GeForce RTX 4060 Ti)"
    );
    assert_eq!(c.phases.first().map(String::as_str), Some("sorting"));
    assert_eq!(c.phases.last().map(String::as_str), Some("finishing"));

    let base = format!("{REPO}/target/web-ref/testcuda_report1");
    match (
        file(&format!("{base}.prv")),
        file(&format!("{base}.pcf")),
        file(&format!("{base}.row")),
    ) {
        (Some(p), Some(f), Some(w)) => {
            assert!(prv == p, "wasm .prv differs from the native CLI's");
            assert!(
                entries[1].data == f && entries[2].data == w,
                "wasm .pcf/.row differ from native"
            );
        }
        _ => log(&format!(
            "SKIP: no native reference in {base}.* (scripts/test-web.sh writes it)"
        )),
    }
}

#[wasm_bindgen_test]
fn the_timeline_built_in_the_conversion_equals_the_clis() {
    let c = convert_with(
        &inputs(&[("testcuda_report1.sqlite", SAMPLE)]),
        JsValue::UNDEFINED,
        None,
    )
    .unwrap();
    let info = get(&c.result, "timeline");
    assert_eq!(number(&info, "rows.length"), 13.0);
    assert_eq!(
        js_sys::JSON::stringify(&prvsight::wasm::timeline::timeline_info().unwrap()).unwrap(),
        js_sys::JSON::stringify(&info).unwrap()
    );
    // One slot per row of the kernels view, 100 columns over the whole run.
    let rows = Array::from(&get(&view_of(&info, "kernels"), "rows"));
    assert_eq!(rows.length(), 4);
    let slots: Array = rows.iter().map(|r| Array::of1(&r)).collect();
    let end = number(&info, "end_ns");
    let frame = prvsight::wasm::timeline::timeline_frame("kernels", 0.0, end, 100, slots).unwrap();
    let values = js_sys::Uint32Array::from(get(&frame, "values")).to_vec();
    let busy = Uint8Array::from(get(&frame, "busy")).to_vec();
    assert_eq!(values.len(), 400);
    assert_eq!(
        js_sys::Uint8ClampedArray::from(get(&frame, "rgba")).length(),
        1600
    );
    assert!(busy.iter().any(|&b| b > 0));
    let reference = format!("{REPO}/target/web-ref/testcuda_report1.timeline.json");
    let Some(reference) = file(&reference) else {
        log(&format!(
            "SKIP: no native reference {reference} (scripts/test-web.sh writes it)"
        ));
        return;
    };
    let reference = js_sys::JSON::parse(&String::from_utf8(reference).unwrap()).unwrap();
    // The description and every cell are the native CLI's.
    assert_eq!(json_value(&get(&reference, "timeline")), json_value(&info));
    let cells = Array::from(&get(&get(&reference, "frame"), "cells"));
    assert_eq!(cells.length(), 400);
    for (i, cell) in cells.iter().enumerate() {
        assert_eq!(f64::from(values[i]), number(&cell, "value"), "cell {i}");
        assert_eq!(f64::from(busy[i]), number(&cell, "busy"), "cell {i}");
    }
}

/// A JS value as JSON, to compare whatever the order of object keys.
fn json_value(v: &JsValue) -> serde_json::Value {
    serde_json::from_str(&String::from(js_sys::JSON::stringify(v).unwrap())).unwrap()
}

fn view_of(info: &JsValue, id: &str) -> JsValue {
    Array::from(&get(info, "views"))
        .iter()
        .find(|v| string(v, "id") == id)
        .unwrap_or_else(|| panic!("no view {id}"))
}

#[wasm_bindgen_test]
fn options_choose_families_gzip_and_metrics() {
    let list = inputs(&[("run.sqlite", SAMPLE)]);
    let c = convert_with(
        &list,
        options(r#"{"families":["kernel"],"gzip":false,"metrics":false,"stem":"k only"}"#),
        None,
    )
    .unwrap();
    let r = &c.result;
    assert_eq!(string(r, "names.prv"), "k_only.prv");
    assert_eq!(number(r, "summary.records"), 4.0);
    assert_eq!(Object::keys(&get(r, "summary.counts").into()).length(), 1);
    assert!(get(r, "metrics").is_null());
    let entries = zipread::read_zip(&c.zip).unwrap();
    assert_eq!(entries[0].name, "k_only/k_only.prv");
    assert!(entries.iter().all(|e| !e.name.ends_with("metrics.json")));
    assert!(c.trace == entries[0].data && c.trace.starts_with(b"#Paraver ("));
    if let Some(native) = file(&format!(
        "{REPO}/target/web-ref/testcuda_report1.kernel.prv"
    )) {
        assert!(
            c.trace == native,
            "kernel-only .prv differs from the native CLI's"
        );
    }

    // A time window cuts the trace as `prvsight convert --window` does.
    let c = convert_with(
        &list,
        options(r#"{"keep_window":"1.4s..1.6s","gzip":false}"#),
        None,
    )
    .unwrap();
    match file(&format!(
        "{REPO}/target/web-ref/testcuda_report1.window.prv"
    )) {
        Some(native) => assert!(
            c.trace == native,
            "windowed .prv differs from the native CLI's"
        ),
        None => log("SKIP: no native windowed reference"),
    }
    assert!(c.trace.starts_with(b"#Paraver ("));
    let e = convert_with(
        &list,
        options(r#"{"keep_window":"1s..2s","keep_nvtx_range":"x"}"#),
        None,
    )
    .err()
    .unwrap();
    assert_eq!(err_kind_and_message(e).0, "usage");
    let e = convert_with(&list, options(r#"{"gzip_level":0}"#), None)
        .err()
        .unwrap();
    let (kind, message, _) = err_kind_and_message(e);
    assert_eq!(kind, "usage");
    assert!(message.contains("gzip_level"), "{message}");
    let e = convert_with(
        &list,
        options(r#"{"keep_nvtx_range":"no such range"}"#),
        None,
    )
    .err()
    .unwrap();
    let (kind, msg, _) = err_kind_and_message(e);
    assert_eq!(kind, "usage");
    assert!(msg.contains("no NVTX range named 'no such range'"), "{msg}");

    let e = convert_with(&list, options(r#"{"families":["kernels","bogus"]}"#), None)
        .err()
        .unwrap();
    let (kind, msg, _) = err_kind_and_message(e);
    assert_eq!(kind, "usage");
    assert!(msg.contains("unknown record family 'bogus'"), "{msg}");
    let e = convert_with(&list, options(r#"{"nccl_as":"sometimes"}"#), None)
        .err()
        .unwrap();
    assert_eq!(err_kind_and_message(e).0, "usage");
}

#[wasm_bindgen_test]
fn the_metrics_window_follows_the_nvtx_range_option() {
    let Some(bytes) = file(&format!("{REPO}/../shared/traces/mfu_2gpu_before.sqlite")) else {
        log("SKIP: ../shared/traces/mfu_2gpu_before.sqlite is not present");
        return;
    };
    let list = inputs(&[("mfu_2gpu_before.sqlite", &bytes)]);
    let r = prvsight::wasm::inspect(list.clone(), None).unwrap();
    let names: Vec<String> = Array::from(&get(&r, "files.0.nvtx_names"))
        .iter()
        .map(|n| string(&n, "name"))
        .collect();
    assert!(names.iter().any(|n| n == "aten::to"), "{names:?}");
    assert_eq!(strings(&r, "trace.gpus"), ["GPU0", "GPU1"]);
    let c = convert_with(&list, options(r#"{"nvtx_range":"aten::to"}"#), None).unwrap();
    let m = js_sys::JSON::parse(&string(&c.result, "metrics")).unwrap();
    assert_eq!(string(&m, "window.nvtx_range.name"), "aten::to");
    assert!(number(&m, "window.instances") > 0.0);
}

#[wasm_bindgen_test]
fn two_conversions_compare_with_a_verdict_and_iterations_follow_their_option() {
    let dir = format!("{REPO}/../shared/traces");
    let (Some(before), Some(after)) = (
        file(&format!("{dir}/mfu_2gpu_before.sqlite")),
        file(&format!("{dir}/mfu_2gpu_after.sqlite")),
    ) else {
        log("SKIP: ../shared/traces/mfu_2gpu_*.sqlite are not present");
        return;
    };
    let metrics_of = |name: &str, bytes: &[u8], opts: &str| {
        let c = convert_with(&inputs(&[(name, bytes)]), options(opts), None).unwrap();
        js_sys::JSON::parse(&string(&c.result, "metrics")).unwrap()
    };
    let a = metrics_of("before.sqlite", &before, "{}");
    let b = metrics_of("after.sqlite", &after, "{}");
    assert_eq!(string(&a, "iterations.detected_by"), "gpu");
    let c = prvsight::wasm::compare("before", a.clone(), "after", b).unwrap();
    assert_eq!(string(&c, "model"), "device");
    let main = string(&c, "verdict.main_factor");
    let logs: Vec<(String, f64)> = [
        "load_balance",
        "communication_efficiency",
        "orchestration_efficiency",
    ]
    .iter()
    .map(|k| {
        (
            k.to_string(),
            number(&c, &format!("factors.{k}.log_change")).abs(),
        )
    })
    .collect();
    let largest = logs.iter().max_by(|x, y| x.1.total_cmp(&y.1)).unwrap();
    assert_eq!(main, largest.0);
    assert!(string(&c, "verdict.summary").starts_with("PE "));
    let off = metrics_of("before.sqlite", &before, r#"{"iterations":"none"}"#);
    assert_eq!(string(&off, "iterations.detected_by"), "none");
    let e = prvsight::wasm::compare("nothing", JsValue::from_str("x"), "before", a).unwrap_err();
    assert_eq!(err_kind_and_message(e).0, "usage");
    let e = convert_with(
        &inputs(&[("b.sqlite", &before)]),
        options(r#"{"elapsed":"wall"}"#),
        None,
    )
    .err()
    .unwrap();
    assert_eq!(err_kind_and_message(e).0, "usage");
}

#[wasm_bindgen_test]
fn several_reports_show_their_ranks_and_merge() {
    let dir = format!("{REPO}/../shared/traces/generated/mpi4");
    let files: Vec<Option<Vec<u8>>> = (0..4)
        .map(|r| file(&format!("{dir}/rank{r}.sqlite")))
        .collect();
    if files.iter().any(Option::is_none) {
        log(&format!("SKIP: {dir} is not present"));
        return;
    }
    let named: Vec<(String, Vec<u8>)> = files
        .into_iter()
        .enumerate()
        .map(|(r, b)| (format!("rank{r}.sqlite"), b.unwrap()))
        .collect();
    let refs: Vec<(&str, &[u8])> = named
        .iter()
        .map(|(n, b)| (n.as_str(), b.as_slice()))
        .collect();
    let list = inputs(&refs);
    let r = prvsight::wasm::inspect(list.clone(), None).unwrap();
    for i in 0..4 {
        let ranks: Vec<f64> = Array::from(&get(&r, &format!("files.{i}.ranks")))
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        assert_eq!(ranks, [i as f64], "file {i}");
        assert_eq!(
            string(&r, &format!("files.{i}.nsys_version")),
            "2023.4.4.54"
        );
    }
    assert_eq!(number(&r, "trace.processes"), 4.0);
    let c = convert_with(&list, JsValue::UNDEFINED, None).unwrap();
    assert_eq!(string(&c.result, "bundle_name"), "rank0+3.zip");
    assert_eq!(number(&c.result, "summary.counts.nvtx-push-pop"), 324.0);
    if let Some(native) = file(&format!("{REPO}/target/web-ref/mpi4.prv")) {
        assert!(
            gunzip(&c.trace) == native,
            "4-rank .prv differs from the native CLI's"
        );
    }
}

#[wasm_bindgen_test]
fn every_shared_export_gives_the_native_bytes() {
    let list = format!("{REPO}/target/web-ref/LIST");
    let Some(names) = file(&list) else {
        log(&format!(
            "SKIP: {list} is missing (scripts/test-web.sh writes the native references)"
        ));
        return;
    };
    let names = String::from_utf8(names).unwrap();
    let mut checked = 0;
    for name in names.lines().filter(|l| !l.is_empty()) {
        let src =
            file(&format!("{REPO}/../shared/traces/{name}.sqlite")).expect("listed export exists");
        let base = format!("{REPO}/target/web-ref/{name}");
        let result = convert_with(
            &inputs(&[(&format!("{name}.sqlite"), &src)]),
            JsValue::UNDEFINED,
            None,
        );
        match (result, file(&format!("{base}.prv"))) {
            (Ok(c), Some(prv)) => {
                assert!(
                    gunzip(&c.trace) == prv,
                    "{name}: .prv differs from the native CLI's"
                );
                assert!(
                    Uint8Array::from(get(&c.result, "pcf")).to_vec()
                        == file(&format!("{base}.pcf")).unwrap(),
                    "{name}: .pcf"
                );
                assert!(
                    Uint8Array::from(get(&c.result, "row")).to_vec()
                        == file(&format!("{base}.row")).unwrap(),
                    "{name}: .row"
                );
            }
            (Err(e), None) => {
                // The CLI refused it too; the message must be the same.
                let native = String::from_utf8(file(&format!("{base}.err")).unwrap()).unwrap();
                let msg = string(&e, "message");
                assert!(
                    native.contains(&msg),
                    "{name}: wasm says {msg:?}, native {native:?}"
                );
            }
            (Ok(_), None) => panic!("{name}: converts in wasm but not natively"),
            (Err(e), Some(_)) => panic!(
                "{name}: converts natively but wasm says {:?}",
                string(&e, "message")
            ),
        }
        checked += 1;
    }
    assert!(checked >= 8, "only {checked} exports listed");
}

#[wasm_bindgen_test]
fn progress_returning_false_cancels() {
    // 4 + 4 × 17,500 kernels: the pipeline asks its progress callback every 65,536 records.
    let bytes = grow::with_more_kernels(SAMPLE, 17_500, 100_000);
    let list = inputs(&[("many.sqlite", &bytes)]);
    let e = convert_with(&list, JsValue::UNDEFINED, Some(60_000.0))
        .err()
        .unwrap();
    let (kind, msg, _) = err_kind_and_message(e);
    assert_eq!(
        (kind.as_str(), msg.as_str()),
        ("cancelled", "conversion cancelled")
    );
    // Not cancelled, it converts every kernel.
    let c = convert_with(&list, options(r#"{"metrics":false}"#), None).unwrap();
    assert_eq!(number(&c.result, "summary.counts.kernel"), 70_004.0);
    assert!(c.phases.iter().any(|p| p == "converting"));
}

#[wasm_bindgen_test]
fn bad_files_give_errors_with_hints() {
    let cases: Vec<(&str, Vec<u8>, &str, &str)> = vec![
        (
            "notes.sqlite",
            b"just some text, certainly not a database file at all, but long enough".repeat(3),
            "not-sqlite",
            "SQLite header",
        ),
        ("empty.sqlite", Vec::new(), "not-sqlite", "empty (0 bytes)"),
        (
            "r.sqlite.gz",
            vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 1, 2, 3, 4, 5, 6, 7],
            "not-sqlite",
            "gzip",
        ),
        (
            "report.nsys-rep.zip",
            b"PK\x03\x04 and more bytes that do not matter here at all".to_vec(),
            "not-sqlite",
            "zip archive",
        ),
    ];
    for (name, bytes, kind, text) in cases {
        let e = prvsight::wasm::inspect(inputs(&[(name, &bytes)]), None)
            .err()
            .unwrap();
        let (k, msg, hint) = err_kind_and_message(e);
        assert_eq!(k, kind, "{name}: {msg}");
        assert!(
            msg.starts_with(&format!("{name}: ")) && msg.contains(text),
            "{name}: {msg}"
        );
        assert!(hint.contains("nsys export --type sqlite"), "{name}: {hint}");
    }

    // A real SQLite database that is not an export.
    let mut conn = rusqlite::Connection::open_in_memory().unwrap();
    conn.execute_batch(
        "CREATE TABLE customers(id INTEGER, name TEXT); INSERT INTO customers VALUES (1, 'a');",
    )
    .unwrap();
    let db = conn.serialize(rusqlite::MAIN_DB).unwrap().to_vec();
    let (k, msg, _) = err_kind_and_message(
        prvsight::wasm::inspect(inputs(&[("shop.db", &db)]), None)
            .err()
            .unwrap(),
    );
    assert_eq!(k, "not-nsys", "{msg}");
    assert!(
        msg.starts_with("shop.db: not an Nsight Systems export"),
        "{msg}"
    );

    // A truncated export: opening or converting fails, naming the file.
    let cut = &SAMPLE[..SAMPLE.len() / 2];
    let list = inputs(&[("half.sqlite", cut)]);
    let e = match prvsight::wasm::inspect(list.clone(), None) {
        Err(e) => e,
        Ok(_) => convert_with(&list, JsValue::UNDEFINED, None)
            .err()
            .expect("half a file cannot convert"),
    };
    let (k, msg, _) = err_kind_and_message(e);
    assert!(
        ["not-sqlite", "read", "schema", "bad-data"].contains(&k.as_str()),
        "{k}: {msg}"
    );
    assert!(msg.starts_with("half.sqlite: "), "{msg}");

    // Wrong shapes from the page are usage errors, not panics.
    let (k, msg, _) =
        err_kind_and_message(prvsight::wasm::inspect(Array::new(), None).err().unwrap());
    assert_eq!((k.as_str(), msg.as_str()), ("usage", "no input file given"));
    let bad: Array = [JsValue::from_str("x")].into_iter().collect();
    assert_eq!(
        err_kind_and_message(prvsight::wasm::inspect(bad, None).err().unwrap()).0,
        "usage"
    );
}

/// The direct reader of the file format (src/sqlfile) reads pages in wasm too, through the
/// read-only VFS: every row of the sample's API table as SQLite gives it.
#[wasm_bindgen_test]
fn the_direct_reader_reads_pages_through_the_vfs_in_wasm() {
    use prvsight::engine::page_reader::PageQuery;
    use prvsight::engine::prepass::{Prepass, Sql};
    use prvsight::engine::select::{Select, Val};
    use prvsight::nsys::Export;
    use prvsight::sqlfile::Pager;
    use prvsight::vfs::CacheConfig;
    let config = CacheConfig::for_files(&[SAMPLE.len() as u64])[0];
    let ex = Export::open_source("direct.sqlite", Box::new(SAMPLE.to_vec()), config).unwrap();
    let pager = Pager::new(&ex.conn)
        .unwrap()
        .expect("pages readable in wasm");
    let query = Select::new("CUPTI_ACTIVITY_KIND_RUNTIME")
        .output("rid", Val::Rowid)
        .output("start", Val::col("start"))
        .output("correlationId", Val::col("correlationId"))
        .not_null("start");
    assert!(
        PageQuery::compile(&pager, &query).unwrap().is_some(),
        "compiles in wasm"
    );
    let mut direct: Vec<(i64, i64, i64)> = Vec::new();
    let rows = &mut direct;
    let mut set = Prepass::new(&ex.conn, true);
    set.add(
        Some(&query),
        Sql::Given("SELECT 'not read through SQLite'".into()),
        Box::new(move |r| {
            let r = r.expect("a sound file");
            let int = |i| match r.value(i) {
                Ok(rusqlite::types::ValueRef::Integer(v)) => v,
                other => panic!("column {i}: {other:?}"),
            };
            rows.push((int(0), int(1), int(2)));
            Ok(true)
        }),
    );
    assert!(set.run()[0].is_ok());
    let mut st = ex
        .conn
        .prepare("SELECT rowid, start, correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE start IS NOT NULL")
        .unwrap();
    let sql: Vec<(i64, i64, i64)> = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(direct.len(), 44);
    assert_eq!(direct, sql);
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

/// Segments deflated by different workers join into the bytes of the conversion's own gzip,
/// here over several segments (the sample's trace is shorter than one).
#[wasm_bindgen_test]
fn segments_deflated_by_two_workers_join_into_the_conversions_gzip() {
    let mut plain = Vec::new();
    for i in 0..200_000u64 {
        plain.extend(format!("2:0:1:1:{}:{}:50000001:{}\n", i % 7 + 1, i * 1234, i % 97).bytes());
    }
    assert!(plain.len() > 2 * prvsight::wasm::segment_bytes() as usize);
    let mut w = prvsight::paraver::gzip::GzipWriter::inline(
        Vec::new(),
        prvsight::paraver::TRACE_GZIP_LEVEL,
    );
    std::io::Write::write_all(&mut w, &plain).unwrap();
    let want = w.finish().unwrap();
    let (got, end) = segments_joined(&plain, 300_000, 2);
    assert!(got == want);
    assert_eq!(number(&end, "size"), want.len() as f64);
    assert_eq!(number(&end, "crc") as u32, crc32fast::hash(&want));
}

/// The page's three-worker conversion: a reader (`ReaderSession`) hands the records over in
/// batches of bytes; a writer (`WriterSession`) writes the archive around the trace entry ("zip")
/// and the plain .prv ("prv"); the .prv is deflated in segments (`TraceSegments`, by whichever
/// worker is free) put together in order (`TraceJoin`). The archive put together is
/// `convert`'s, byte for byte, and so is the result.
#[wasm_bindgen_test]
fn a_conversion_split_over_three_workers_gives_the_same_archive() {
    let list = inputs(&[("testcuda_report1.sqlite", SAMPLE)]);
    let whole = convert_with(&list, options("{}"), None).unwrap();
    let on_progress = Closure::<dyn FnMut(JsValue) -> bool>::new(|_: JsValue| true);
    let mut reader = prvsight::wasm::ReaderSession::new(
        list,
        options("{}"),
        on_progress.as_ref().unchecked_ref::<Function>(),
        None,
    )
    .unwrap();
    assert!(reader.estimate() > 0.0);
    let reader_header = reader.header();
    // The writer: archive head and tail ("zip"), the plain trace ("prv").
    let head = Rc::new(RefCell::new(Vec::new()));
    let plain = Rc::new(RefCell::new(Vec::new()));
    let (h, p) = (head.clone(), plain.clone());
    let on_chunk =
        Closure::<dyn FnMut(String, Uint8Array)>::new(move |tag: String, bytes: Uint8Array| {
            match tag.as_str() {
                "zip" => h.borrow_mut().extend(bytes.to_vec()),
                "prv" => p.borrow_mut().extend(bytes.to_vec()),
                other => panic!("unexpected tag {other}"),
            }
        });
    let mut writer = prvsight::wasm::WriterSession::new(
        vec!["testcuda_report1.sqlite".into()],
        options("{}"),
        &reader.header(),
        on_chunk.as_ref().unchecked_ref::<Function>(),
    )
    .unwrap();
    // Small batches, so that the records cross in many of them.
    let (mut batches, mut delivered) = (0, 0.0);
    while let Some(batch) = reader.next_batch(100).unwrap() {
        delivered = writer.feed(&batch.to_vec()).unwrap();
        batches += 1;
    }
    let summary = reader.finish().unwrap();
    assert!(reader.finish().is_err(), "a reader finishes once");
    let records = number(&get(&whole.result, "summary"), "records");
    assert_eq!(delivered, records);
    assert!(batches as f64 >= records / 100.0, "{batches} batches");
    let pending = writer.finish(&summary).unwrap();
    assert!(writer.feed(&[]).is_err(), "a finished writer takes no more");
    let head_len = head.borrow().len();
    // The plain trace deflated segment by segment, each segment in pieces of its own size.
    let (trace, end) = segments_joined(&plain.borrow(), 100_000, 1);
    let result = pending
        .finish(number(&end, "crc") as u32, number(&end, "size"))
        .unwrap();
    let all = head.borrow().clone();
    let archive = [&all[..head_len], &trace[..], &all[head_len..]].concat();
    assert_eq!(trace, whole.trace, "the .prv.gz");
    assert_eq!(archive, whole.zip, "the archive");
    assert_eq!(
        js_sys::JSON::stringify(&get(&result, "summary")).unwrap(),
        js_sys::JSON::stringify(&get(&whole.result, "summary")).unwrap()
    );
    assert!(prvsight::wasm::TraceSegments::new(Some(0)).is_err());
    assert!(prvsight::wasm::TraceJoin::new(Some(10)).is_err());
    // A writer needs a reader's header, and a gzipped trace (else one worker does it all).
    let writer_with = |opts: &str, header: &str| {
        prvsight::wasm::WriterSession::new(
            vec!["x.sqlite".into()],
            options(opts),
            header,
            on_chunk.as_ref().unchecked_ref::<Function>(),
        )
        .err()
        .and_then(|e| get(&e, "kind").as_string())
    };
    assert_eq!(
        writer_with("{}", "{}").as_deref(),
        Some("usage"),
        "a header that is not one"
    );
    assert_eq!(
        writer_with("{\"gzip\": false}", &reader_header).as_deref(),
        Some("usage"),
        "no gzip"
    );
}

/// The reading side of a split conversion, all of it: what it took from the inspection, the
/// header, the batches, the summary.
fn read_all(list: &Array, opts: &str, inspected: Option<bool>) -> Result<Vec<String>, JsValue> {
    let on_progress = Closure::<dyn FnMut(JsValue) -> bool>::new(|_: JsValue| true);
    let mut reader = prvsight::wasm::ReaderSession::new(
        list.clone(),
        options(opts),
        on_progress.as_ref().unchecked_ref::<Function>(),
        inspected,
    )?;
    let mut out = vec![reader.reused(), reader.header()];
    while let Some(batch) = reader.next_batch(1000)? {
        out.push(format!("{:?}", batch.to_vec()));
    }
    out.push(reader.finish()?);
    Ok(out)
}

/// The page inspects the files as they are picked and keeps them open, with the conversion's
/// plan, for the conversion that follows (src/wasm/warm_start.rs). That conversion gives the bytes a
/// fresh one gives, whatever its options (the plan is used only where they plan alike), on one
/// worker or on the reader of a split one; and it reads the kept exports instead of opening
/// the inputs again, which shows here as other bytes under the same name and size converting
/// as the inspected ones. Anything else (other names, `inspected` not said) opens the inputs.
#[wasm_bindgen_test]
fn a_conversion_after_a_kept_inspection_starts_from_it() {
    let name = "testcuda_report1.sqlite";
    let list = inputs(&[(name, SAMPLE)]);
    let zeros = vec![0u8; SAMPLE.len()];
    let same_size = inputs(&[(name, &zeros)]);
    let not_sqlite = |r: Result<Converted, JsValue>| match r {
        Err(e) => string(&e, "kind") == "not-sqlite",
        Ok(_) => false,
    };
    for opts in [
        "{}",
        r#"{"families": ["kernel", "cuda-api"]}"#,
        r#"{"keep_window": "0..200ms", "metrics": false}"#,
    ] {
        let fresh = convert_with(&list, options(opts), None).unwrap();
        prvsight::wasm::inspect(list.clone(), Some(true)).unwrap();
        let after = convert_after(&same_size, options(opts), None, Some(true)).unwrap();
        assert_eq!(after.zip, fresh.zip, "{opts}: the archive");
        assert_eq!(
            js_sys::JSON::stringify(&get(&after.result, "summary")).unwrap(),
            js_sys::JSON::stringify(&get(&fresh.result, "summary")).unwrap(),
            "{opts}"
        );
        // Taken once: the next conversion opens its inputs.
        assert!(not_sqlite(convert_after(
            &same_size,
            options(opts),
            None,
            Some(true)
        )));

        let mut fresh = read_all(&list, opts, None).unwrap();
        assert_eq!(fresh.remove(0), "nothing");
        prvsight::wasm::inspect(list.clone(), Some(true)).unwrap();
        let mut after = read_all(&same_size, opts, Some(true)).unwrap();
        let reused = if opts.contains("families") {
            "files"
        } else {
            "files and plan"
        };
        assert_eq!(after.remove(0), reused, "{opts}");
        assert_eq!(after, fresh, "{opts}: the reader's batches");

        // The reading opened ahead of the conversion (`read_ahead`): with its options, taken as
        // it is; opened with other options, the conversion takes the files back; opened again
        // with the conversion's options (the page does when an option changes), re-planned.
        let ahead = |first: &str, then: Option<&str>| {
            prvsight::wasm::inspect(list.clone(), Some(true)).unwrap();
            assert!(prvsight::wasm::read_ahead(same_size.clone(), options(first)).unwrap());
            if let Some(then) = then {
                assert!(prvsight::wasm::read_ahead(same_size.clone(), options(then)).unwrap());
            }
            let mut after = read_all(&same_size, opts, Some(true)).unwrap();
            let reused = after.remove(0);
            assert_eq!(
                after, fresh,
                "{opts}, read ahead with {first} then {then:?}"
            );
            reused
        };
        assert_eq!(ahead(opts, None), "files and plan, read ahead", "{opts}");
        let other = r#"{"families": ["kernel"]}"#;
        assert_eq!(ahead(other, None), "files", "{opts}");
        assert_eq!(
            ahead(other, Some(opts)),
            "files and plan, read ahead",
            "{opts}"
        );
        // One worker converting after a read-ahead: the files taken back from it.
        prvsight::wasm::inspect(list.clone(), Some(true)).unwrap();
        assert!(prvsight::wasm::read_ahead(same_size.clone(), options(opts)).unwrap());
        let after = convert_after(&same_size, options(opts), None, Some(true)).unwrap();
        assert_eq!(
            after.zip,
            convert_with(&list, options(opts), None).unwrap().zip,
            "{opts}"
        );
        // Nothing kept, or other files: nothing opened ahead.
        assert!(!prvsight::wasm::read_ahead(same_size.clone(), options(opts)).unwrap());
        prvsight::wasm::inspect(list.clone(), Some(true)).unwrap();
        let renamed = inputs(&[("other.sqlite", SAMPLE)]);
        assert!(!prvsight::wasm::read_ahead(renamed, options(opts)).unwrap());
    }
    // Not said to be the inspected files, or not named as they were: opened anew (and the kept
    // ones dropped).
    prvsight::wasm::inspect(list.clone(), Some(true)).unwrap();
    assert!(not_sqlite(convert_after(
        &same_size,
        options("{}"),
        None,
        None
    )));
    assert!(not_sqlite(convert_after(
        &same_size,
        options("{}"),
        None,
        Some(true)
    )));
    prvsight::wasm::inspect(list.clone(), Some(true)).unwrap();
    let renamed = inputs(&[("other.sqlite", &zeros)]);
    assert!(not_sqlite(convert_after(
        &renamed,
        options("{}"),
        None,
        Some(true)
    )));
    // An inspection without `keep` keeps nothing, and drops what an earlier one kept.
    prvsight::wasm::inspect(list.clone(), Some(true)).unwrap();
    prvsight::wasm::inspect(list.clone(), None).unwrap();
    assert!(not_sqlite(convert_after(
        &same_size,
        options("{}"),
        None,
        Some(true)
    )));
}

/// Complete events per `cat` in a Chrome/Perfetto JSON trace.
fn json_categories(json: &[u8]) -> std::collections::BTreeMap<String, u64> {
    let v: serde_json::Value = serde_json::from_slice(json).expect("the JSON parses");
    let mut out = std::collections::BTreeMap::new();
    for e in v["traceEvents"].as_array().expect("traceEvents") {
        if e["ph"] == "X" {
            *out.entry(e["cat"].as_str().unwrap().to_owned())
                .or_default() += 1;
        }
    }
    out
}

/// The page offers the Chrome/Perfetto JSON beside the bundle: asked for with `json`, it comes
/// from the same pass, tagged "json", on one worker or on the writer of a split conversion,
/// with the bytes of `prvsight convert -o NAME.json`; the archive does not change.
#[wasm_bindgen_test]
fn the_perfetto_json_comes_from_the_same_pass_with_the_clis_bytes() {
    let list = inputs(&[("testcuda_report1.sqlite", SAMPLE)]);
    let plain = convert_with(&list, options("{}"), None).unwrap();
    assert!(plain.json.is_empty(), "no JSON unless asked for");
    assert!(get(&plain.result, "json").is_null());
    let c = convert_with(&list, options(r#"{"json": true}"#), None).unwrap();
    assert_eq!(
        c.zip, plain.zip,
        "the archive is the same with the JSON beside it"
    );
    assert_eq!(string(&c.result, "json.name"), "testcuda_report1.json");
    let cats = json_categories(&c.json);
    assert_eq!(cats.get("kernel"), Some(&4));
    assert_eq!(cats.get("memcpy"), Some(&12));
    assert_eq!(cats.get("cuda-api"), Some(&44));
    for (cat, n) in &cats {
        assert_eq!(
            number(&c.result, &format!("json.stats.complete.{cat}")),
            *n as f64
        );
    }
    match file(&format!("{REPO}/target/web-ref/testcuda_report1.json")) {
        Some(native) => assert!(c.json == native, "wasm JSON differs from the native CLI's"),
        None => log("SKIP: no native JSON in target/web-ref (scripts/test-web.sh writes it)"),
    }

    // The writer of a split conversion writes it too, the same bytes.
    let on_progress = Closure::<dyn FnMut(JsValue) -> bool>::new(|_: JsValue| true);
    let mut reader = prvsight::wasm::ReaderSession::new(
        list,
        options(r#"{"json": true}"#),
        on_progress.as_ref().unchecked_ref::<Function>(),
        None,
    )
    .unwrap();
    let json = Rc::new(RefCell::new(Vec::new()));
    let plain_prv = Rc::new(RefCell::new(Vec::new()));
    let (j, p) = (json.clone(), plain_prv.clone());
    let on_chunk =
        Closure::<dyn FnMut(String, Uint8Array)>::new(move |tag: String, bytes: Uint8Array| {
            match tag.as_str() {
                "json" => j.borrow_mut().extend(bytes.to_vec()),
                "prv" => p.borrow_mut().extend(bytes.to_vec()),
                _ => {}
            }
        });
    let mut writer = prvsight::wasm::WriterSession::new(
        vec!["testcuda_report1.sqlite".into()],
        options(r#"{"json": true}"#),
        &reader.header(),
        on_chunk.as_ref().unchecked_ref::<Function>(),
    )
    .unwrap();
    while let Some(batch) = reader.next_batch(100).unwrap() {
        writer.feed(&batch.to_vec()).unwrap();
    }
    let pending = writer.finish(&reader.finish().unwrap()).unwrap();
    let (_, end) = segments_joined(&plain_prv.borrow(), 100_000, 1);
    let result = pending
        .finish(number(&end, "crc") as u32, number(&end, "size"))
        .unwrap();
    assert!(*json.borrow() == c.json, "the split conversion's JSON");
    assert_eq!(string(&result, "json.name"), "testcuda_report1.json");
}
