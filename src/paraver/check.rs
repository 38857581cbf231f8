//! Paraver trace checker: the rules of docs/paraver-format.md §0 applied to a .prv (or .prv.gz)
//! with its .pcf and .row, in one streaming pass. Used by the tests on every converted trace and
//! offered to users as `prvsight check TRACE.prv`.
//!
//! The core, [`check_readers`], takes a reader and two strings so it also runs in the browser;
//! [`check_files`] finds and opens the three files natively.

mod body;
mod busy;
mod header;
mod pcf;
mod row;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::io::BufRead;

use serde::Serialize;

pub(crate) use header::parse as parse_header;
pub use header::{Header, TaskDecl, MAX_OBJECTS_PER_LEVEL};
pub(crate) use pcf::parse as parse_pcf;
pub use pcf::{PcfInfo, PcfType, PCF_INT_MAX};

/// What to enforce beyond the format itself.
#[derive(Clone, Debug)]
pub struct CheckOptions {
    /// Every thread's states must cover [0, FTIME] without gaps (prvsight writes traces this way;
    /// Paraver itself only needs non-overlapping states).
    pub require_full_state_coverage: bool,
    /// Problems kept in the report; the rest are only counted, so huge bad traces stay cheap.
    pub max_problems: usize,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            require_full_state_coverage: true,
            max_problems: 50,
        }
    }
}

/// Counts gathered while checking (records that failed a check are not counted).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Stats {
    pub state_records: u64,
    /// Event lines; one line may carry several type:value pairs.
    pub event_records: u64,
    pub event_pairs: u64,
    pub comm_records: u64,
    /// State → records.
    pub states: BTreeMap<u32, u64>,
    /// Event type → occurrences (any value, 0 included).
    pub event_types: BTreeMap<u32, u64>,
    /// Event type → occurrences with a nonzero value (= interval begins for region types).
    pub nonzero_events: BTreeMap<u32, u64>,
    /// Event type → value → occurrences. Types without pcf VALUES are dropped from here once they
    /// reach 4096 distinct values (then listed in `values_truncated`).
    pub values: BTreeMap<u32, BTreeMap<u64, u64>>,
    pub values_truncated: BTreeSet<u32>,
    /// Communication tag → records.
    pub comm_tags: BTreeMap<u64, u64>,
    /// Rows that show a GPU operation, in header order.
    pub row_busy: Vec<RowBusy>,
}

/// How long one row shows a GPU operation: a kernel (compute, NCCL, graph replay: a non-zero
/// 63000006/7/8 value) or a memory operation (63000001).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RowBusy {
    /// Task and thread, 1-based (application 1).
    pub task: u64,
    pub thread: u64,
    pub kernel_ns: u64,
    pub memory_ns: u64,
}

/// The outcome of a check: problems (capped) plus what the trace holds.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Report {
    pub problems: Vec<String>,
    /// Problems found beyond `max_problems` (counted, not kept).
    pub problems_not_shown: u64,
    /// The header's object model, when the header could be read.
    pub header: Option<Header>,
    /// What the .pcf declares (as Paraver loads it).
    pub pcf: PcfInfo,
    pub stats: Stats,
}

impl Report {
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty() && self.problems_not_shown == 0
    }
    /// Total number of problems found, shown or not.
    pub fn problem_count(&self) -> u64 {
        self.problems.len() as u64 + self.problems_not_shown
    }
    pub fn ftime(&self) -> u64 {
        self.header.as_ref().map_or(0, |h| h.ftime)
    }
    pub fn appls(&self) -> usize {
        self.header.as_ref().map_or(0, |h| h.appls.len())
    }
    pub fn tasks(&self) -> u64 {
        self.header.as_ref().map_or(0, Header::total_tasks)
    }
    pub fn threads(&self) -> u64 {
        self.header.as_ref().map_or(0, Header::total_threads)
    }
    pub fn nodes(&self) -> usize {
        self.header.as_ref().map_or(0, |h| h.nodes.len())
    }
    pub fn cpus(&self) -> u64 {
        self.header.as_ref().map_or(0, Header::total_cpus)
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.header.is_some() {
            writeln!(
                f,
                "trace: end {} ns; {} application(s), {} task(s), {} thread(s); {} node(s), {} CPU(s)",
                self.ftime(),
                self.appls(),
                self.tasks(),
                self.threads(),
                self.nodes(),
                self.cpus()
            )?;
        }
        let s = &self.stats;
        writeln!(
            f,
            "records: {} state, {} event ({} type:value pairs, {} types), {} communication",
            s.state_records,
            s.event_records,
            s.event_pairs,
            s.event_types.len(),
            s.comm_records
        )?;
        if self.is_ok() {
            return write!(f, "OK: no problem found");
        }
        write!(f, "{} problem(s):", self.problem_count())?;
        for p in &self.problems {
            write!(f, "\n  - {p}")?;
        }
        if self.problems_not_shown > 0 {
            write!(f, "\n  ... and {} more", self.problems_not_shown)?;
        }
        Ok(())
    }
}

/// Problem list with a cap; messages are built only when they will be kept.
pub(crate) struct Problems {
    list: Vec<String>,
    not_shown: u64,
    cap: usize,
}

impl Problems {
    fn new(cap: usize) -> Self {
        Problems {
            list: Vec::new(),
            not_shown: 0,
            cap,
        }
    }
    fn push(&mut self, message: impl FnOnce() -> String) {
        if self.list.len() < self.cap {
            self.list.push(message());
        } else {
            self.not_shown += 1;
        }
    }
    fn extend(&mut self, messages: Vec<String>) {
        for m in messages {
            self.push(|| m);
        }
    }
}

/// Checks a trace given its body reader (decompressed), .pcf text and .row text.
pub fn check_readers(mut prv: impl BufRead, pcf: &str, row: &str, opts: &CheckOptions) -> Report {
    let mut problems = Problems::new(opts.max_problems);
    let mut buf = Vec::with_capacity(256);
    let mut line_no: u64 = 0;
    // Reads the next line without its ending; `None` at the end or on a read error.
    let mut next_line = |buf: &mut Vec<u8>, problems: &mut Problems, line_no: &mut u64| {
        buf.clear();
        match prv.read_until(b'\n', buf) {
            Ok(0) => false,
            Ok(_) => {
                *line_no += 1;
                if buf.last() == Some(&b'\n') {
                    buf.pop();
                }
                if buf.last() == Some(&b'\r') {
                    buf.pop();
                }
                true
            }
            Err(e) => {
                let at = *line_no + 1;
                problems.push(|| format!("reading the trace failed at line {at}: {e}"));
                false
            }
        }
    };

    let (header, header_problems) = if next_line(&mut buf, &mut problems, &mut line_no) {
        header::parse(&String::from_utf8_lossy(&buf))
    } else {
        (None, vec!["the trace is empty (no header line)".to_owned()])
    };
    problems.extend(header_problems);
    let (pcf_info, pcf_problems) = pcf::parse(pcf);
    problems.extend(pcf_problems);
    problems.extend(row::check(row, header.as_ref()));

    // Communicator lines follow the header; Paraver refuses any other first character.
    for k in 0..header.as_ref().map_or(0, |h| h.ncomm) {
        if !next_line(&mut buf, &mut problems, &mut line_no) {
            problems.push(|| {
                format!(
                    "the header announces {} communicator line(s), the file has {k}",
                    k
                )
            });
            break;
        }
        if !matches!(buf.first(), Some(b'c' | b'C' | b'i' | b'I')) {
            let no = line_no;
            problems.push(|| {
                format!("line {no}: communicator lines start with 'c' or 'i' (Paraver refuses the trace)")
            });
        }
    }

    let mut stats = Stats::default();
    let mut body = body::Body::new(header.as_ref(), &pcf_info, opts);
    while next_line(&mut buf, &mut problems, &mut line_no) {
        body.line(&buf, line_no, &mut stats, &mut problems);
    }
    body.finish(&mut stats, &mut problems);

    Report {
        problems: problems.list,
        problems_not_shown: problems.not_shown,
        header,
        pcf: pcf_info,
        stats,
    }
}

/// NAME.pcf and NAME.row beside NAME.prv or NAME.prv.gz (Paraver's own naming rule, §1).
pub fn companion_names(trace: &str) -> Option<(String, String, bool)> {
    let (stem, gz) = if let Some(s) = trace.strip_suffix(".prv.gz") {
        (s, true)
    } else if let Some(s) = trace.strip_suffix(".prv") {
        (s, false)
    } else {
        return None;
    };
    Some((format!("{stem}.pcf"), format!("{stem}.row"), gz))
}

/// Checks NAME.prv or NAME.prv.gz with the .pcf and .row beside it, with default options.
#[cfg(not(target_family = "wasm"))]
pub fn check_files(trace: &std::path::Path) -> crate::Result<Report> {
    check_files_with(trace, &CheckOptions::default())
}

/// Checks NAME.prv or NAME.prv.gz with the .pcf and .row beside it. A missing .pcf or .row is a
/// problem in the report (Paraver loads without them, but our rules need their declarations).
#[cfg(not(target_family = "wasm"))]
pub fn check_files_with(trace: &std::path::Path, opts: &CheckOptions) -> crate::Result<Report> {
    use crate::Error;
    use std::fs::File;
    use std::io::BufReader;

    let name = trace.to_string_lossy().to_string();
    let Some((pcf_path, row_path, gz)) = companion_names(&name) else {
        return Err(Error::Usage(format!(
            "'{name}' is not a Paraver trace name: it must end in .prv or .prv.gz"
        )));
    };
    let file = File::open(trace).map_err(|e| Error::Unreadable {
        file: name.clone(),
        detail: e.to_string(),
    })?;
    let mut missing = Vec::new();
    let mut companion = |path: &str| match std::fs::read(path) {
        Ok(bytes) => Ok(String::from_utf8_lossy(&bytes).into_owned()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            missing.push(format!("{path} is missing"));
            Ok(String::new())
        }
        Err(e) => Err(Error::Unreadable {
            file: path.to_owned(),
            detail: e.to_string(),
        }),
    };
    let pcf = companion(&pcf_path)?;
    let row = companion(&row_path)?;
    let mut report = if gz {
        let dec = flate2::read::MultiGzDecoder::new(BufReader::with_capacity(1 << 20, file));
        check_readers(BufReader::with_capacity(1 << 20, dec), &pcf, &row, opts)
    } else {
        check_readers(BufReader::with_capacity(1 << 20, file), &pcf, &row, opts)
    };
    // Missing companions explain every later problem, so they go first.
    report.problems.splice(0..0, missing);
    Ok(report)
}
