//! The .prv header line, parsed to the strict grammar of docs/paraver-format.md §0.1:
//! `#Paraver (DD/MM/YYYY at HH:MM):FTIME_ns:NODES(CPUS,…):NAPPL:NTASKS(THREADS:NODE,…)…,NCOMM`.
//! Anything Paraver would read differently (or not at all) is a problem; the object model is kept
//! whenever it could be read, so the body can still be checked against it.

use serde::Serialize;

/// Paraver stores object indices in 16 bits unless built with extended objects (§8).
pub const MAX_OBJECTS_PER_LEVEL: u64 = 65_535;

/// One task as declared in the header.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TaskDecl {
    pub threads: u32,
    /// 1-based node; 0 is only meaningful without a resource model.
    pub node: u32,
}

/// The object model and end time declared by the header.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Header {
    pub date: String,
    /// Trace end time in nanoseconds.
    pub ftime: u64,
    /// CPUs per node; empty when RESOURCES is `0` (no resource model).
    pub nodes: Vec<u32>,
    /// Tasks of each application.
    pub appls: Vec<Vec<TaskDecl>>,
    /// Number of communicator lines after the header.
    pub ncomm: u32,
}

impl Header {
    pub fn total_cpus(&self) -> u64 {
        self.nodes.iter().map(|&c| u64::from(c)).sum()
    }
    pub fn total_tasks(&self) -> u64 {
        self.appls.iter().map(|a| a.len() as u64).sum()
    }
    pub fn total_threads(&self) -> u64 {
        self.appls
            .iter()
            .flatten()
            .map(|t| u64::from(t.threads))
            .sum()
    }
    /// 1-based node of a 1-based global CPU, if that CPU exists.
    pub fn node_of_cpu(&self, cpu: u64) -> Option<u32> {
        let mut first = 1u64;
        for (i, &n) in self.nodes.iter().enumerate() {
            let next = first + u64::from(n);
            if cpu >= first && cpu < next {
                return Some(i as u32 + 1);
            }
            first = next;
        }
        None
    }
}

/// A cursor over the header bytes with error messages that say where parsing stopped.
struct Cursor<'a> {
    s: &'a str,
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn rest(&self) -> &'a str {
        &self.s[self.pos..]
    }
    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }
    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += c.len_utf8();
            true
        } else {
            false
        }
    }
    fn expect(&mut self, c: char, what: &str) -> Result<(), String> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(format!(
                "header: expected '{c}' {what} at column {}, found {}",
                self.pos + 1,
                self.found()
            ))
        }
    }
    fn found(&self) -> String {
        match self.peek() {
            Some(c) => format!("'{c}'"),
            None => "the end of the line".into(),
        }
    }
    /// An unsigned decimal integer (digits only: no sign, no decimals).
    fn number(&mut self, what: &str) -> Result<u64, String> {
        let digits = self.rest().bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return Err(format!(
                "header: expected {what} (an unsigned integer) at column {}, found {}",
                self.pos + 1,
                self.found()
            ));
        }
        let text = &self.rest()[..digits];
        self.pos += digits;
        text.parse::<u64>()
            .map_err(|_| format!("header: {what} {text} does not fit in 64 bits"))
    }
}

/// Checks `DD/MM/YYYY at HH:MM` (Extrae's `strftime` format; §0.1).
fn check_date(date: &str) -> Result<(), String> {
    let bad = || format!("header: date '{date}' is not 'DD/MM/YYYY at HH:MM'");
    // Bytes, not str slices: a non-ASCII date must be a problem, not a panic.
    let b = date.as_bytes();
    if b.len() != 19 || &b[10..14] != b" at " || b[2] != b'/' || b[5] != b'/' || b[16] != b':' {
        return Err(bad());
    }
    let num = |r: std::ops::Range<usize>| -> Result<u32, String> {
        b[r].iter().try_fold(0u32, |acc, &c| {
            if c.is_ascii_digit() {
                Ok(acc * 10 + u32::from(c - b'0'))
            } else {
                Err(bad())
            }
        })
    };
    let (d, m, h, min) = (num(0..2)?, num(3..5)?, num(14..16)?, num(17..19)?);
    num(6..10)?;
    if !(1..=31).contains(&d) || !(1..=12).contains(&m) || h > 23 || min > 59 {
        return Err(format!("header: date '{date}' has an out-of-range field"));
    }
    Ok(())
}

fn small(v: u64, what: &str, problems: &mut Vec<String>) -> u32 {
    if v > MAX_OBJECTS_PER_LEVEL {
        problems.push(format!(
            "header: {what} {v} exceeds {MAX_OBJECTS_PER_LEVEL}, Paraver's limit per level"
        ));
    }
    v.min(u64::from(u32::MAX)) as u32
}

/// Parses the header line (without its line ending). Returns the model when it could be read at
/// all, plus every problem found; `None` means the body cannot be checked against objects.
pub fn parse(line: &str) -> (Option<Header>, Vec<String>) {
    let mut problems = Vec::new();
    match parse_inner(line, &mut problems) {
        Ok(h) => (Some(h), problems),
        Err(e) => {
            problems.push(e);
            (None, problems)
        }
    }
}

/// Long: the header's fields one after another, left to right, as Paraver reads them.
fn parse_inner(line: &str, problems: &mut Vec<String>) -> Result<Header, String> {
    let Some(after) = line.strip_prefix("#Paraver (") else {
        return Err(format!(
            "header: the first line must start with '#Paraver (' (found '{}')",
            line.chars().take(20).collect::<String>()
        ));
    };
    let Some(close) = after.find(')') else {
        return Err("header: the date has no closing ')'".into());
    };
    let date = &after[..close];
    if let Err(e) = check_date(date) {
        problems.push(e);
    }
    let mut c = Cursor {
        s: line,
        pos: "#Paraver (".len() + close + 1,
    };
    c.expect(':', "after the date")?;
    let ftime = c.number("the trace end time")?;
    if c.eat('_') {
        let unit: String = c
            .rest()
            .chars()
            .take_while(|ch| ch.is_ascii_alphabetic())
            .collect();
        c.pos += unit.len();
        if unit != "ns" {
            problems.push(format!(
                "header: time unit '_{unit}' (only '_ns' is allowed; Paraver reads anything else as microseconds)"
            ));
        }
    } else {
        problems.push(
            "header: the end time has no '_ns' unit, so Paraver reads it as microseconds".into(),
        );
    }
    c.expect(':', "after the end time")?;

    // RESOURCES: `0` or `N(c1,…,cN)`.
    let nnodes = c.number("the number of nodes")?;
    let mut nodes = Vec::new();
    if nnodes > 0 {
        c.expect('(', "after the number of nodes (CPUs per node)")?;
        loop {
            let cpus = c.number("a node's CPU count")?;
            if cpus == 0 {
                problems.push(format!("header: node {} has 0 CPUs", nodes.len() + 1));
            }
            nodes.push(small(cpus, "CPU count", problems));
            if !c.eat(',') {
                break;
            }
        }
        c.expect(')', "closing the CPUs per node")?;
        if nodes.len() as u64 != nnodes {
            problems.push(format!(
                "header: {nnodes} node(s) declared but {} CPU count(s) given",
                nodes.len()
            ));
        }
        small(nnodes, "node count", problems);
        small(
            nodes.iter().map(|&n| u64::from(n)).sum(),
            "total CPU count",
            problems,
        );
    }
    c.expect(':', "after the resources")?;

    let nappl = c.number("the number of applications")?;
    if nappl == 0 {
        return Err("header: 0 applications (Paraver refuses the trace)".into());
    }
    small(nappl, "application count", problems);
    c.expect(':', "after the number of applications")?;
    let mut appls = Vec::new();
    for a in 1..=nappl {
        if a > 1 && !(c.eat(':') || c.eat(',')) {
            return Err(format!(
                "header: {nappl} applications declared but only {} given",
                a - 1
            ));
        }
        let ntasks = c.number("a task count")?;
        if ntasks == 0 {
            return Err(format!("header: application {a} has 0 tasks"));
        }
        c.expect('(', "after the task count")?;
        let mut tasks = Vec::new();
        loop {
            let threads = c.number("a thread count")?;
            if threads == 0 {
                return Err(format!(
                    "header: task {}.{} has 0 threads",
                    a,
                    tasks.len() + 1
                ));
            }
            c.expect(':', "between a task's thread count and its node")?;
            let node = c.number("a task's node")?;
            if !nodes.is_empty() && (node == 0 || node > nodes.len() as u64) {
                // Paraver loops forever on a task placed on a node that does not exist (§11).
                problems.push(format!(
                    "header: task {}.{} is on node {node}, but the header declares {} node(s)",
                    a,
                    tasks.len() + 1,
                    nodes.len()
                ));
            }
            tasks.push(TaskDecl {
                threads: small(threads, "thread count", problems),
                node: node.min(u64::from(u32::MAX)) as u32,
            });
            if !c.eat(',') {
                break;
            }
        }
        c.expect(')', "closing the task list")?;
        if tasks.len() as u64 != ntasks {
            problems.push(format!(
                "header: application {a} declares {ntasks} task(s) but lists {}",
                tasks.len()
            ));
        }
        appls.push(tasks);
    }
    let ncomm = if c.eat(',') {
        c.number("the number of communicators")?
    } else {
        problems.push(
            "header: no ',NCOMM' communicator count after the applications (write ',0' as Extrae does)"
                .into(),
        );
        0
    };
    if c.pos != line.len() {
        return Err(format!(
            "header: unexpected text '{}' at column {}",
            c.rest(),
            c.pos + 1
        ));
    }
    let h = Header {
        date: date.to_owned(),
        ftime,
        nodes,
        appls,
        ncomm: ncomm.min(u64::from(u32::MAX)) as u32,
    };
    small(h.total_tasks(), "total task count", problems);
    small(h.total_threads(), "total thread count", problems);
    Ok(h)
}
