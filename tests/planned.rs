//! A plan made before the conversion was asked for (`pipeline::Planned`: the page plans when the
//! files are picked, for their inspection, and keeps the plan for the conversion that follows).
//! A conversion given one writes exactly what a conversion that plans for itself writes: the
//! plan is used where the options plan alike, and made again where they do not.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use common::{assert_same_output, convert, data, shared_inputs, Converted};
use prvsight::nsys::Export;
use prvsight::options::{Align, Chop, Family, ReadAhead, ReadOrder, ReadPages};
use prvsight::paraver::ParaverWriter;
use prvsight::pipeline::{self, Planned, SplitReader};
use prvsight::Options;

fn open(paths: &[PathBuf]) -> Vec<Export> {
    paths
        .iter()
        .map(|p| Export::open_path(p).unwrap())
        .collect()
}

/// `common::convert`, starting from `planned` (made on the same exports).
fn convert_planned(exports: &[Export], opts: &Options, planned: Planned) -> Converted {
    let (mut prv, mut pcf, mut row) = (Vec::new(), Vec::new(), Vec::new());
    let summary = {
        let mut w = ParaverWriter::new(Box::new(&mut prv), Box::new(&mut pcf), Box::new(&mut row));
        pipeline::run_planned(exports, opts, Some(planned), &mut [&mut w], &mut |_| true).unwrap()
    };
    Converted {
        summary,
        prv: String::from_utf8(prv).unwrap(),
        pcf: String::from_utf8(pcf).unwrap(),
        row: String::from_utf8(row).unwrap(),
    }
}

/// The options a page conversion may take after an inspection with the defaults: the defaults,
/// a cut (planned alike), and fewer families (planned again). `end`: the trace's end, ns.
fn variants(end: u64) -> Vec<(&'static str, Options)> {
    vec![
        ("default", Options::default()),
        (
            "window",
            Options {
                chop: Some(Chop::Window {
                    start: end / 4,
                    end: end / 2,
                }),
                min_duration: BTreeMap::from([(Family::Kernel, 2_000)]),
                ..Options::default()
            },
        ),
        (
            "families",
            Options {
                families: Some(BTreeSet::from([
                    Family::Kernel,
                    Family::CudaApi,
                    Family::Nvtx,
                ])),
                ..Options::default()
            },
        ),
    ]
}

#[test]
fn options_plan_alike_unless_discovery_or_the_readers_would_differ() {
    let base = Options::default();
    let cut = Options {
        chop: Some(Chop::Window { start: 1, end: 2 }),
        min_duration: BTreeMap::from([(Family::Memcpy, 5)]),
        ..Options::default()
    };
    assert!(base.plans_alike(&base));
    assert!(base.plans_alike(&cut) && cut.plans_alike(&base));
    let others = [
        Options {
            families: Some(BTreeSet::from([Family::Kernel])),
            ..Options::default()
        },
        Options {
            align: Align::None,
            ..Options::default()
        },
        Options {
            read_order: ReadOrder::Sql,
            ..Options::default()
        },
        Options {
            read_ahead: ReadAhead::Off,
            ..Options::default()
        },
        Options {
            read_pages: ReadPages::Sqlite,
            ..Options::default()
        },
    ];
    for o in &others {
        assert!(!base.plans_alike(o), "{o:?}");
        assert!(!o.plans_alike(&base), "{o:?}");
    }
}

#[test]
fn a_conversion_from_a_plan_made_before_writes_the_same_files() {
    let mut inputs = vec![vec![data("testcuda_report1.sqlite")]];
    inputs.extend(shared_inputs().unwrap_or_default());
    for paths in &inputs {
        let what = paths[0].display().to_string();
        let Ok(fresh) = convert(paths, &Options::default()) else {
            // An export with nothing to convert: the plan fails the same way (bad_input.rs).
            continue;
        };
        let exports = open(paths);
        for (name, opts) in variants(fresh.summary.trace.end_time) {
            let Ok(expect) = convert(paths, &opts) else {
                continue;
            };
            // Planned with the defaults and the NVTX names counted, as the page's inspection
            // plans.
            let planned = Planned::new(&exports, &Options::default(), true).unwrap();
            let got = convert_planned(&exports, &opts, planned);
            assert_same_output(&got, &expect, &format!("{what}, {name}"));
            assert_eq!(
                got.summary.records, expect.summary.records,
                "{what}, {name}"
            );
            assert_eq!(
                got.summary.warnings, expect.summary.warnings,
                "{what}, {name}"
            );
        }
    }
}

/// The page's reader starts from the plan too (`SplitReader::open_planned`): the same header,
/// batches and summary.
#[test]
fn a_split_reader_from_a_plan_made_before_hands_out_the_same_batches() {
    let paths = [data("testcuda_report1.sqlite")];
    let exports = open(&paths);
    let read = |planned: Option<Planned>| {
        let (mut reader, header) =
            SplitReader::open_planned(&exports, &Options::default(), planned, &mut |_| true)
                .unwrap();
        let mut out = vec![serde_json::to_vec(&header).unwrap()];
        while let Some(batch) = reader.next_batch(500).unwrap() {
            out.push(batch);
        }
        out.push(serde_json::to_vec(&reader.finish()).unwrap());
        out
    };
    let fresh = read(None);
    assert!(fresh.len() > 3, "{} batches", fresh.len() - 2);
    let planned = Planned::new(&exports, &Options::default(), false).unwrap();
    assert_eq!(read(Some(planned)), fresh);
}
