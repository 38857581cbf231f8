//! The complete .prv/.pcf/.row of the shipped sample export, reviewed by hand once (see
//! tests/golden/REVIEW.md) and checked byte for byte. Regenerate deliberately with UPDATE_GOLDEN=1.

mod common;

use std::path::PathBuf;

use common::{convert, data};
use prvsight::Options;

#[test]
fn sample_export_matches_the_reviewed_golden_trace() {
    let out = convert(&[data("testcuda_report1.sqlite")], &Options::default()).unwrap();
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden"));
    for (ext, text) in [("prv", &out.prv), ("pcf", &out.pcf), ("row", &out.row)] {
        let path = dir.join(format!("testcuda_report1.{ext}"));
        if std::env::var_os("UPDATE_GOLDEN").is_some() {
            std::fs::write(&path, text).unwrap();
            continue;
        }
        let golden =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        if golden != *text {
            let first_diff = golden.lines().zip(text.lines()).position(|(a, b)| a != b);
            panic!("{ext} differs from {} (first differing line: {first_diff:?}); review and run with UPDATE_GOLDEN=1 if intended", path.display());
        }
    }
}
