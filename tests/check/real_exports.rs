//! Traces converted from the real exports pass, corrupted and mutated ones fail without a panic.

use super::*;
use crate::common::shared_traces;

struct Converted {
    summary: Summary,
    prv: Vec<u8>,
    pcf: String,
    row: String,
}

fn convert(paths: &[PathBuf]) -> prvsight::Result<Converted> {
    let exports = paths
        .iter()
        .map(|p| Export::open_path(p))
        .collect::<prvsight::Result<Vec<_>>>()?;
    let (mut prv, mut pcf, mut row) = (Vec::new(), Vec::new(), Vec::new());
    let summary = {
        let mut w = ParaverWriter::new(Box::new(&mut prv), Box::new(&mut pcf), Box::new(&mut row));
        pipeline::run(&exports, &Options::default(), &mut [&mut w], &mut |_| true)?
    };
    Ok(Converted {
        summary,
        prv,
        pcf: String::from_utf8(pcf).expect("pcf is UTF-8"),
        row: String::from_utf8(row).expect("row is UTF-8"),
    })
}

/// Every .sqlite under `dir`, sorted.
fn exports_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(exports_under(&p));
        } else if p.extension().is_some_and(|e| e == "sqlite") {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// Every record the converter reports is a valid record for the checker, with the same counts.
fn assert_converted_trace_passes(paths: &[PathBuf]) {
    let c = convert(paths).unwrap_or_else(|e| panic!("{}: {e}", paths[0].display()));
    let path = &paths[0];
    let r = check_readers(&c.prv[..], &c.pcf, &c.row, &CheckOptions::default());
    assert!(r.is_ok(), "{}: {r}", path.display());
    let s = &r.stats;
    let count = |k: &str| c.summary.counts.get(k).copied().unwrap_or(0);
    let nz = |t: u32| s.nonzero_events.get(&t).copied().unwrap_or(0);
    let name = path.display();
    assert_eq!(
        nz(events::KERNEL) + nz(events::COMM_KERNEL),
        count("kernel"),
        "{name}: kernels"
    );
    assert_eq!(
        nz(events::CUDA_API),
        count("cuda-api"),
        "{name}: CUDA API calls"
    );
    assert_eq!(
        s.comm_records,
        count("link-launch") + count("link-memory") + count("mpi-message"),
        "{name}: links"
    );
    assert_eq!(
        s.comm_tags.get(&events::TAG_LAUNCH).copied().unwrap_or(0),
        count("link-launch"),
        "{name}: launch links"
    );
    assert_eq!(
        r.threads(),
        c.summary.trace.objects.threads.len() as u64,
        "{name}: threads"
    );
    assert_eq!(r.ftime(), c.summary.trace.end_time, "{name}: end time");
    // Every kernel interval is closed by a value-0 event, except where a later kernel of the
    // same stream covers its end (that one's end closes both): never more ends than kernels.
    // That each stream's kernel time is the export's is tests/overlap.rs's check.
    let zeros = |t: u32| {
        s.values
            .get(&t)
            .and_then(|m| m.get(&0))
            .copied()
            .unwrap_or(0)
    };
    assert!(
        nz(events::KERNEL) == 0 || (1..=nz(events::KERNEL)).contains(&zeros(events::KERNEL)),
        "{name}: kernel ends {} for {} kernels",
        zeros(events::KERNEL),
        nz(events::KERNEL)
    );
}

#[test]
fn every_convertible_real_export_passes_with_full_state_coverage() {
    let mut checked = 0;
    if let Some(dir) = shared_traces() {
        for p in exports_under(&dir) {
            if p.file_name().is_some_and(|n| n == "jacc_cg_trace.sqlite") {
                // No kernel, memcpy, API or NVTX rows: it converts only where another record
                // family (OS scheduling) is read; otherwise it must fail with a clear error.
                if let Err(e) = convert(std::slice::from_ref(&p)) {
                    assert!(e.to_string().contains("no events to convert"), "{e}");
                    continue;
                }
            }
            assert_converted_trace_passes(&[p]);
            checked += 1;
        }
        assert!(checked >= 16, "only {checked} shared exports checked");
        // Multi-rank merges: one task per rank in one trace.
        for set in ["generated/mpi4", "generated/mpi4_nsys2022.4"] {
            let ranks = exports_under(&dir.join(set));
            assert_eq!(ranks.len(), 4, "{set}");
            assert_converted_trace_passes(&ranks);
        }
    }
    let sample = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/testcuda_report1.sqlite"
    ));
    if sample.is_file() {
        assert_converted_trace_passes(&[sample]);
    } else {
        eprintln!("SKIP: tests/data/testcuda_report1.sqlite is missing");
    }
}

#[test]
fn a_corrupted_real_trace_fails() {
    let sample = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/testcuda_report1.sqlite"
    ));
    if !sample.is_file() {
        eprintln!("SKIP: tests/data/testcuda_report1.sqlite is missing");
        return;
    }
    let c = convert(&[sample]).unwrap();
    let prv = String::from_utf8(c.prv).unwrap();
    // Drop the first state line of a GPU stream: its thread now starts with a gap.
    let victim = prv
        .lines()
        .skip(1)
        .find(|l| l.starts_with("1:") && l.ends_with(":0"))
        .unwrap()
        .to_owned();
    let broken = prv.replacen(&format!("{victim}\n"), "", 1);
    let r = check_readers(broken.as_bytes(), &c.pcf, &c.row, &CheckOptions::default());
    assert_eq!(r.problems.len(), 1, "{r}");
    assert!(r.problems[0].contains("gap(s) between states"), "{r}");
}

/// Deterministic xorshift, so the mutation test needs no extra crate and always runs the same.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Replaces, deletes or inserts bytes (from a set rich in separators and digits).
fn mutate(text: &str, rng: &mut Rng) -> Vec<u8> {
    const BYTES: &[u8] = b":,(){}\n\r \t0123456789-._#\"LEVELSIZEVALUES\xc3\xa9\xff";
    let mut b = text.as_bytes().to_vec();
    for _ in 0..1 + rng.below(6) {
        let at = rng.below(b.len().max(1));
        match rng.below(3) {
            0 if !b.is_empty() => b[at] = BYTES[rng.below(BYTES.len())],
            1 if !b.is_empty() => {
                b.remove(at);
            }
            _ => b.insert(at.min(b.len()), BYTES[rng.below(BYTES.len())]),
        }
    }
    b
}

#[test]
fn mutated_inputs_never_panic_and_are_mostly_caught() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut caught = 0;
    let rounds = 3000;
    for _ in 0..rounds {
        let which = rng.below(3);
        let prv = if which == 0 {
            mutate(PRV, &mut rng)
        } else {
            PRV.as_bytes().to_vec()
        };
        let pcf = if which == 1 {
            String::from_utf8_lossy(&mutate(PCF, &mut rng)).into_owned()
        } else {
            PCF.to_owned()
        };
        let row = if which == 2 {
            String::from_utf8_lossy(&mutate(ROW, &mut rng)).into_owned()
        } else {
            ROW.to_owned()
        };
        let r = check_readers(&prv[..], &pcf, &row, &CheckOptions::default());
        if !r.is_ok() {
            caught += 1;
        }
        let _ = r.to_string();
    }
    // Some mutations are harmless (a label letter, a digit inside a value); most are not.
    assert!(
        caught > rounds / 2,
        "only {caught} of {rounds} mutations reported"
    );
}
