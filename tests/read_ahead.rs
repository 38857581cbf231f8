//! Read-ahead (pipeline/threaded.rs): natively the inputs are read on a second thread while the
//! sinks write. It must give exactly the one-thread pass's bytes, and stop cleanly — with the
//! error that caused it — when the sinks fail, the user cancels, or the reading fails.

mod common;
/// The CLI's memory map of small inputs (the library maps nothing by itself).
#[cfg(target_os = "linux")]
#[path = "../src/bin/prvsight/mapped.rs"]
mod mapped;

use std::io::{self, Write};
use std::path::PathBuf;

use common::{assert_same_output, convert, data, shared_inputs, Converted};
use prvsight::nsys::Export;
use prvsight::options::{ReadAhead, ReadHelpers};
use prvsight::paraver::ParaverWriter;
use prvsight::pipeline::{self, Progress};
use prvsight::{Error, Options};

fn one_thread() -> Options {
    Options {
        read_ahead: ReadAhead::Off,
        ..Options::default()
    }
}

/// Read-ahead with a helper thread per input whatever the machine (engine/helper_threads.rs).
fn helped() -> Options {
    Options {
        read_helpers: ReadHelpers::On,
        ..Options::default()
    }
}

/// Whether this machine lets the pass use a second thread at all.
fn has_two_cores() -> bool {
    std::thread::available_parallelism().map_or(1, |n| n.get()) >= 2
}

fn assert_same(ahead: &Converted, alone: &Converted, what: &str) {
    assert_same_output(
        ahead,
        alone,
        &format!("{what} (read-ahead against one thread)"),
    );
    assert_eq!(ahead.summary.records, alone.summary.records, "{what}");
    assert_eq!(ahead.summary.warnings, alone.summary.warnings, "{what}");
    assert!(
        !alone.summary.read_ahead,
        "{what}: read-ahead was turned off"
    );
    assert_eq!(ahead.summary.read_ahead, has_two_cores(), "{what}");
}

#[test]
fn the_bundled_sample_gives_the_same_bytes_with_and_without_read_ahead() {
    let paths = [data("testcuda_report1.sqlite")];
    let ahead = convert(&paths, &Options::default()).unwrap();
    let alone = convert(&paths, &one_thread()).unwrap();
    assert_same(&ahead, &alone, "testcuda_report1");
    assert!(ahead.summary.records > 1000, "a real conversion");
}

#[test]
fn every_shared_export_gives_the_same_bytes_with_and_without_read_ahead() {
    let Some(inputs) = shared_inputs() else {
        return;
    };
    assert!(inputs.len() >= 11, "the shared exports are all found");
    for paths in &inputs {
        let what = paths[0].display().to_string();
        let ahead = convert(paths, &Options::default()).unwrap();
        let alone = convert(paths, &one_thread()).unwrap();
        assert_same(&ahead, &alone, &what);
    }
}

/// Read-ahead without reading helpers: the link joins are made on the sinks' thread
/// (src/pipeline/sinks_links.rs), as on a two-core machine, whatever this one has.
fn links_on_the_sinks_thread() -> Options {
    Options {
        read_helpers: ReadHelpers::Off,
        ..Options::default()
    }
}

/// The link joins made on the sinks' thread, their links merged among the reader's records:
/// the one-thread pass's bytes and counts, on the bundled sample and every shared export (the
/// four-rank runs among them: links of several inputs at one time).
#[test]
fn link_joins_on_the_sinks_thread_give_the_one_thread_bytes() {
    let mut sets = vec![vec![data("testcuda_report1.sqlite")]];
    sets.extend(shared_inputs().unwrap_or_default());
    for paths in &sets {
        let what = format!("{} (links on the sinks' thread)", paths[0].display());
        let apart = convert(paths, &links_on_the_sinks_thread()).unwrap();
        let alone = convert(paths, &one_thread()).unwrap();
        assert_same(&apart, &alone, &what);
        // The links counted where they were made.
        assert_eq!(apart.summary.counts, alone.summary.counts, "{what}");
        assert_eq!(apart.summary.read_helpers, 0, "{what}");
    }
    // The sample has links (4 launches, 12 memory operations) for the joins to make.
    let sample = convert(&sets[0], &links_on_the_sinks_thread()).unwrap();
    assert_eq!(sample.summary.counts.get("link-launch"), Some(&4));
    assert_eq!(sample.summary.counts.get("link-memory"), Some(&12));
}

#[test]
fn the_bundled_sample_gives_the_same_bytes_with_a_helper_thread() {
    let paths = [data("testcuda_report1.sqlite")];
    let helped = convert(&paths, &helped()).unwrap();
    let alone = convert(&paths, &one_thread()).unwrap();
    assert_same(&helped, &alone, "testcuda_report1, helper thread");
    // One helper (the kernels and the link join's operations), where the reading has a
    // thread of its own.
    assert_eq!(helped.summary.read_helpers, usize::from(has_two_cores()));
    assert_eq!(alone.summary.read_helpers, 0);
}

#[test]
fn every_shared_export_gives_the_same_bytes_with_helper_threads() {
    let Some(inputs) = shared_inputs() else {
        return;
    };
    let mut helped_inputs = 0;
    for paths in &inputs {
        let what = format!("{} (helper threads)", paths[0].display());
        let helped = convert(paths, &helped()).unwrap();
        let alone = convert(paths, &one_thread()).unwrap();
        assert_same(&helped, &alone, &what);
        // The shared exports are read in runs: the helper reads the GPU operations (and their
        // links' side) and the CPU scheduling, in the exports that have them.
        let off_thread = ["kernel", "memcpy", "memset", "sched"]
            .iter()
            .any(|f| helped.summary.counts.contains_key(*f));
        let expected = usize::from(has_two_cores() && off_thread);
        assert_eq!(helped.summary.read_helpers, expected, "{what}");
        helped_inputs += helped.summary.read_helpers;
    }
    if has_two_cores() {
        assert!(helped_inputs >= 8, "most shared exports had a helper");
    }
}

/// One helper reads the GPU tables of several inputs (one per rank, as a multi-rank
/// conversion has), its streams served in the order asked.
#[test]
fn one_helper_reads_several_inputs() {
    let paths: Vec<PathBuf> = (0..3).map(|i| scratch_copy(&format!("rank{i}"))).collect();
    let helped = convert(&paths, &helped()).unwrap();
    let alone = convert(&paths, &one_thread()).unwrap();
    assert_same(&helped, &alone, "three copies of the sample, one helper");
    assert_eq!(helped.summary.read_helpers, usize::from(has_two_cores()));
    assert_eq!(
        alone.summary.counts["kernel"],
        3 * 4,
        "every input's kernels"
    );
}

/// `Auto` starts a helper only where the machine has a core for it besides the reading
/// thread, the caller's and the sinks' own threads (a trace writer counts one).
#[test]
fn helpers_start_where_the_cores_are() {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let paths = [data("testcuda_report1.sqlite")];
    let trace = convert(&paths, &Options::default()).unwrap();
    assert_eq!(trace.summary.read_helpers, usize::from(cores >= 3));
    let ex = Export::open_path(&paths[0]).unwrap();
    let mut metrics = prvsight::metrics::MetricsSink::new(Default::default()).unwrap();
    let summary = pipeline::run(&[ex], &Options::default(), &mut [&mut metrics], &mut |_| {
        true
    })
    .unwrap();
    assert_eq!(summary.read_helpers, usize::from(cores >= 2));
    let off = Options {
        read_helpers: ReadHelpers::Off,
        ..Options::default()
    };
    assert_eq!(convert(&paths, &off).unwrap().summary.read_helpers, 0);
}

#[test]
fn inputs_held_in_memory_are_read_on_the_calling_thread() {
    // No file to open a second connection to: the one-thread pass, same result.
    let bytes = std::fs::read(data("testcuda_report1.sqlite")).unwrap();
    let ex = Export::from_bytes(&bytes, "sample").unwrap();
    let (mut prv, mut pcf, mut row) = (Vec::new(), Vec::new(), Vec::new());
    let mut w = ParaverWriter::new(Box::new(&mut prv), Box::new(&mut pcf), Box::new(&mut row));
    let summary = pipeline::run(&[ex], &Options::default(), &mut [&mut w], &mut |_| true).unwrap();
    assert!(!summary.read_ahead);
    drop(w);
    let from_file = convert(&[data("testcuda_report1.sqlite")], &one_thread()).unwrap();
    assert!(
        prv == from_file.prv.as_bytes(),
        "same trace as from the file"
    );
}

/// A copy of the bundled sample to edit.
fn scratch_copy(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("read-ahead-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.sqlite"));
    std::fs::copy(data("testcuda_report1.sqlite"), &path).unwrap();
    path
}

/// The sample with its OS runtime calls repeated 24 times after each other (~22 000 records):
/// enough for progress reports while converting (one per 16 384 records).
fn longer_sample() -> PathBuf {
    // Tests run in parallel: each edits a copy of its own.
    static COPIES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = COPIES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = scratch_copy(&format!("longer-{n}"));
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "CREATE TEMP TABLE copy AS SELECT * FROM OSRT_API;
         CREATE TEMP TABLE span AS SELECT max(end) - min(start) + 1 AS ns FROM OSRT_API;",
    )
    .unwrap();
    for _ in 1..24 {
        conn.execute_batch(
            "UPDATE copy SET start = start + (SELECT ns FROM span), end = end + (SELECT ns FROM span);
             INSERT INTO OSRT_API SELECT * FROM copy;",
        )
        .unwrap();
    }
    path
}

/// Converts the sample with `progress` and a .prv writer that fails after `fail_after` bytes.
fn run_with(
    opts: &Options,
    fail_after: usize,
    progress: &mut dyn FnMut(&Progress) -> bool,
) -> prvsight::Result<pipeline::Summary> {
    struct Failing(usize);
    impl Write for Failing {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if buf.len() > self.0 {
                return Err(io::Error::other("disk full"));
            }
            self.0 -= buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let ex = Export::open_path(&longer_sample()).unwrap();
    let (mut pcf, mut row) = (Vec::new(), Vec::new());
    let mut w = ParaverWriter::new(
        Box::new(Failing(fail_after)),
        Box::new(&mut pcf),
        Box::new(&mut row),
    );
    pipeline::run(&[ex], opts, &mut [&mut w], progress)
}

#[test]
fn a_failing_writer_stops_the_reader_with_the_writers_error() {
    for opts in [Options::default(), helped(), one_thread()] {
        let e = run_with(&opts, 100_000, &mut |_| true).unwrap_err();
        assert!(
            matches!(&e, Error::Write { .. }) && e.to_string().contains("disk full"),
            "{:?}: {e}",
            opts.read_ahead
        );
    }
}

#[test]
fn cancelling_while_converting_stops_both_threads() {
    for opts in [Options::default(), helped(), one_thread()] {
        let mut converting = 0;
        let e = run_with(&opts, usize::MAX, &mut |p| {
            converting += usize::from(p.phase == "converting");
            converting < 1
        })
        .unwrap_err();
        assert!(matches!(e, Error::Cancelled), "{:?}: {e}", opts.read_ahead);
        assert_eq!(
            converting, 1,
            "cancelled at the first report while converting"
        );
    }
}

#[test]
fn cancelling_while_preparing_stops_before_any_record() {
    for opts in [Options::default(), helped(), one_thread()] {
        let mut phases = Vec::new();
        let e = run_with(&opts, usize::MAX, &mut |p| {
            phases.push(p.phase);
            false
        })
        .unwrap_err();
        assert!(matches!(e, Error::Cancelled), "{e}");
        assert_eq!(phases, ["sorting"], "{:?}", opts.read_ahead);
    }
}

#[test]
fn a_reading_error_midway_is_the_same_with_and_without_read_ahead() {
    // A kernel whose grid size is text, late in the table: found while records already flow.
    let path = scratch_copy("bad-kernel-grid");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET gridX = 'wide'
         WHERE rowid = (SELECT max(rowid) FROM CUPTI_ACTIVITY_KIND_KERNEL);",
    )
    .unwrap();
    drop(conn);
    let paths = [path];
    let ahead = convert(&paths, &Options::default())
        .err()
        .expect("an error");
    let alone = convert(&paths, &one_thread()).err().expect("an error");
    // The kernels are read on the helper thread: its error is the same.
    let helped = convert(&paths, &helped()).err().expect("an error");
    assert_eq!(ahead.to_string(), alone.to_string());
    assert_eq!(helped.to_string(), alone.to_string());
    assert!(ahead.to_string().contains("expected an integer"), "{ahead}");
}

/// The CLI writes the .prv on a thread of its own beside the sinks (paraver/background.rs) where
/// it may use a second one: the files are the library's bytes either way, as plain text and
/// gzipped.
#[test]
fn the_cli_writes_the_same_files_with_and_without_its_writing_thread() {
    let exe = env!("CARGO_BIN_EXE_prvsight");
    let input = data("testcuda_report1.sqlite");
    let expected = convert(std::slice::from_ref(&input), &Options::default()).unwrap();
    let dir = std::env::temp_dir().join(format!("prvsight-cli-threads-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (name, extra) in [
        ("threads.prv", vec![]),
        ("alone.prv", vec!["--read-ahead", "off"]),
        ("threads_gz.prv.gz", vec![]),
    ] {
        let out = dir.join(name);
        let r = std::process::Command::new(exe)
            .arg("convert")
            .arg(&input)
            .arg("-o")
            .arg(&out)
            .args(&extra)
            .arg("-q")
            .output()
            .unwrap();
        assert!(
            r.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&r.stderr)
        );
        let mut prv = std::fs::read(&out).unwrap();
        if name.ends_with(".gz") {
            let mut plain = Vec::new();
            io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&prv[..]), &mut plain).unwrap();
            prv = plain;
        }
        let stem = name.split('.').next().unwrap();
        let text = |ext: &str| std::fs::read_to_string(dir.join(format!("{stem}.{ext}"))).unwrap();
        assert!(prv == expected.prv.as_bytes(), "{name}: .prv differs");
        assert_eq!(text("pcf"), expected.pcf, "{name}");
        assert_eq!(text("row"), expected.row, "{name}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// An input cut short after discovery (another program truncates it while it is converted):
/// whatever reads the lost bytes, the conversion ends with an error naming the file, never a
/// trace made of them, nor a `SIGBUS` from the memory map a small input is read through
/// (src/bin/prvsight/mapped.rs) — the cut here lies inside the file's last memory page, whose end
/// then reads as zeros without a fault.
#[cfg(target_os = "linux")]
#[test]
fn an_input_cut_short_while_converted_is_an_error() {
    // Small inputs mapped, as the CLI has them.
    mapped::enable();
    for (name, opts) in [
        ("one-thread", one_thread()),
        ("default", Options::default()),
        ("helped", helped()),
    ] {
        let path = scratch_copy(&format!("cut-{name}"));
        let len = std::fs::metadata(&path).unwrap().len();
        let exports = [Export::open_path(&path).unwrap()];
        let planned = pipeline::Planned::new(&exports, &opts, false).unwrap();
        let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        file.set_len(len - 100).unwrap();
        let (mut prv, mut pcf, mut row) = (Vec::new(), Vec::new(), Vec::new());
        let mut w = ParaverWriter::new(Box::new(&mut prv), Box::new(&mut pcf), Box::new(&mut row));
        let e = pipeline::run_planned(&exports, &opts, Some(planned), &mut [&mut w], &mut |_| true)
            .expect_err("the cut is found");
        let e = e.to_string();
        assert!(e.contains(&path.display().to_string()), "{name}: {e}");
        assert!(e.contains("truncated"), "{name}: {e}");
        // Asked directly, the export says how it changed.
        let e = exports[0].check_unchanged().expect_err("the export shrank");
        assert!(
            e.to_string().contains(&format!(
                "the file shrank while it was read: {len} bytes, now {}",
                len - 100
            )),
            "{name}: {e}"
        );
    }
}

/// Rows that change between the plan and the reading are found on the helper thread (it reads
/// the kernels and the link join's operations): the error is the one-thread pass's.
#[test]
fn rows_changed_under_a_helper_give_the_one_thread_error() {
    // The changed file, made apart: while the export is open no SQLite writer may change it
    // (`sqlite_writers_wait_while_an_export_is_open`), so the change comes as another program
    // would make it, by rewriting the file's bytes in place.
    let edited = scratch_copy("changed-apart");
    let conn = rusqlite::Connection::open(&edited).unwrap();
    // Every other kernel goes after discovery surveyed the table's runs.
    let gone = conn
        .execute(
            "DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid % 2 = 0",
            [],
        )
        .unwrap();
    assert!(gone > 0, "kernels removed");
    drop(conn);
    let edited = std::fs::read(&edited).unwrap();
    let mut errors = Vec::new();
    for (name, opts) in [
        ("one-thread", one_thread()),
        ("helped", helped()),
        ("links on the sinks' thread", links_on_the_sinks_thread()),
    ] {
        // One name for all: the message names the file.
        let path = scratch_copy("changed");
        let exports = [Export::open_path(&path).unwrap()];
        let planned = pipeline::Planned::new(&exports, &opts, false).unwrap();
        assert_eq!(
            std::fs::metadata(&path).unwrap().len(),
            edited.len() as u64,
            "{name}"
        );
        let mut file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        std::io::Write::write_all(&mut file, &edited).unwrap();
        drop(file);
        let (mut prv, mut pcf, mut row) = (Vec::new(), Vec::new(), Vec::new());
        let mut w = ParaverWriter::new(Box::new(&mut prv), Box::new(&mut pcf), Box::new(&mut row));
        let e = pipeline::run_planned(&exports, &opts, Some(planned), &mut [&mut w], &mut |_| true)
            .expect_err("the reading finds the change");
        errors.push(e.to_string());
    }
    assert_eq!(errors[0], errors[1]);
    assert_eq!(errors[0], errors[2]);
    // The link join's operations (on the helper) are the first to meet the change.
    assert!(
        errors[0].contains("API-to-GPU correlations: the table reads differently by rowid range"),
        "{}",
        errors[0]
    );
}

/// An open export holds its file's shared lock until it is dropped (nsys/export.rs,
/// `locking_mode = EXCLUSIVE`): a SQLite writer meanwhile finds the database busy instead of
/// changing it under the conversion, and writes once the export is gone.
#[test]
fn sqlite_writers_wait_while_an_export_is_open() {
    let path = scratch_copy("locked");
    let export = Export::open_path(&path).unwrap();
    let planned = pipeline::Planned::new(std::slice::from_ref(&export), &one_thread(), false);
    assert!(planned.is_ok());
    let conn = rusqlite::Connection::open(&path).unwrap();
    // Busy at once, rather than after rusqlite's default wait of five seconds.
    conn.busy_timeout(std::time::Duration::ZERO).unwrap();
    let delete = "DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid % 2 = 0";
    let e = conn
        .execute(delete, [])
        .expect_err("the export holds the file");
    assert_eq!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy),
        "{e}"
    );
    drop(planned);
    drop(export);
    assert!(conn.execute(delete, []).unwrap() > 0);
}
