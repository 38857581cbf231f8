//! The Blob VFS where it really runs: a dedicated worker in headless Chromium (FileReaderSync
//! exists only there). Run by scripts/test-web.sh with chromedriver. A `File`/`Blob` read through
//! the VFS and its block cache must give exactly what SQLite gives on the same bytes in memory.
#![cfg(all(target_family = "wasm", target_os = "unknown"))]

use js_sys::{Array, Function, Object, Reflect, Uint8Array};
use prvsight::nsys::Export;
use prvsight::paraver::ParaverWriter;
use prvsight::pipeline;
use prvsight::vfs::{self, CacheConfig};
use prvsight::wasm::source::BlobSource;
use prvsight::Options;
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;
use web_sys::Blob;

wasm_bindgen_test_configure!(run_in_dedicated_worker);

#[path = "support/grow.rs"]
mod grow;

const SAMPLE: &[u8] = include_bytes!("../www/samples/testcuda_report1.sqlite");

fn blob(bytes: &[u8]) -> Blob {
    let parts = Array::of1(&Uint8Array::from(bytes));
    Blob::new_with_u8_array_sequence(&parts).unwrap()
}

fn outputs(exports: &[Export]) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    let (mut prv, mut pcf, mut row) = (Vec::new(), Vec::new(), Vec::new());
    {
        let mut w = ParaverWriter::new(Box::new(&mut prv), Box::new(&mut pcf), Box::new(&mut row));
        pipeline::run(exports, &Options::default(), &mut [&mut w], &mut |_| true).unwrap();
    }
    (prv, pcf, row)
}

#[wasm_bindgen_test]
fn a_blob_converts_like_the_same_bytes_in_memory() {
    let in_memory = Export::from_bytes(SAMPLE, "testcuda_report1.sqlite").unwrap();
    let expect = outputs(&[in_memory]);
    for config in [
        CacheConfig::default(),
        CacheConfig {
            block_bytes: 8192,
            blocks: 2,
        },
    ] {
        let src = BlobSource::new(blob(SAMPLE), "testcuda_report1.sqlite").unwrap();
        let via_blob =
            Export::open_source("testcuda_report1.sqlite", Box::new(src), config).unwrap();
        assert!(
            outputs(&[via_blob]) == expect,
            "Blob VFS output differs ({config:?})"
        );
        let st = vfs::closed_stats("testcuda_report1.sqlite").unwrap();
        if config.block_bytes == 1 << 20 {
            // The 577,536-byte file is one block: read once, whatever SQLite asks.
            assert_eq!((st.source_reads, st.source_bytes), (1, 577_536));
        } else {
            // Two 8 KiB blocks: most pages need their own load, and none needs more than one.
            assert!(
                st.source_reads > 10 && st.source_reads <= st.reads,
                "{st:?}"
            );
        }
        assert!(st.reads > 20, "SQLite read page by page: {st:?}");
    }
}

#[wasm_bindgen_test]
fn the_page_api_reads_files_through_the_blob_vfs() {
    let input = Object::new();
    Reflect::set(&input, &"name".into(), &"testcuda_report1.sqlite".into()).unwrap();
    Reflect::set(&input, &"data".into(), &blob(SAMPLE)).unwrap();
    let list = Array::of1(&input);
    let report = prvsight::wasm::inspect(list.clone(), None).unwrap();
    let version = Reflect::get(
        &Reflect::get_u32(&Reflect::get(&report, &"files".into()).unwrap(), 0).unwrap(),
        &"nsys_version".into(),
    )
    .unwrap();
    assert_eq!(version.as_string().as_deref(), Some("2026.1.1.204"));

    let chunks = Array::new();
    let sink = chunks.clone();
    let on_chunk =
        Closure::<dyn FnMut(String, Uint8Array)>::new(move |tag: String, b: Uint8Array| {
            sink.push(&Array::of2(&tag.into(), &b));
        });
    let on_progress = Closure::<dyn FnMut(JsValue) -> bool>::new(|_| true);
    let result = prvsight::wasm::convert(
        list,
        JsValue::UNDEFINED,
        on_chunk.as_ref().unchecked_ref::<Function>(),
        on_progress.as_ref().unchecked_ref::<Function>(),
        None,
    )
    .unwrap();
    let mut trace = Vec::new();
    for c in chunks.iter() {
        let c = Array::from(&c);
        if c.get(0).as_string().as_deref() == Some("trace") {
            trace.extend(Uint8Array::from(c.get(1)).to_vec());
        }
    }
    let mut prv = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&trace[..]), &mut prv).unwrap();
    let expect = outputs(&[Export::from_bytes(SAMPLE, "testcuda_report1.sqlite").unwrap()]);
    assert!(
        prv == expect.0,
        "the page's trace differs from the in-memory conversion"
    );
    let pcf = Uint8Array::from(Reflect::get(&result, &"pcf".into()).unwrap()).to_vec();
    assert!(pcf == expect.1);
}

#[wasm_bindgen_test]
fn the_page_api_loads_each_block_of_a_small_file_once() {
    // A few MiB: the page's caches hold it whole (CacheConfig::for_files), so the conversion's
    // repeated scans load each block once, however often SQLite asks for its pages — in blocks
    // of 32 MiB, as few reads of the browser's file as there can be.
    let bytes = grow::with_more_kernels(SAMPLE, 5_000, 100_000);
    assert!(bytes.len() > 2 << 20, "{} bytes", bytes.len());
    let config = CacheConfig::for_files(&[bytes.len() as u64])[0];
    assert_eq!(config.block_bytes, 32 << 20);
    let blocks = bytes.len().div_ceil(config.block_bytes) as u64;
    let input = Object::new();
    Reflect::set(&input, &"name".into(), &"whole.sqlite".into()).unwrap();
    Reflect::set(&input, &"data".into(), &blob(&bytes)).unwrap();
    let on_chunk = Closure::<dyn FnMut(String, Uint8Array)>::new(|_: String, _: Uint8Array| {});
    let on_progress = Closure::<dyn FnMut(JsValue) -> bool>::new(|_| true);
    prvsight::wasm::convert(
        Array::of1(&input),
        JsValue::UNDEFINED,
        on_chunk.as_ref().unchecked_ref::<Function>(),
        on_progress.as_ref().unchecked_ref::<Function>(),
        None,
    )
    .unwrap();
    let st = vfs::closed_stats("whole.sqlite").unwrap();
    assert_eq!(st.source_reads, blocks, "{st:?}");
    assert_eq!(st.source_bytes, bytes.len() as u64);
    assert!(st.reads > 100 * blocks, "SQLite read page by page: {st:?}");
}

#[wasm_bindgen_test]
fn a_multi_block_export_with_a_small_cache_answers_like_memory() {
    // The sample with 20,000 more kernel rows: a few MiB, many 64 KiB blocks.
    let bytes = grow::with_more_kernels(SAMPLE, 5_000, 100_000);
    assert!(bytes.len() > 1 << 20, "{} bytes", bytes.len());
    let expect = outputs(&[Export::from_bytes(&bytes, "blocks.sqlite").unwrap()]);
    let config = CacheConfig {
        block_bytes: 64 << 10,
        blocks: 4,
    };
    let src = BlobSource::new(blob(&bytes), "blocks.sqlite").unwrap();
    let via = Export::open_source("blocks.sqlite", Box::new(src), config).unwrap();
    assert!(outputs(&[via]) == expect);
    let st = vfs::closed_stats("blocks.sqlite").unwrap();
    assert!(
        st.source_reads as usize >= bytes.len() / (64 << 10),
        "every block read at least once: {st:?}"
    );
}

#[wasm_bindgen_test]
fn a_truncated_blob_fails_with_the_file_named() {
    let cut = &SAMPLE[..SAMPLE.len() / 3];
    let src = BlobSource::new(blob(cut), "cut.sqlite").unwrap();
    let r =
        Export::open_source("cut.sqlite", Box::new(src), CacheConfig::default()).and_then(|e| {
            let mut sink = Vec::new();
            let mut w = ParaverWriter::new(
                Box::new(&mut sink),
                Box::new(std::io::sink()),
                Box::new(std::io::sink()),
            );
            pipeline::run(&[e], &Options::default(), &mut [&mut w], &mut |_| true).map(|_| ())
        });
    let msg = r.expect_err("a third of a file cannot convert").to_string();
    assert!(msg.starts_with("cut.sqlite: "), "{msg}");
}
