//! The native CLI's bytes on every shared export, cancel, bad files, the direct reader, gzip
//! segments, split conversions.

use super::*;

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
