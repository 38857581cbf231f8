//! The CLI's memory map of small inputs (src/bin/prvsight/mapped.rs), which the library leaves
//! to the program: one mapping per file, within its limit, and a page that vanishes under it.
#![cfg(target_os = "linux")]

#[path = "../src/bin/prvsight/mapped.rs"]
#[allow(dead_code)] // `enable`: the CLI's, not needed here
mod mapped;

use std::sync::Arc;

use mapped::{FileMap, MAPPED_MAX};
use prvsight::sqlfile::MappedFile;

fn scratch(name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("prvsight-mapped-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn a_file_is_mapped_once_for_all_its_readers() {
    let path = scratch("shared", &[7u8; 10_000]);
    let a = FileMap::of(&path).expect("a small file is mapped");
    let b = FileMap::of(&path).unwrap();
    assert!(Arc::ptr_eq(&a, &b));
    assert_eq!(a.bytes(), &[7u8; 10_000][..]);
    assert!(!a.shrank());
    drop((a, b));
    // Unmapped with its last reader: the next is a mapping of its own.
    let c = FileMap::of(&path).unwrap();
    assert_eq!(c.bytes().len(), 10_000);
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn large_empty_and_missing_files_are_not_mapped() {
    let path = scratch("large", &[]);
    assert!(FileMap::of(&path).is_none(), "empty");
    // Sparse: no disk space taken.
    let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    f.set_len(MAPPED_MAX + 1).unwrap();
    assert!(FileMap::of(&path).is_none(), "over the limit");
    std::fs::remove_file(&path).unwrap();
    assert!(FileMap::of(&path).is_none(), "missing");
}

#[test]
fn the_bytes_mapped_at_once_stay_within_the_limit() {
    // Three files of 40 % of the limit each (sparse), mapped while the others live: the
    // third would take the total over it.
    let part = MAPPED_MAX * 2 / 5;
    let paths: Vec<_> = (0..3)
        .map(|i| {
            let p = scratch(&format!("part{i}"), &[]);
            std::fs::OpenOptions::new()
                .write(true)
                .open(&p)
                .unwrap()
                .set_len(part)
                .unwrap();
            p
        })
        .collect();
    let a = FileMap::of(&paths[0]).expect("first");
    let b = FileMap::of(&paths[1]).expect("second");
    assert!(
        FileMap::of(&paths[2]).is_none(),
        "over the limit with the first two"
    );
    // A file already mapped is shared, whatever the total.
    assert!(Arc::ptr_eq(&a, &FileMap::of(&paths[0]).unwrap()));
    drop(b);
    assert!(FileMap::of(&paths[2]).is_some(), "room again");
    drop(a);
    for p in paths {
        std::fs::remove_file(p).unwrap();
    }
    assert!(FileMap::of(&std::env::temp_dir()).is_none(), "a directory");
}

#[test]
fn a_page_that_vanishes_reads_as_zeros_and_marks_the_mapping() {
    // SAFETY: a plain query.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
    let path = scratch("shrinks", &vec![0xAB; 4 * page]);
    let map = FileMap::of(&path).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(page as u64)
        .unwrap();
    // The first page is still the file's; the read past the new end would have ended the
    // process with SIGBUS.
    assert_eq!(map.bytes()[page - 1], 0xAB);
    assert!(!map.shrank());
    assert_eq!(map.bytes()[2 * page + 5], 0);
    assert!(map.shrank());
    assert!(map.bytes()[page..].iter().all(|&b| b == 0));
    std::fs::remove_file(&path).unwrap();
}
