//! Robustness on damaged and absurd exports, and determinism.
//!
//! Every case is converted in memory (`Export::from_bytes`, the path the browser takes too) on its
//! own thread with a time limit and `catch_unwind`, and must end in one of two ways:
//! * an `Err` whose message names the input, or
//! * an `Ok` whose three files pass `paraver::check::check_readers` (full state coverage).
//!
//! A panic, a hang, an error that does not name the file, or an invalid trace fails the test; each
//! test collects all its failing cases and reports them together. Cases: every page-sized prefix of
//! the small real export, 200 seeded random byte flips, a zero-length and a non-SQLite file, every
//! table dropped, every column of every non-empty table renamed, and absurd values (end < start,
//! negative and 2^63 times, ids out of range, wrong types, NULLs where nsys never writes one).

mod common;

use std::panic::AssertUnwindSafe;
use std::sync::mpsc;
use std::time::Duration;

use common::mutated;
use prvsight::nsys::Export;
use prvsight::paraver::check::{check_readers, CheckOptions};
use prvsight::paraver::ParaverWriter;
use prvsight::pipeline;
use prvsight::Options;
use rusqlite::{Connection, MAIN_DB};

/// A conversion of this 0.6 MB export takes milliseconds; a minute means it hangs.
const TIME_LIMIT: Duration = Duration::from_secs(60);

/// The three output files of a successful conversion.
struct Files {
    prv: Vec<u8>,
    pcf: Vec<u8>,
    row: Vec<u8>,
    counts: std::collections::BTreeMap<String, u64>,
}

fn convert_bytes(bytes: &[u8], label: &str, opts: &Options) -> prvsight::Result<Files> {
    let ex = Export::from_bytes(bytes, label)?;
    let (mut prv, mut pcf, mut row) = (Vec::new(), Vec::new(), Vec::new());
    let summary = {
        let mut w = ParaverWriter::new(Box::new(&mut prv), Box::new(&mut pcf), Box::new(&mut row));
        pipeline::run(std::slice::from_ref(&ex), opts, &mut [&mut w], &mut |_| {
            true
        })?
    };
    Ok(Files {
        prv,
        pcf,
        row,
        counts: summary.counts,
    })
}

/// How an acceptable case ended.
#[derive(Debug)]
enum Outcome {
    Valid(std::collections::BTreeMap<String, u64>),
    Refused(String),
}

/// Converts `bytes` under the time limit and judges the result; `Err` describes a failure.
fn judge(bytes: Vec<u8>, label: &str) -> Result<Outcome, String> {
    let (tx, rx) = mpsc::channel();
    let l = label.to_owned();
    std::thread::spawn(move || {
        let r = std::panic::catch_unwind(AssertUnwindSafe(|| {
            convert_bytes(&bytes, &l, &Options::default())
        }));
        let _ = tx.send(r);
    });
    let files = match rx.recv_timeout(TIME_LIMIT) {
        Err(_) => return Err(format!("{label}: no result within {TIME_LIMIT:?} (hang)")),
        Ok(Err(p)) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            return Err(format!("{label}: PANIC {msg}"));
        }
        Ok(Ok(Err(e))) => {
            let msg = e.to_string();
            return if msg.contains(label) {
                Ok(Outcome::Refused(msg))
            } else {
                Err(format!("{label}: error does not name the file: {msg}"))
            };
        }
        Ok(Ok(Ok(f))) => f,
    };
    let (pcf, row) = match (
        std::str::from_utf8(&files.pcf),
        std::str::from_utf8(&files.row),
    ) {
        (Ok(p), Ok(r)) => (p, r),
        _ => return Err(format!("{label}: .pcf or .row is not UTF-8")),
    };
    let report = check_readers(&files.prv[..], pcf, row, &CheckOptions::default());
    if report.is_ok() {
        Ok(Outcome::Valid(files.counts))
    } else {
        Err(format!("{label}: converted to an invalid trace:\n{report}"))
    }
}

/// Runs every case, prints a tally, and fails listing every bad case.
fn judge_all(
    what: &str,
    cases: impl IntoIterator<Item = (String, Vec<u8>)>,
) -> Vec<(String, Outcome)> {
    let mut ok = Vec::new();
    let mut failures = Vec::new();
    for (label, bytes) in cases {
        match judge(bytes, &label) {
            Ok(o) => ok.push((label, o)),
            Err(f) => failures.push(f),
        }
    }
    let valid = ok
        .iter()
        .filter(|(_, o)| matches!(o, Outcome::Valid(_)))
        .count();
    eprintln!(
        "{what}: {} cases: {valid} valid traces, {} clear errors, {} failures",
        ok.len() + failures.len(),
        ok.len() - valid,
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{what}: {} failing case(s):\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    ok
}

fn original() -> Vec<u8> {
    std::fs::read(common::data("testcuda_report1.sqlite")).unwrap()
}

/// The export with the NOT NULL constraints of `table` removed from its DDL, so that a later
/// mutation can write NULLs where nsys never does (as a damaged or hand-edited file might hold).
fn relaxed(bytes: &[u8], table: &str) -> Vec<u8> {
    mutated(
        bytes,
        &format!(
            "PRAGMA writable_schema = ON;
             UPDATE sqlite_master SET sql = replace(sql, 'NOT NULL', '') WHERE name = '{table}';
             PRAGMA writable_schema = OFF;"
        ),
    )
}

fn table_names(bytes: &[u8]) -> Vec<String> {
    let mut c = Connection::open_in_memory().unwrap();
    c.deserialize_read_exact(MAIN_DB, bytes, bytes.len(), true)
        .unwrap();
    let mut st = c
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .unwrap();
    let names = st
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<Vec<String>, _>>()
        .unwrap();
    names
}

/// (table, column) of every non-empty table.
fn columns_of_nonempty_tables(bytes: &[u8]) -> Vec<(String, String)> {
    let mut c = Connection::open_in_memory().unwrap();
    c.deserialize_read_exact(MAIN_DB, bytes, bytes.len(), true)
        .unwrap();
    let mut out = Vec::new();
    for t in table_names(bytes) {
        let n: i64 = c
            .query_row(&format!("SELECT count(*) FROM \"{t}\""), [], |r| r.get(0))
            .unwrap();
        if n == 0 {
            continue;
        }
        let mut st = c.prepare(&format!("PRAGMA table_info(\"{t}\")")).unwrap();
        for col in st.query_map([], |r| r.get::<_, String>(1)).unwrap() {
            out.push((t.clone(), col.unwrap()));
        }
    }
    out
}

/// xorshift64*: a fixed, dependency-free sequence so every run tests the same variants.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

// ---------------------------------------------------------------------------------------------

#[test]
fn the_unmodified_export_converts_to_a_valid_trace() {
    let out = judge_all(
        "original",
        [("testcuda_report1.sqlite".to_owned(), original())],
    );
    let Outcome::Valid(counts) = &out[0].1 else {
        panic!("the original must convert")
    };
    // Row counts of the export's converted tables (see tests/data/README.md).
    assert_eq!(counts.get("kernel"), Some(&4), "{counts:?}");
    assert_eq!(counts.get("memcpy"), Some(&12), "{counts:?}");
    assert_eq!(counts.get("cuda-api"), Some(&44), "{counts:?}");
}

#[test]
fn zero_length_and_non_sqlite_inputs_are_refused_by_name() {
    let text = b"Nsight Systems report, but as text: start,end,name\n1,2,kernel\n".repeat(20);
    let mut gz = vec![0x1f, 0x8b, 8, 0];
    gz.extend(std::iter::repeat_n(7u8, 200));
    let out = judge_all(
        "non-SQLite",
        [
            ("zero.sqlite".to_owned(), Vec::new()),
            ("text.sqlite".to_owned(), text),
            ("gzip.sqlite".to_owned(), gz),
            ("header-only.sqlite".to_owned(), original()[..100].to_vec()),
        ],
    );
    let msgs: Vec<String> = out
        .into_iter()
        .map(|(_, o)| match o {
            Outcome::Refused(m) => m,
            Outcome::Valid(_) => panic!("a non-database converted"),
        })
        .collect();
    assert!(msgs[0].contains("empty (0 bytes)"), "{}", msgs[0]);
    assert!(msgs[1].contains("SQLite header"), "{}", msgs[1]);
    assert!(msgs[2].contains("gzip"), "{}", msgs[2]);
    assert!(
        msgs[3].starts_with("header-only.sqlite: not a readable SQLite database"),
        "{}",
        msgs[3]
    );
}

#[test]
fn every_page_sized_prefix_gives_an_error_or_a_valid_trace() {
    let bytes = original();
    // The export has 4 KiB pages: every page boundary, and one byte either side of a few.
    let mut cuts: Vec<usize> = (4096..bytes.len()).step_by(4096).collect();
    cuts.extend([4095, 4097, 8191, 65537, bytes.len() - 1]);
    let out = judge_all(
        "truncations",
        cuts.iter()
            .map(|&n| (format!("prefix-{n}.sqlite"), bytes[..n].to_vec())),
    );
    // A prefix lacks pages that the schema points at: SQLite must notice before any row is used.
    let refused = out
        .iter()
        .filter(|(_, o)| matches!(o, Outcome::Refused(_)))
        .count();
    assert_eq!(out.len(), cuts.len());
    assert!(
        refused > cuts.len() / 2,
        "only {refused} of {} prefixes refused",
        cuts.len()
    );
}

#[test]
fn seeded_random_byte_flips_give_an_error_or_a_valid_trace() {
    let bytes = original();
    let mut rng = Rng(0x05EE_D0FF_11F5);
    let cases: Vec<(String, Vec<u8>)> = (0..200)
        .map(|i| {
            let mut b = bytes.clone();
            // 1 to 16 bytes, half of the variants inside the first 8 pages (schema and b-tree roots).
            let flips = 1 + rng.below(16);
            let span = if i % 2 == 0 { 8 * 4096 } else { b.len() };
            for _ in 0..flips {
                let at = rng.below(span);
                b[at] ^= 1 << rng.below(8);
            }
            (format!("flip-{i}.sqlite"), b)
        })
        .collect();
    judge_all("byte flips", cases);
}

#[test]
fn every_table_dropped_in_turn() {
    let bytes = original();
    let base = match judge(bytes.clone(), "base.sqlite").unwrap() {
        Outcome::Valid(c) => c,
        Outcome::Refused(m) => panic!("{m}"),
    };
    let tables = table_names(&bytes);
    assert_eq!(tables.len(), 57, "{tables:?}");
    let out = judge_all(
        "dropped tables",
        tables.iter().map(|t| {
            (
                format!("drop-{t}.sqlite"),
                mutated(&bytes, &format!("DROP TABLE \"{t}\"")),
            )
        }),
    );
    for ((label, o), t) in out.iter().zip(&tables) {
        // Dropping a family's table removes that family and the API links that end in it; every
        // other table only names things, so the records stay exactly as they were.
        let gone: &[&str] = match t.as_str() {
            "CUPTI_ACTIVITY_KIND_KERNEL" => &["kernel", "link-launch"],
            "CUPTI_ACTIVITY_KIND_MEMCPY" => &["memcpy", "link-memory"],
            "CUPTI_ACTIVITY_KIND_RUNTIME" => {
                &["cuda-api", "link-launch", "link-memory", "cuda-event"]
            }
            "CUPTI_ACTIVITY_KIND_CUDA_EVENT" => &["cuda-event"],
            "OSRT_API" => &["osrt", "pthread"],
            "SCHED_EVENTS" => &["sched"],
            _ => &[],
        };
        match (t.as_str(), o) {
            ("StringIds", Outcome::Refused(m)) => assert!(m.contains("StringIds"), "{m}"),
            ("StringIds", Outcome::Valid(_)) => panic!("{label}: no strings, yet converted"),
            (_, Outcome::Valid(c)) => {
                let mut expected = base.clone();
                expected.retain(|k, _| !gone.contains(&k.as_str()));
                assert_eq!(c, &expected, "{label}");
            }
            (_, Outcome::Refused(m)) => panic!("{label}: refused: {m}"),
        }
    }
}

#[test]
fn every_column_renamed_in_turn() {
    let bytes = original();
    let cols = columns_of_nonempty_tables(&bytes);
    let out = judge_all(
        "renamed columns",
        cols.iter().map(|(t, c)| {
            let sql = format!("ALTER TABLE \"{t}\" RENAME COLUMN \"{c}\" TO \"{c}_renamed\"");
            (format!("rename-{t}.{c}.sqlite"), mutated(&bytes, &sql))
        }),
    );
    // The columns the kernel reader needs are refused with the table and column named.
    for ((label, o), (t, c)) in out.iter().zip(&cols) {
        if t == "CUPTI_ACTIVITY_KIND_KERNEL"
            && ["start", "end", "streamId", "deviceId"].contains(&c.as_str())
        {
            match o {
                Outcome::Refused(m) => {
                    assert!(m.contains(t) && m.contains(c.as_str()), "{label}: {m}")
                }
                Outcome::Valid(_) => panic!("{label}: converted without kernel column {c}"),
            }
        }
    }
}

/// The tables of the export that hold activity, and what each can hold absurdly.
const TIMED: &[&str] = &[
    "CUPTI_ACTIVITY_KIND_KERNEL",
    "CUPTI_ACTIVITY_KIND_MEMCPY",
    "CUPTI_ACTIVITY_KIND_RUNTIME",
    "OSRT_API",
    "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
];

#[test]
fn absurd_values_give_an_error_or_a_valid_trace() {
    let out = judge_all("absurd values", absurd_cases());
    assert_eq!(out.len(), 104);

    // A time near 2^63 in a converted table stretches the trace beyond what Paraver's doubles
    // hold: refused by name. (CUPTI_ACTIVITY_KIND_SYNCHRONIZATION is not converted.)
    for (label, o) in &out {
        let converted = !label.contains("SYNCHRONIZATION");
        if converted && (label.contains("start-2^63") || label.contains("end-2^63")) {
            match o {
                Outcome::Refused(m) => assert!(m.contains("104 days"), "{label}: {m}"),
                Outcome::Valid(_) => panic!("{label}: a 2^63 ns time converted"),
            }
        }
    }
}

fn absurd_cases() -> Vec<(String, Vec<u8>)> {
    let bytes = original();
    let mut cases: Vec<(String, Vec<u8>)> = Vec::new();
    let mut add = |name: &str, b: Vec<u8>| cases.push((format!("absurd-{name}.sqlite"), b));
    let max = i64::MAX;
    let min = i64::MIN;
    for t in TIMED {
        let first = format!("rowid = (SELECT min(rowid) FROM {t})");
        let per_table: Vec<(String, String)> = vec![
            ("end-before-start".into(), format!("UPDATE {t} SET end = start - 1 - rowid % 1000")),
            ("zero-length".into(), format!("UPDATE {t} SET end = start")),
            ("negative-times".into(), format!("UPDATE {t} SET start = -start, end = -end")),
            ("one-negative-start".into(), format!("UPDATE {t} SET start = -5 WHERE {first}")),
            ("start-2^63".into(), format!("UPDATE {t} SET start = {max}, end = {max} WHERE {first}")),
            ("end-2^63".into(), format!("UPDATE {t} SET end = {max} WHERE {first}")),
            ("start-min".into(), format!("UPDATE {t} SET start = {min} WHERE {first}")),
            ("all-2^63".into(), format!("UPDATE {t} SET start = {max}, end = {max}")),
            ("start-text".into(), format!("UPDATE {t} SET start = 'soon' WHERE {first}")),
            ("start-real".into(), format!("UPDATE {t} SET start = start + 0.5")),
            ("end-blob".into(), format!("UPDATE {t} SET end = x'00ff' WHERE {first}")),
            ("same-start".into(), format!("UPDATE {t} SET start = (SELECT min(start) FROM {t}), end = (SELECT min(start) FROM {t}) + 10")),
        ];
        for (name, sql) in per_table {
            add(&format!("{t}-{name}"), mutated(&bytes, &sql));
        }
        let relaxed_t = relaxed(&bytes, t);
        add(
            &format!("{t}-null-start"),
            mutated(
                &relaxed_t,
                &format!("UPDATE {t} SET start = NULL WHERE rowid % 2 = 0"),
            ),
        );
        add(
            &format!("{t}-null-end"),
            mutated(&relaxed_t, &format!("UPDATE {t} SET end = NULL")),
        );
    }
    let k = "CUPTI_ACTIVITY_KIND_KERNEL";
    let m = "CUPTI_ACTIVITY_KIND_MEMCPY";
    let r = "CUPTI_ACTIVITY_KIND_RUNTIME";
    let ids: Vec<(&str, String)> = vec![
        (
            "kernel-device-2^40",
            format!("UPDATE {k} SET deviceId = 1099511627776"),
        ),
        (
            "kernel-device-negative",
            format!("UPDATE {k} SET deviceId = -1"),
        ),
        (
            "kernel-stream-max",
            format!("UPDATE {k} SET streamId = {max}"),
        ),
        (
            "kernel-context-min",
            format!("UPDATE {k} SET contextId = {min}"),
        ),
        (
            "kernel-globalPid-negative",
            format!("UPDATE {k} SET globalPid = -1"),
        ),
        (
            "kernel-globalPid-null",
            format!("UPDATE {k} SET globalPid = NULL"),
        ),
        (
            "kernel-name-missing",
            format!("UPDATE {k} SET shortName = 999999999, demangledName = 999999999"),
        ),
        (
            "kernel-name-negative",
            format!("UPDATE {k} SET shortName = -7"),
        ),
        (
            "kernel-grid-negative",
            format!("UPDATE {k} SET gridX = -1, blockX = {max}"),
        ),
        (
            "kernel-correlation-dup",
            format!("UPDATE {k} SET correlationId = 7"),
        ),
        (
            "memcpy-kind-unknown",
            format!("UPDATE {m} SET copyKind = 999, srcKind = -3, dstKind = {max}"),
        ),
        (
            "memcpy-bytes-negative",
            format!("UPDATE {m} SET bytes = -1"),
        ),
        ("memcpy-bytes-max", format!("UPDATE {m} SET bytes = {max}")),
        (
            "runtime-globalTid-negative",
            format!("UPDATE {r} SET globalTid = -1"),
        ),
        (
            "runtime-globalTid-max",
            format!("UPDATE {r} SET globalTid = {max}"),
        ),
        (
            "runtime-globalTid-null",
            format!("UPDATE {r} SET globalTid = NULL"),
        ),
        (
            "runtime-correlation-negative",
            format!("UPDATE {r} SET correlationId = -1"),
        ),
        (
            "runtime-correlation-null",
            format!("UPDATE {r} SET correlationId = NULL"),
        ),
        (
            "runtime-name-missing",
            format!("UPDATE {r} SET nameId = 123456789"),
        ),
        (
            "threadnames-missing-string",
            "UPDATE ThreadNames SET nameId = -1".into(),
        ),
        (
            "processes-null-name",
            "UPDATE PROCESSES SET name = NULL, pid = NULL".into(),
        ),
        (
            "gpu-null-name",
            "UPDATE TARGET_INFO_GPU SET name = NULL".into(),
        ),
        (
            "session-start-absurd",
            format!("UPDATE TARGET_INFO_SESSION_START_TIME SET utcEpochNs = {max}"),
        ),
        (
            "strings-ids-shifted-away",
            "UPDATE StringIds SET id = id + 1000000000".into(),
        ),
        (
            "strings-huge",
            "UPDATE StringIds SET value = value || replace(hex(zeroblob(20000)), '0', 'x')".into(),
        ),
        (
            "strings-not-utf8",
            "UPDATE StringIds SET value = CAST(x'fffe00c328' AS TEXT)".into(),
        ),
        (
            "strings-newlines",
            "UPDATE StringIds SET value = value || char(10) || ':' || char(13) || '\"'".into(),
        ),
        // Same pid, other machine/VM (globalTid's top 16 bits): two processes labelled alike
        // made an invalid .row before labels were made distinct (found by flip-127).
        (
            "sched-same-pid-other-vm",
            "UPDATE SCHED_EVENTS SET globalTid = globalTid + 281474976710656 WHERE rowid % 2 = 0"
                .into(),
        ),
        (
            "schema-version-garbage",
            "UPDATE META_DATA_EXPORT SET value = 'x.y.z'".into(),
        ),
    ];
    for (name, sql) in ids {
        add(name, mutated(&bytes, &sql));
    }
    add(
        "strings-null",
        mutated(
            &relaxed(&bytes, "StringIds"),
            "UPDATE StringIds SET value = NULL",
        ),
    );
    add(
        "threadnames-null",
        mutated(
            &relaxed(&bytes, "ThreadNames"),
            "UPDATE ThreadNames SET nameId = NULL",
        ),
    );
    add(
        "kernel-shortName-null",
        mutated(
            &relaxed(&bytes, k),
            &format!("UPDATE {k} SET shortName = NULL, demangledName = NULL"),
        ),
    );
    add(
        "kernel-stream-null",
        mutated(
            &relaxed(&bytes, k),
            &format!("UPDATE {k} SET streamId = NULL, deviceId = NULL"),
        ),
    );
    add(
        "runtime-nameId-null",
        mutated(
            &relaxed(&bytes, r),
            &format!("UPDATE {r} SET nameId = NULL"),
        ),
    );
    cases
}

// ---------------------------------------------------------------------------------------------
// Determinism

fn three_files(paths: &[std::path::PathBuf]) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    let exports: Vec<Export> = paths
        .iter()
        .map(|p| Export::open_path(p).unwrap())
        .collect();
    let (mut prv, mut pcf, mut row) = (Vec::new(), Vec::new(), Vec::new());
    {
        let mut w = ParaverWriter::new(Box::new(&mut prv), Box::new(&mut pcf), Box::new(&mut row));
        pipeline::run(&exports, &Options::default(), &mut [&mut w], &mut |_| true).unwrap();
    }
    (prv, pcf, row)
}

#[test]
fn the_same_inputs_give_byte_identical_outputs() {
    let mut sets = vec![vec![common::data("testcuda_report1.sqlite")]];
    if let Some(shared) = common::shared_traces() {
        sets.push(vec![shared.join("mfu_2gpu_before.sqlite")]);
        sets.push(vec![shared.join("nsightful_power_iteration.sqlite")]);
        sets.push(
            (0..4)
                .map(|r| shared.join(format!("generated/mpi4/rank{r}.sqlite")))
                .collect(),
        );
    }
    for set in &sets {
        let a = three_files(set);
        let b = three_files(set);
        assert!(!a.0.is_empty() && !a.1.is_empty() && !a.2.is_empty());
        assert!(a.0 == b.0, "{set:?}: .prv differs between two runs");
        assert!(a.1 == b.1, "{set:?}: .pcf differs between two runs");
        assert!(a.2 == b.2, "{set:?}: .row differs between two runs");
    }
    // The in-memory path (what the browser uses) writes the same bytes as the file path.
    let p = common::data("testcuda_report1.sqlite");
    let from_file = three_files(std::slice::from_ref(&p));
    let from_mem = convert_bytes(
        &std::fs::read(&p).unwrap(),
        &p.display().to_string(),
        &Options::default(),
    )
    .unwrap();
    assert!(
        from_file.0 == from_mem.prv && from_file.1 == from_mem.pcf && from_file.2 == from_mem.row
    );
}

/// The sample (which has no NVTX) with 400 NVTX push/pop ranges on its main thread, written as
/// nsys writes them (when they end: each outer range after the ten it encloses), so that damage
/// also reaches the sort-keys NVTX reader (src/engine/sort_keys.rs: keys sorted, rows fetched by rowid).
fn with_nvtx_ranges() -> Vec<u8> {
    mutated(
        &original(),
        "CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
           rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,
           endGlobalTid INTEGER, textId INTEGER, domainId INTEGER, jsonTextId INTEGER, jsonText TEXT);
         WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 399),
           base(t) AS (SELECT min(start) FROM OSRT_API)
         INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId)
         SELECT CASE WHEN i % 11 = 10 THEN t + (i / 11) * 110000 ELSE t + i * 10000 END,
                CASE WHEN i % 11 = 10 THEN t + (i / 11) * 110000 + 109000 ELSE t + i * 10000 + 5000 END,
                59, 'range ' || (i % 7), 281761330250412, 0
         FROM n, base ORDER BY i;",
    )
}

#[test]
fn damage_to_an_export_with_nvtx_ranges_gives_an_error_or_a_valid_trace() {
    let bytes = with_nvtx_ranges();
    let whole = judge(bytes.clone(), "with-nvtx.sqlite").unwrap();
    let Outcome::Valid(counts) = &whole else {
        panic!("the undamaged export converts: {whole:?}")
    };
    assert_eq!(counts.get("nvtx-push-pop"), Some(&400), "{counts:?}");
    // The NVTX table's pages are the last ones: cut inside them, and flip bytes there.
    let pages = bytes.len() / 4096;
    let mut cases: Vec<(String, Vec<u8>)> = (pages.saturating_sub(12)..pages)
        .map(|p| {
            (
                format!("nvtx-prefix-{p}.sqlite"),
                bytes[..p * 4096].to_vec(),
            )
        })
        .collect();
    let mut rng = Rng(0x0BAD_5EED_0017);
    let tail = pages.saturating_sub(12) * 4096;
    for i in 0..120 {
        let mut b = bytes.clone();
        for _ in 0..1 + rng.below(8) {
            let at = tail + rng.below(b.len() - tail);
            b[at] ^= 1 << rng.below(8);
        }
        cases.push((format!("nvtx-flip-{i}.sqlite"), b));
    }
    judge_all("damage near NVTX", cases);
}
