//! The sample through the API: inspect, convert, timeline, options, metrics window, compare, ranks.

use super::*;

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
