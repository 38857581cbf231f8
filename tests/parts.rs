//! A conversion split into parts and merged (`convert --part K/N`, `merge`, src/parts) gives
//! exactly the one conversion's .prv, .pcf, .row, summary and metrics, for 1, 2, 3 and 7 parts,
//! on the real multi-rank captures (where ../shared is present) and synthetic runs; a merge
//! refuses parts that are not every part of one conversion of this prvsight. So does one
//! conversion that reads its inputs a group at a time (pipeline/parts/groups.rs).

mod common;

use std::io::Cursor;
use std::path::PathBuf;

use common::{convert, shared_traces, Converted};
use prvsight::metrics::{MetricsOptions, MetricsSink};
use prvsight::nsys::Export;
use prvsight::options::ReadGroups;
use prvsight::paraver::ParaverWriter;
use prvsight::parts::{merge, write_part, PartInput, PartOf};
use prvsight::synth::mpi_run::MpiRun;
use prvsight::{Error, Options};

const SPLITS: [usize; 4] = [1, 2, 3, 7];

fn open(paths: &[PathBuf]) -> Vec<Export> {
    paths
        .iter()
        .map(|p| Export::open_path(p).unwrap())
        .collect()
}

/// The N parts of the conversion of `paths`, as bytes.
fn parts(paths: &[PathBuf], opts: &Options, n: usize) -> Vec<Vec<u8>> {
    let exports = open(paths);
    (1..=n)
        .map(|part| {
            let mut bytes = Vec::new();
            write_part(&exports, opts, PartOf { part, parts: n }, &mut bytes).unwrap();
            bytes
        })
        .collect()
}

fn inputs(parts: &[Vec<u8>]) -> Vec<PartInput> {
    parts
        .iter()
        .enumerate()
        .map(|(k, b)| PartInput {
            name: format!("part{}", k + 1),
            bytes: Box::new(Cursor::new(b.clone())),
        })
        .collect()
}

/// The trace and metrics JSON the merge of `parts` writes.
fn merged(parts: Vec<PartInput>) -> prvsight::Result<(Converted, String)> {
    let (mut prv, mut pcf, mut row) = (Vec::new(), Vec::new(), Vec::new());
    let mut metrics = MetricsSink::new(MetricsOptions::default())?;
    let summary = {
        let mut w = ParaverWriter::new(Box::new(&mut prv), Box::new(&mut pcf), Box::new(&mut row));
        merge(parts, &mut [&mut w, &mut metrics], &mut |_| true)?
    };
    let mut report = metrics.into_report()?;
    report.warnings.clone_from(&summary.warnings);
    let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
    let c = Converted {
        summary,
        prv: text(prv),
        pcf: text(pcf),
        row: text(row),
    };
    Ok((c, report.to_json()?))
}

/// The metrics JSON of `paths` with `opts`, with the warnings of `whole`.
fn metrics_json(paths: &[PathBuf], opts: &Options, whole: &Converted) -> String {
    let exports = open(paths);
    let mut report =
        prvsight::metrics::compute(&exports, opts, &MetricsOptions::default()).unwrap();
    report.warnings = whole.summary.warnings.clone();
    report.to_json().unwrap()
}

/// Two conversions wrote the same trace and summary.
fn assert_same(m: &Converted, whole: &Converted, what: &str) {
    assert!(m.prv == whole.prv, "{what}: .prv differs");
    assert_eq!(m.pcf, whole.pcf, "{what}: .pcf");
    assert_eq!(m.row, whole.row, "{what}: .row");
    let (a, b) = (&m.summary, &whole.summary);
    assert_eq!((a.records, &a.counts), (b.records, &b.counts), "{what}");
    assert_eq!(a.warnings, b.warnings, "{what}: warnings");
    assert_eq!(a.sorted_by_sql, b.sorted_by_sql, "{what}");
}

/// Read in groups of 1, 2, 3 and 7 inputs (of those that make two groups or more), `paths`
/// convert to the bytes, summary and metrics of reading every input at once.
fn assert_grouped_identical(paths: &[PathBuf], opts: &Options, what: &str) {
    let at_once = Options {
        read_groups: ReadGroups::Off,
        ..opts.clone()
    };
    let whole = convert(paths, &at_once).unwrap();
    let metrics = metrics_json(paths, &at_once, &whole);
    for size in SPLITS.into_iter().filter(|&n| n < paths.len()) {
        let grouped = Options {
            read_groups: ReadGroups::Of(size),
            ..opts.clone()
        };
        let what = format!("{what}, groups of {size}");
        assert_same(&convert(paths, &grouped).unwrap(), &whole, &what);
        assert!(
            metrics_json(paths, &grouped, &whole) == metrics,
            "{what}: metrics differ"
        );
    }
}

/// Split into 1, 2, 3 and 7 parts (merged in reverse order), `paths` convert to the one
/// conversion's bytes, summary and metrics.
fn assert_split_merge_identical(paths: &[PathBuf], opts: &Options, what: &str) {
    let whole = convert(paths, opts).unwrap();
    let metrics = metrics_json(paths, opts, &whole);
    for n in SPLITS {
        let mut given = inputs(&parts(paths, opts, n));
        given.reverse();
        let (m, m_metrics) = merged(given).unwrap();
        let what = format!("{what}, {n} parts");
        assert_same(&m, &whole, &what);
        assert!(m_metrics == metrics, "{what}: metrics differ");
    }
}

fn shared_ranks(dir: &str) -> Option<Vec<PathBuf>> {
    let base = shared_traces()?.join("generated").join(dir);
    Some(
        (0..4)
            .map(|r| base.join(format!("rank{r}.sqlite")))
            .collect(),
    )
}

#[test]
fn real_mpi_captures_split_and_merge_to_the_same_bytes() {
    for dir in ["mpi4", "mpi4_nsys2022.4"] {
        let Some(paths) = shared_ranks(dir) else {
            return;
        };
        assert_split_merge_identical(&paths, &Options::default(), dir);
        assert_grouped_identical(&paths, &Options::default(), dir);
    }
}

#[test]
fn real_mpi_capture_with_options_splits_alike() {
    let Some(paths) = shared_ranks("mpi4") else {
        return;
    };
    let opts = Options {
        families: Some(Options::parse_families("mpi,nvtx").unwrap()),
        align: prvsight::options::Align::MpiInit,
        chop: Some(prvsight::options::Chop::parse_window("100ms..900ms").unwrap()),
        ..Options::default()
    };
    let what = "mpi4 -t mpi,nvtx --align mpi-init --window";
    assert_split_merge_identical(&paths, &opts, what);
    assert_grouped_identical(&paths, &opts, what);
}

fn synthetic_run(ranks: u32, name: &str) -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("parts-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    MpiRun::new(ranks).write(&dir).unwrap()
}

#[test]
fn synthetic_runs_split_and_merge_to_the_same_bytes() {
    let paths = synthetic_run(8, "eight");
    assert_split_merge_identical(&paths, &Options::default(), "mpi_run 8 ranks");
    assert_grouped_identical(&paths, &Options::default(), "mpi_run 8 ranks");
    // Past 128 inputs a conversion reads them in groups by itself.
    let many = synthetic_run(129, "many");
    let at_once = Options {
        read_groups: ReadGroups::Off,
        ..Options::default()
    };
    let whole = convert(&many, &at_once).unwrap();
    let grouped = convert(&many, &Options::default()).unwrap();
    assert_same(&grouped, &whole, "mpi_run 129 ranks, groups by default");
    assert_eq!(grouped.summary.counts["mpi-message"], 129 * 10);
    // One input of several GPUs: every part but one is empty.
    let one = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("parts-{}-ddp4.sqlite", std::process::id()));
    prvsight::synth::build("ddp4", 1)
        .unwrap()
        .export
        .write_path(&one)
        .unwrap();
    assert_split_merge_identical(&[one], &Options::default(), "ddp4");
}

/// The message of the merge's refusal of `parts`.
fn refusal(parts: Vec<PartInput>) -> String {
    match merged(parts) {
        Ok(_) => panic!("merged"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn merge_refuses_what_is_not_every_part_of_one_conversion() {
    let paths = synthetic_run(4, "refusals");
    let opts = Options::default();
    let three = parts(&paths, &opts, 3);
    let ins = inputs(&three);

    // A part missing, a part given twice.
    let mut two = inputs(&three);
    two.remove(1);
    assert_eq!(
        refusal(two),
        "part 2/3 of this conversion is missing: merge takes all 3 parts"
    );
    let mut twice = inputs(&three);
    twice[2] = inputs(&three).remove(0);
    twice[2].name = "again".into();
    assert_eq!(refusal(twice), "part 1/3 is given twice (part1 and again)");

    // Parts of another split, of another conversion of the same inputs, of other inputs.
    let mut mixed = inputs(&three);
    mixed[1] = inputs(&parts(&paths, &opts, 2)).remove(1);
    assert!(refusal(mixed).contains("part1 is part 1/3 but part2 is part 2/2"));
    let kernels = Options {
        families: Some(Options::parse_families("kernel").unwrap()),
        ..Options::default()
    };
    let mut other_options = inputs(&three);
    other_options[2] = inputs(&parts(&paths, &kernels, 3)).remove(2);
    let why = refusal(other_options);
    assert!(
        why.contains("part1 and part3 are parts of different conversions"),
        "{why}"
    );
    assert!(why.contains("or with other options"), "{why}");
    let others = synthetic_run(5, "others");
    let mut other_inputs = inputs(&three);
    other_inputs[0] = inputs(&parts(&others, &opts, 3)).remove(0);
    let why = refusal(other_inputs);
    assert!(
        why.contains("converted from other inputs (5 inputs: rank0.sqlite"),
        "{why}"
    );

    // A part of another prvsight version, a part cut short, a frame changed, not a part.
    let edited = |k: usize, edit: &dyn Fn(&mut Vec<u8>)| {
        let mut ps = three.clone();
        edit(&mut ps[k]);
        inputs(&ps)
    };
    let why = refusal(edited(1, &|b| {
        let line = b.iter().position(|&c| c == b'\n').unwrap();
        b.splice(..line, b"prvsight part 1 0.0.1".iter().copied());
    }));
    assert!(
        why.starts_with(
            "part2: a part written by prvsight 0.0.1 (part format 1); this is prvsight"
        ),
        "{why}"
    );
    let why = refusal(edited(2, &|b| b.truncate(b.len() - 100)));
    assert!(
        why.starts_with("part3: not a whole prvsight part (it ends early)"),
        "{why}"
    );
    let why = refusal(edited(0, &|b| {
        // A byte of the first frame's records (after the two lines and the frame's head).
        let lines: Vec<usize> = (b.iter().enumerate())
            .filter(|(_, &c)| c == b'\n')
            .map(|(i, _)| i)
            .take(2)
            .collect();
        b[lines[1] + 20] ^= 1;
    }));
    assert_eq!(
        why,
        "part1: not a whole prvsight part (a frame whose bytes changed); write it again with \
         `prvsight convert … --part K/N`"
    );
    let why = refusal(edited(0, &|b| *b = b"SQLite format 3\0".to_vec()));
    assert_eq!(
        why,
        "part1: not a prvsight part (`prvsight convert … --part K/N -o PART` writes them)"
    );
    assert!(merged(ins).is_ok());
    assert!(matches!(merged(Vec::new()), Err(Error::Usage(_))));
}
