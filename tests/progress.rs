//! The progress estimate (the tables' rows and the links they make) against the records a
//! conversion writes: close enough that the page's bar neither stalls at 100 % for long nor
//! ends far below it.

mod common;

use common::{convert, shared_inputs};
use prvsight::nsys::Export;
use prvsight::Options;

#[test]
fn the_estimate_is_within_a_fifth_of_the_records_written() {
    let Some(inputs) = shared_inputs() else {
        return;
    };
    let mut checked = 0;
    for set in &inputs {
        let exports: Vec<Export> = set.iter().map(|p| Export::open_path(p).unwrap()).collect();
        let Ok(plan) = prvsight::pipeline::plan(&exports, &Options::default()) else {
            continue;
        };
        let estimate: u64 = plan.discoveries.iter().map(|d| d.record_estimate).sum();
        let records = convert(set, &Options::default()).unwrap().summary.records;
        let ratio = records as f64 / estimate as f64;
        eprintln!(
            "{:?}: {records} records, estimate {estimate}, ratio {ratio:.3}",
            set[0].file_name().unwrap()
        );
        assert!(
            (0.8..=1.2).contains(&ratio),
            "{set:?}: {records} records against an estimate of {estimate}"
        );
        checked += 1;
    }
    assert!(checked >= 10);
}
