//! Embeds every file of `cfgs/` (our Paraver views) into the library, so the CLI and the wasm
//! build can put them into the download bundle without reading the disk at run time. Generates
//! `$OUT_DIR/cfgs.rs`: `pub static CFGS: &[(&str, &str)]` = (path relative to cfgs/, content).

use std::path::{Path, PathBuf};

fn collect(dir: &Path, rel: &str, out: &mut Vec<(String, PathBuf)>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = rd.filter_map(|e| e.ok()).collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let path = e.path();
        let r = if rel.is_empty() {
            name.clone()
        } else {
            format!("{rel}/{name}")
        };
        if path.is_dir() {
            collect(&path, &r, out);
        } else {
            out.push((r, path));
        }
    }
}

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let cfgs = root.join("cfgs");
    println!("cargo:rerun-if-changed=cfgs");
    let mut files = Vec::new();
    collect(&cfgs, "", &mut files);
    let mut src = String::from("pub static CFGS: &[(&str, &str)] = &[\n");
    for (rel, path) in &files {
        println!("cargo:rerun-if-changed={}", path.display());
        src.push_str(&format!(
            "    ({rel:?}, include_str!({:?})),\n",
            path.display().to_string()
        ));
    }
    src.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets it")).join("cfgs.rs");
    std::fs::write(out, src).expect("OUT_DIR is writable");
}
