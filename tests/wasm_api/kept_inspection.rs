//! A conversion that starts from a kept inspection, and the Perfetto JSON of the same pass.

use super::*;

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
