//! The user's inputs as VFS sources: a `Blob`/`File` read with `FileReaderSync` (dedicated
//! workers only), or a `Uint8Array` already in the JS heap (Node, tests, small files). Either
//! way the export stays outside wasm memory; SQLite sees it through the block cache.

use std::io;

use js_sys::{Array, Reflect, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Blob, FileReaderSync};

use crate::error::{Error, Result};
use crate::nsys::Export;
use crate::vfs::{CacheConfig, ReadAt};

/// A `Blob` (a `File` is one) read in slices.
pub struct BlobSource {
    blob: Blob,
    reader: FileReaderSync,
    size: u64,
}

impl BlobSource {
    pub fn new(blob: Blob, label: &str) -> Result<BlobSource> {
        let reader = FileReaderSync::new().map_err(|_| Error::Unreadable {
            file: label.into(),
            detail: "files can only be read inside the converter's worker (FileReaderSync is missing here)".into(),
        })?;
        let size = blob.size() as u64;
        Ok(BlobSource { blob, reader, size })
    }
}

fn js_err(what: &str, e: JsValue) -> io::Error {
    let msg = e
        .dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| e.as_string())
        .unwrap_or_else(|| format!("{e:?}"));
    io::Error::other(format!("{what}: {msg}"))
}

impl ReadAt for BlobSource {
    fn size(&self) -> u64 {
        self.size
    }

    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        // Offsets are doubles in JS: exact up to 2^53, far beyond any file.
        let end = offset + buf.len() as u64;
        let part = self
            .blob
            .slice_with_f64_and_f64(offset as f64, end as f64)
            .map_err(|e| js_err("slicing the file", e))?;
        let ab = self
            .reader
            .read_as_array_buffer(&part)
            .map_err(|e| js_err("reading the file (was it changed or moved?)", e))?;
        let arr = Uint8Array::new(&ab);
        if arr.length() as usize != buf.len() {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "the file gave {} bytes instead of {}; it changed while being read",
                    arr.length(),
                    buf.len()
                ),
            ));
        }
        arr.copy_to(buf);
        nudge_collector(buf.len());
        Ok(())
    }
}

/// Leaves the garbage collector a reason to run: each read of the user's file gives a fresh
/// ArrayBuffer that V8 frees only when it collects, and a conversion allocates next to nothing
/// else in JS; a throwaway array of 1/16 of the bytes read (young-generation garbage) brings
/// the collections that free them.
fn nudge_collector(bytes_read: usize) {
    let n = (bytes_read / 128) as u32;
    if n > 0 {
        js_sys::Array::new_with_length(n).fill(&JsValue::from(0), 0, n);
    }
}

/// Bytes held by JS.
pub struct ArraySource(pub Uint8Array);

impl ReadAt for ArraySource {
    fn size(&self) -> u64 {
        self.0.length() as u64
    }

    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let end = offset + buf.len() as u64;
        if end > self.0.length() as u64 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        let (a, b) = (offset as u32, end as u32);
        self.0.subarray(a, b).copy_to(buf);
        Ok(())
    }
}

/// One input as the page gives it: `{ name: string, data: Blob | Uint8Array }`.
pub struct Input {
    pub name: String,
    pub data: JsValue,
}

/// Reads the inputs array, checking its shape (a programming error on the page shows clearly).
pub fn inputs(list: &Array) -> Result<Vec<Input>> {
    if list.length() == 0 {
        return Err(Error::Usage("no input file given".into()));
    }
    list.iter()
        .enumerate()
        .map(|(i, item)| {
            let name = Reflect::get(&item, &"name".into())
                .ok()
                .and_then(|v| v.as_string())
                .ok_or_else(|| Error::Usage(format!("input {i} has no name")))?;
            let data = Reflect::get(&item, &"data".into()).unwrap_or(JsValue::UNDEFINED);
            Ok(Input { name, data })
        })
        .collect()
}

/// Size in bytes of an input's data (0 when it is neither a Blob nor bytes: `open` says why).
pub fn input_size(input: &Input) -> u64 {
    if let Some(blob) = input.data.dyn_ref::<Blob>() {
        blob.size() as u64
    } else if let Some(arr) = input.data.dyn_ref::<Uint8Array>() {
        arr.length() as u64
    } else {
        0
    }
}

/// Opens one input as an export through the read-only VFS.
pub fn open(input: &Input, config: CacheConfig) -> Result<Export> {
    let src: Box<dyn ReadAt> = if let Some(blob) = input.data.dyn_ref::<Blob>() {
        Box::new(BlobSource::new(blob.clone(), &input.name)?)
    } else if let Some(arr) = input.data.dyn_ref::<Uint8Array>() {
        Box::new(ArraySource(arr.clone()))
    } else {
        return Err(Error::Usage(format!(
            "{}: the input must be a File, Blob or Uint8Array",
            input.name
        )));
    };
    Export::open_source(&input.name, src, config)
}

/// Opens the inputs with caches sized together (see [`CacheConfig::for_files`]).
pub fn open_all(inputs: &[Input]) -> Result<Vec<Export>> {
    let sizes: Vec<u64> = inputs.iter().map(input_size).collect();
    inputs
        .iter()
        .zip(CacheConfig::for_files(&sizes))
        .map(|(i, config)| open(i, config))
        .collect()
}
