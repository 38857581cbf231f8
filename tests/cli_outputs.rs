//! The CLI's output files appear only when the command succeeds (src/atomic_output.rs): a failed
//! conversion leaves the earlier outputs as they were and nothing partial; a successful one
//! replaces them whole; links are written through. The trace itself goes through the
//! drop-behind file (src/page_cache.rs): its bytes are the library's.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{convert, data, mutated};
use prvsight::Options;

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("cli-outputs-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn prvsight(args: &[&Path]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_prvsight"))
        .args(args)
        .arg("-q")
        .output()
        .unwrap()
}

/// The folder's entries, sorted.
fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn read(path: PathBuf) -> String {
    std::fs::read_to_string(path).unwrap()
}

/// The sample with a kernel's grid size as text, late in its table: the conversion fails while
/// records already flow, after its outputs were created and partly written.
fn failing_input(dir: &Path) -> PathBuf {
    let bytes = std::fs::read(data("testcuda_report1.sqlite")).unwrap();
    let path = dir.join("bad.sqlite");
    std::fs::write(
        &path,
        mutated(
            &bytes,
            "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET gridX = 'wide'
             WHERE rowid = (SELECT max(rowid) FROM CUPTI_ACTIVITY_KIND_KERNEL);",
        ),
    )
    .unwrap();
    path
}

#[test]
fn a_failed_conversion_leaves_the_earlier_outputs_and_nothing_partial() {
    let dir = scratch("failed");
    let bad = failing_input(&dir);
    for (name, others) in [
        ("t.prv", ["t.pcf", "t.row"]),
        ("g.prv.gz", ["g.pcf", "g.row"]),
    ] {
        let out = dir.join(name);
        for file in std::iter::once(name).chain(others) {
            std::fs::write(dir.join(file), format!("earlier {file}")).unwrap();
        }
        let r = prvsight(&["convert".as_ref(), &bad, "-o".as_ref(), &out]);
        assert_eq!(r.status.code(), Some(1), "{name}");
        let said = String::from_utf8_lossy(&r.stderr);
        assert!(said.contains("expected an integer"), "{name}: {said}");
        for file in std::iter::once(name).chain(others) {
            assert_eq!(read(dir.join(file)), format!("earlier {file}"), "{file}");
        }
    }
    let zip = dir.join("b.zip");
    let r = prvsight(&["bundle".as_ref(), &bad, "-o".as_ref(), &zip]);
    assert_eq!(r.status.code(), Some(1));
    assert_eq!(
        entries(&dir),
        [
            "bad.sqlite",
            "g.pcf",
            "g.prv.gz",
            "g.row",
            "t.pcf",
            "t.prv",
            "t.row"
        ]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_conversion_replaces_the_earlier_outputs_whole() {
    let dir = scratch("replaced");
    let input = data("testcuda_report1.sqlite");
    let expected = convert(std::slice::from_ref(&input), &Options::default()).unwrap();
    let out = dir.join("t.prv");
    // Earlier outputs longer than the new ones: nothing of them may remain.
    for file in ["t.prv", "t.pcf", "t.row"] {
        std::fs::write(dir.join(file), "x".repeat(expected.prv.len() + 4096)).unwrap();
    }
    for _ in 0..2 {
        let r = prvsight(&["convert".as_ref(), &input, "-o".as_ref(), &out]);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        assert!(read(dir.join("t.prv")) == expected.prv, ".prv differs");
        assert_eq!(read(dir.join("t.pcf")), expected.pcf);
        assert_eq!(read(dir.join("t.row")), expected.row);
        assert_eq!(entries(&dir), ["t.pcf", "t.prv", "t.row"]);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[cfg(unix)]
#[test]
fn an_output_that_is_a_symbolic_link_is_written_through() {
    let dir = scratch("linked");
    let input = data("testcuda_report1.sqlite");
    let expected = convert(std::slice::from_ref(&input), &Options::default()).unwrap();
    std::fs::write(dir.join("kept.prv"), "earlier").unwrap();
    std::os::unix::fs::symlink("kept.prv", dir.join("t.prv")).unwrap();
    let r = prvsight(&[
        "convert".as_ref(),
        &input,
        "-o".as_ref(),
        &dir.join("t.prv"),
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert!(std::fs::symlink_metadata(dir.join("t.prv"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(read(dir.join("kept.prv")) == expected.prv, ".prv differs");
    assert_eq!(entries(&dir), ["kept.prv", "t.pcf", "t.prv", "t.row"]);
    std::fs::remove_dir_all(&dir).unwrap();
}
