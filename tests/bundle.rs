//! The download bundle (`prvsight bundle`, and the page's one-click download): a valid zip whose
//! files are exactly what `prvsight convert` and `prvsight metrics --json` give for the same
//! inputs.

#![cfg(not(target_family = "wasm"))]

mod common;
#[path = "support/zipread.rs"]
mod zipread;

use std::io::{Read, Write};

use std::path::PathBuf;

use prvsight::bundle::zip::ZipSink;
use prvsight::bundle::{cfgs, write_bundle, BundleOptions, Bundled};
use prvsight::metrics::{self, MetricsOptions};
use prvsight::nsys::Export;
use prvsight::paraver::ParaverWriter;
use prvsight::pipeline;
use prvsight::Options;

fn sample() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/www/samples/testcuda_report1.sqlite"
    ))
}

/// A sink that keeps the bytes and where the stored entry's data lies (what the page keeps as
/// the trace file).
#[derive(Default)]
struct Recording {
    bytes: Vec<u8>,
    stored: Vec<(String, usize, usize)>,
    open: Option<(String, usize)>,
}

impl Write for Recording {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.bytes.extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl ZipSink for Recording {
    fn stored_data_begin(&mut self, name: &str) {
        self.open = Some((name.to_owned(), self.bytes.len()));
    }
    fn stored_data_end(&mut self) {
        let (n, a) = self.open.take().expect("begin before end");
        self.stored.push((n, a, self.bytes.len()));
    }
}

/// The converter's three files for `paths`, as `prvsight convert` writes them.
fn direct(paths: &[PathBuf]) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    let c = common::convert(paths, &Options::default()).unwrap();
    (c.prv.into_bytes(), c.pcf.into_bytes(), c.row.into_bytes())
}

/// The .prv.gz as the CLI makes it.
fn direct_gz(paths: &[PathBuf]) -> Vec<u8> {
    let exports: Vec<Export> = paths
        .iter()
        .map(|p| Export::open_path(p).unwrap())
        .collect();
    let mut gz = flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::new(prvsight::paraver::TRACE_GZIP_LEVEL),
    );
    let (mut pcf, mut row) = (Vec::new(), Vec::new());
    {
        let mut w = ParaverWriter::new(Box::new(&mut gz), Box::new(&mut pcf), Box::new(&mut row));
        pipeline::run(&exports, &Options::default(), &mut [&mut w], &mut |_| true).unwrap();
    }
    gz.finish().unwrap()
}

fn bundle(paths: &[PathBuf], bopts: &BundleOptions) -> (Bundled, Recording) {
    let exports: Vec<Export> = paths
        .iter()
        .map(|p| Export::open_path(p).unwrap())
        .collect();
    write_bundle(
        &exports,
        &Options::default(),
        bopts,
        Recording::default(),
        &mut |_| true,
    )
    .unwrap()
}

fn gunzip(b: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    flate2::read::GzDecoder::new(b).read_to_end(&mut v).unwrap();
    v
}

#[test]
fn the_bundle_holds_the_same_trace_metrics_and_cfgs() {
    let paths = vec![sample()];
    let bopts = BundleOptions {
        stem: "run1".into(),
        gzip: Some(prvsight::paraver::TRACE_GZIP_LEVEL),
        metrics: Some(MetricsOptions::default()),
        timeline: None,
    };
    let (done, rec) = bundle(&paths, &bopts);
    let entries = zipread::read_zip(&rec.bytes).unwrap();
    let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
    let mut expect = vec![
        "run1/run1.prv.gz".to_owned(),
        "run1/run1.pcf".to_owned(),
        "run1/run1.row".to_owned(),
    ];
    // Our views that apply to this trace (no NCCL, NVTX, GPU memory usage, OpenMP, CPU
    // counters or NIC metrics here: tests/bundle_views.rs).
    let left_out = [
        "comm_compute_overlap.cfg",
        "families/cpu_counters.cfg",
        "families/gpu_memory.cfg",
        "families/nic_bytes_sent.cfg",
        "families/openmp_barriers.cfg",
        "model/nccl_bandwidth.cfg",
        "nccl_kernels.cfg",
        "nvtx_pushpop.cfg",
        "nvtx_startend.cfg",
    ];
    let shipped: Vec<&(&str, &str)> = (cfgs().iter())
        .filter(|(p, _)| !left_out.contains(p))
        .collect();
    expect.extend(shipped.iter().map(|(p, _)| format!("run1/cfgs/{p}")));
    expect.extend(["run1/metrics.json".to_owned(), "run1/README.txt".to_owned()]);
    assert_eq!(names, expect);

    let (prv, pcf, row) = direct(&paths);
    // The trace is stored (method 0) as a gzip stream of exactly the converter's .prv.
    assert_eq!(entries[0].method, 0);
    assert_eq!(gunzip(&entries[0].data), prv);
    // ...and byte-identical to what `prvsight convert -o x.prv.gz` writes: the writer streaming
    // into a level-6 GzEncoder.
    assert!(
        direct_gz(&paths) == entries[0].data,
        "the .prv.gz differs from the CLI's"
    );
    assert_eq!(entries[1].data, pcf);
    assert_eq!(entries[2].data, row);
    assert_eq!(done.pcf, pcf);
    assert_eq!(done.row, row);
    for (i, (_, text)) in shipped.iter().enumerate() {
        assert_eq!(entries[3 + i].data, text.as_bytes());
    }
    let left: Vec<&str> = done
        .views
        .left_out
        .iter()
        .map(|(p, _)| p.as_str())
        .collect();
    assert_eq!(left, left_out);

    // metrics.json is what `prvsight metrics --json` prints.
    let exports = vec![Export::open_path(&paths[0]).unwrap()];
    let m = metrics::compute(&exports, &Options::default(), &MetricsOptions::default()).unwrap();
    let json = &entries[entries.len() - 2].data;
    assert_eq!(String::from_utf8_lossy(json), m.to_json().unwrap());
    assert_eq!(done.metrics_json.as_deref(), Some(&json[..]));

    // The bytes marked as stored data are the .prv.gz: the page's trace file is that range.
    assert_eq!(rec.stored.len(), 1);
    let (name, a, b) = &rec.stored[0];
    assert_eq!(name, "run1/run1.prv.gz");
    assert!(rec.bytes[*a..*b] == entries[0].data[..]);

    let readme = String::from_utf8(entries.last().unwrap().data.clone()).unwrap();
    assert_eq!(readme, done.readme);
    assert!(
        readme.contains("testcuda_report1.sqlite (Nsight Systems 2026.1.1.204, host 0x822a5b873)"),
        "{readme}"
    );
    assert!(
        readme.contains("File > Load Trace... and choose run1.prv.gz."),
        "{readme}"
    );
    assert!(
        readme.contains("Record families asked for: all present in the inputs"),
        "{readme}"
    );
}

#[test]
fn without_gzip_or_metrics() {
    let paths = vec![sample()];
    let bopts = BundleOptions {
        stem: "plain".into(),
        gzip: None,
        metrics: None,
        timeline: None,
    };
    let (done, rec) = bundle(&paths, &bopts);
    let entries = zipread::read_zip(&rec.bytes).unwrap();
    assert_eq!(entries[0].name, "plain/plain.prv");
    assert_eq!(entries[0].data, direct(&paths).0);
    assert!(entries.iter().all(|e| !e.name.ends_with("metrics.json")));
    assert!(done.metrics.is_none() && done.metrics_json.is_none());
    assert!(!done.readme.contains("metrics.json"));
}

#[test]
fn the_gzip_level_changes_only_the_compression() {
    let paths = vec![sample()];
    let prv = direct(&paths).0;
    let mut sizes = Vec::new();
    for level in [1, 9] {
        let bopts = BundleOptions {
            stem: "lvl".into(),
            gzip: Some(level),
            metrics: None,
            timeline: None,
        };
        let entries = zipread::read_zip(&bundle(&paths, &bopts).1.bytes).unwrap();
        assert_eq!(entries[0].name, "lvl/lvl.prv.gz");
        assert!(gunzip(&entries[0].data) == prv, "level {level}");
        sizes.push(entries[0].data.len());
    }
    assert!(
        sizes[1] < sizes[0],
        "level 9 is not smaller than level 1: {sizes:?}"
    );
}

#[test]
fn the_same_inputs_give_the_same_archive() {
    let bopts = BundleOptions {
        stem: "same".into(),
        gzip: Some(prvsight::paraver::TRACE_GZIP_LEVEL),
        metrics: Some(MetricsOptions::default()),
        timeline: None,
    };
    let a = bundle(&[sample()], &bopts).1.bytes;
    let b = bundle(&[sample()], &bopts).1.bytes;
    assert!(a == b);
}

#[test]
fn standard_unzip_accepts_it() {
    let ok = std::process::Command::new("unzip")
        .arg("-v")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("SKIP: no `unzip` on this machine");
        return;
    }
    let bopts = BundleOptions {
        stem: "t".into(),
        gzip: Some(prvsight::paraver::TRACE_GZIP_LEVEL),
        metrics: Some(MetricsOptions::default()),
        timeline: None,
    };
    let rec = bundle(&[sample()], &bopts).1;
    let dir = std::env::temp_dir().join(format!("prvsight-bundle-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let zip = dir.join("t.zip");
    std::fs::write(&zip, &rec.bytes).unwrap();
    let out = std::process::Command::new("unzip")
        .arg("-t")
        .arg(&zip)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains("No errors detected"),
        "{text}"
    );
}

#[test]
fn several_ranks_are_named_in_the_readme() {
    let Some(traces) = common::shared_traces() else {
        return;
    };
    let dir = traces.join("generated/mpi4");
    let paths: Vec<PathBuf> = (0..4)
        .map(|r| dir.join(format!("rank{r}.sqlite")))
        .collect();
    let labels: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    let refs: Vec<&str> = labels.iter().map(String::as_str).collect();
    let bopts = BundleOptions {
        stem: prvsight::bundle::stem_for(&refs),
        gzip: Some(prvsight::paraver::TRACE_GZIP_LEVEL),
        metrics: None,
        timeline: None,
    };
    assert_eq!(bopts.stem, "rank0+3");
    let (done, rec) = bundle(&paths, &bopts);
    let entries = zipread::read_zip(&rec.bytes).unwrap();
    assert_eq!(entries[0].name, "rank0+3/rank0+3.prv.gz");
    assert_eq!(gunzip(&entries[0].data), direct(&paths).0);
    for r in 0..4 {
        assert!(
            done.readme
                .contains(&format!("rank{r}.sqlite (Nsight Systems 2023.4.4.54, host"))
                && done.readme.contains(&format!(", rank {r})")),
            "rank {r}: {}",
            done.readme
        );
    }
}

#[test]
fn cli_gzip_level_is_checked_and_changes_only_the_compression() {
    let exe = env!("CARGO_BIN_EXE_prvsight");
    let dir = std::env::temp_dir().join(format!("prvsight-gzip-level-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let run = |args: &[&str]| {
        std::process::Command::new(exe)
            .args(args)
            .arg("-q")
            .output()
            .unwrap()
    };
    let input = sample();
    let input = input.to_str().unwrap();
    let out = |name: &str| dir.join(name).to_str().unwrap().to_owned();
    // Out of range, on a plain .prv, or with --no-gzip: a usage error, nothing written.
    for args in [
        vec![
            "convert",
            input,
            "-o",
            &out("a.prv.gz"),
            "--gzip-level",
            "0",
        ],
        vec!["convert", input, "-o", &out("b.prv"), "--gzip-level", "3"],
        vec![
            "bundle",
            input,
            "-o",
            &out("c.zip"),
            "--no-gzip",
            "--gzip-level",
            "3",
        ],
    ] {
        let r = run(&args);
        assert_eq!(r.status.code(), Some(2), "{args:?}");
        assert!(
            String::from_utf8_lossy(&r.stderr).contains("gzip-level"),
            "{args:?}"
        );
    }
    assert!(!dir.join("b.prv").exists() && !dir.join("c.zip").exists());
    // Levels 1 and 9 hold the same trace as the default.
    let mut sizes = Vec::new();
    for level in ["1", "9"] {
        let gz = out(&format!("l{level}.prv.gz"));
        assert!(run(&["convert", input, "-o", &gz, "--gzip-level", level])
            .status
            .success());
        let bytes = std::fs::read(&gz).unwrap();
        assert!(gunzip(&bytes) == direct(&[sample()]).0, "level {level}");
        sizes.push(bytes.len());
    }
    assert!(sizes[1] < sizes[0], "{sizes:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The inputs of the split bundles' tests: the bundled sample; with the shared traces, a
/// multi-rank set and an export with NVTX ranges and two GPUs.
fn split_inputs() -> Vec<Vec<PathBuf>> {
    let mut inputs = vec![vec![sample()]];
    if let (Some(shared), Some(root)) = (common::shared_inputs(), common::shared_traces()) {
        inputs.extend(shared.into_iter().filter(|p| p.len() > 1).take(1));
        inputs.push(vec![root.join("mfu_2gpu_before.sqlite")]);
    }
    assert!(inputs.iter().flatten().all(|f| f.exists()));
    inputs
}

/// The page's bundle options (a gzipped trace, metrics), `prvsight bundle`'s archive of `paths`
/// with them (and where its entries lie), and the exports opened.
fn whole_bundle(paths: &[PathBuf]) -> (BundleOptions, Bundled, Recording, Vec<Export>) {
    let bopts = BundleOptions {
        stem: "run".into(),
        gzip: Some(prvsight::paraver::TRACE_GZIP_LEVEL),
        metrics: Some(MetricsOptions::default()),
        timeline: None,
    };
    let (whole, recorded) = bundle(paths, &bopts);
    let exports = paths
        .iter()
        .map(|p| Export::open_path(p).unwrap())
        .collect();
    (bopts, whole, recorded, exports)
}

/// The rest of a bundle whose trace is gzipped apart: `plain` gzipped as the page's workers do
/// it — cut into segments, each deflated by one of two deflaters in turn, handed its segment in
/// pieces of `piece` bytes, the segments joined in order; the .prv.gz, and the archive before
/// and after it (the trace entry's header first, its data descriptor then), with what it
/// bundled.
fn gzip_apart(
    pending: prvsight::bundle::PendingBundle<Recording>,
    plain: &[u8],
    bopts: &BundleOptions,
    piece: usize,
) -> (Vec<u8>, Recording, Bundled) {
    use prvsight::paraver::gzip::{Join, SegmentDeflate, SEGMENT_BYTES};
    let level = bopts.gzip.unwrap();
    let mut deflaters = [SegmentDeflate::new(level), SegmentDeflate::new(level)];
    let (mut join, head) = Join::new(level);
    let mut trace = head.to_vec();
    for (i, segment) in plain.chunks(SEGMENT_BYTES).enumerate() {
        let d = &mut deflaters[i % 2];
        for p in segment.chunks(piece) {
            d.write(p, &mut trace).unwrap();
        }
        join.segment(&d.end(&mut trace).unwrap());
    }
    let (tail, sum) = join.finish();
    trace.extend(tail);
    let (bundled, around) = pending.finish(sum.crc, sum.len).unwrap();
    (trace, around, bundled)
}

/// A bundle converted on this thread whose trace is gzipped in another place, handed the plain
/// trace in 1 MiB pieces; the archive put together from the three parts is byte for byte
/// `prvsight bundle`'s.
#[test]
fn a_bundle_whose_trace_is_gzipped_elsewhere_is_the_same_archive() {
    use prvsight::bundle::BundleWriter;
    for paths in &split_inputs() {
        let (bopts, whole, recorded, exports) = whole_bundle(paths);
        let opts = Options::default();
        let mut plain = Vec::new();
        let mut writer =
            BundleWriter::new(Recording::default(), Box::new(&mut plain), &opts, &bopts).unwrap();
        let summary = pipeline::run(&exports, &opts, &mut writer.sinks(), &mut |_| true).unwrap();
        let pending = writer.finish(summary);
        let (trace, tail, split) = gzip_apart(pending, &plain, &bopts, 1 << 20);
        let what = paths[0].display();
        assert_eq!(split.summary.records, whole.summary.records, "{what}");
        // The head is the trace entry's header; the tail starts with its data descriptor.
        let (_, at, end) = recorded.stored[0].clone();
        assert_eq!(
            tail.bytes[..at],
            recorded.bytes[..at],
            "{what}: the entry header"
        );
        assert!(tail.bytes.len() > at);
        let assembled = [&tail.bytes[..at], &trace[..], &tail.bytes[at..]].concat();
        assert_eq!(trace, recorded.bytes[at..end], "{what}: the .prv.gz");
        assert_eq!(assembled, recorded.bytes, "{what}: the archive");
    }
}

/// The page's reader/writer split: one side plans and reads, handing the records over in batches
/// of bytes (`SplitReader`); the other runs the bundle's sinks on them (`SplitWriter`,
/// `BundleWriter`); the trace is gzipped apart. The archive is `prvsight bundle`'s, byte for byte.
#[test]
fn a_bundle_written_apart_from_its_reader_is_the_same_archive() {
    use prvsight::bundle::BundleWriter;
    use prvsight::pipeline::{SplitReader, SplitWriter};
    for paths in &split_inputs() {
        let (bopts, whole, recorded, exports) = whole_bundle(paths);
        let opts = Options::default();
        // The reading side.
        let (mut reader, header) = SplitReader::open(&exports, &opts, &mut |_| true).unwrap();
        let header: prvsight::pipeline::Header =
            serde_json::from_str(&serde_json::to_string(&header).unwrap()).unwrap();
        // The writing side, fed a batch at a time.
        let mut plain = Vec::new();
        let mut writer =
            BundleWriter::new(Recording::default(), Box::new(&mut plain), &opts, &bopts).unwrap();
        let mut split = SplitWriter::begin(header, &mut writer.sinks()).unwrap();
        let mut batches = 0;
        while let Some(bytes) = reader.next_batch(1000).unwrap() {
            split.feed(&bytes, &mut writer.sinks()).unwrap();
            batches += 1;
        }
        split.finish(&mut writer.sinks()).unwrap();
        let summary = reader.finish();
        assert_eq!(summary.records, whole.summary.records);
        assert!(batches as u64 >= summary.records / 1000);
        let pending = writer.finish(summary);
        let (trace, tail, done) = gzip_apart(pending, &plain, &bopts, plain.len().max(1));
        let (_, at, _) = recorded.stored[0].clone();
        let assembled = [&tail.bytes[..at], &trace[..], &tail.bytes[at..]].concat();
        let what = paths[0].display();
        assert_eq!(assembled, recorded.bytes, "{what}: the archive");
        assert_eq!(done.readme, whole.readme, "{what}");
    }
}
