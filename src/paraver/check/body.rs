//! The .prv body, one line at a time (docs/paraver-format.md §0 and §3): field syntax, object ids,
//! times, state coverage per thread, events and states against the .pcf, global time order.
//! Memory is bounded by the objects and the distinct types/values; repeated faults of one kind are
//! aggregated (count + first line) instead of listed one by one.

use std::collections::BTreeMap;

use super::busy::RowShown;
use super::header::Header;
use super::pcf::{PcfInfo, PCF_INT_MAX};
use super::{CheckOptions, Problems, RowBusy, Stats};

/// Event values must stay exact as doubles in Paraver's semantic functions (§8).
const MAX_EVENT_VALUE: u64 = 1 << 53;
/// Per-value counts of an unlabelled type are dropped once it has this many distinct values.
const MAX_DISTINCT_NUMERIC_VALUES: usize = 4096;

/// A fault seen possibly many times: how often, and where first.
#[derive(Clone, Copy, Default)]
struct Seen {
    count: u64,
    first_line: u64,
    /// A value worth quoting from the first occurrence (a time, an event value...).
    first_value: u64,
}

impl Seen {
    fn note(&mut self, line: u64, value: u64) {
        if self.count == 0 {
            self.first_line = line;
            self.first_value = value;
        }
        self.count += 1;
    }
}

#[derive(Clone, Default)]
struct ThreadCov {
    name: (u64, u64, u64),
    /// Time the row shows a GPU operation (`prvsight check --against`).
    shown: RowShown,
    /// States of this thread cover [0, covered) (with gaps and overlaps noted below).
    covered: Option<u64>,
    gaps: Seen,
    overlaps: Seen,
}

pub(super) struct Body<'a> {
    header: Option<&'a Header>,
    pcf: &'a PcfInfo,
    opts: &'a CheckOptions,
    /// [appl][task] → (global index of its first thread, threads, node).
    tasks: Vec<Vec<(usize, u32, u32)>>,
    threads: Vec<ThreadCov>,
    last_time: u64,
    valid_records: u64,
    unsorted: Seen,
    beyond_end: Seen,
    undeclared_types: BTreeMap<u32, Seen>,
    undeclared_values: BTreeMap<u32, Seen>,
    undeclared_states: BTreeMap<u32, Seen>,
    fields: Vec<u64>,
}

impl<'a> Body<'a> {
    pub(super) fn new(
        header: Option<&'a Header>,
        pcf: &'a PcfInfo,
        opts: &'a CheckOptions,
    ) -> Self {
        let mut tasks = Vec::new();
        let mut threads = Vec::new();
        for (a, appl) in header
            .map(|h| h.appls.as_slice())
            .unwrap_or(&[])
            .iter()
            .enumerate()
        {
            let mut row = Vec::new();
            for (t, task) in appl.iter().enumerate() {
                row.push((threads.len(), task.threads, task.node));
                for th in 0..task.threads {
                    threads.push(ThreadCov {
                        name: (a as u64 + 1, t as u64 + 1, u64::from(th) + 1),
                        ..Default::default()
                    });
                }
            }
            tasks.push(row);
        }
        Body {
            header,
            pcf,
            opts,
            tasks,
            threads,
            last_time: 0,
            valid_records: 0,
            unsorted: Seen::default(),
            beyond_end: Seen::default(),
            undeclared_types: BTreeMap::new(),
            undeclared_values: BTreeMap::new(),
            undeclared_states: BTreeMap::new(),
            fields: Vec::with_capacity(32),
        }
    }

    /// Checks one body line (line ending already removed; `no` is its 1-based line number).
    pub(super) fn line(&mut self, line: &[u8], no: u64, stats: &mut Stats, p: &mut Problems) {
        match line.first() {
            None | Some(b'#') => return,
            Some(b'1' | b'2' | b'3') => {}
            Some(b'4') => {
                return p.push(|| {
                    format!("line {no}: global communication record '4:' (Paraver ignores it)")
                })
            }
            Some(_) => {
                return p.push(|| {
                    format!(
                        "line {no}: unknown record type in '{}'",
                        String::from_utf8_lossy(&line[..line.len().min(40)])
                    )
                })
            }
        }
        if let Err(e) = parse_fields(line, &mut self.fields) {
            return p.push(|| format!("line {no}: {e}"));
        }
        let f = std::mem::take(&mut self.fields);
        match f[0] {
            1 => self.state(&f, no, stats, p),
            2 => self.event(&f, no, stats, p),
            3 => self.comm(&f, no, stats, p),
            other => p.push(|| format!("line {no}: unknown record type {other}")),
        }
        self.fields = f;
    }

    /// The global thread index of (appl, task, thread), checking the CPU field too; `None` when
    /// the header was unreadable (its problem is reported once, not on every record).
    fn locate(&self, cpu: u64, appl: u64, task: u64, thread: u64) -> Result<Option<usize>, String> {
        let Some(h) = self.header else {
            return Ok(None);
        };
        let Some(&(first, nthreads, node)) = appl
            .checked_sub(1)
            .and_then(|a| self.tasks.get(a as usize))
            .and_then(|ts| task.checked_sub(1).and_then(|t| ts.get(t as usize)))
        else {
            return Err(format!(
                "task {appl}.{task} is not declared in the header (ids are 1-based)"
            ));
        };
        if thread == 0 || thread > u64::from(nthreads) {
            return Err(format!(
                "thread {appl}.{task}.{thread} is not declared in the header (task {appl}.{task} has {nthreads})"
            ));
        }
        if cpu != 0 {
            match h.node_of_cpu(cpu) {
                None => {
                    return Err(format!(
                        "CPU {cpu} does not exist (the header declares {}; use 0 for none)",
                        h.total_cpus()
                    ))
                }
                Some(n) if n != node => {
                    return Err(format!(
                        "CPU {cpu} is on node {n} but task {appl}.{task} is on node {node}"
                    ))
                }
                Some(_) => {}
            }
        }
        Ok(Some(first + (thread - 1) as usize))
    }

    fn ftime(&self) -> Option<u64> {
        self.header.map(|h| h.ftime)
    }

    /// Common to all records: order by the first time field, and times within [0, FTIME].
    fn times(&mut self, first: u64, latest: u64, no: u64) {
        if first < self.last_time {
            self.unsorted.note(no, first);
        }
        self.last_time = self.last_time.max(first);
        if let Some(end) = self.ftime() {
            if latest > end {
                self.beyond_end.note(no, latest);
            }
        }
    }

    fn state(&mut self, f: &[u64], no: u64, stats: &mut Stats, p: &mut Problems) {
        if f.len() != 8 {
            return p.push(|| {
                format!(
                    "line {no}: a state record has 8 fields (1:cpu:appl:task:thread:begin:end:state), found {}",
                    f.len()
                )
            });
        }
        let (begin, end, state) = (f[5], f[6], f[7]);
        let idx = match self.locate(f[1], f[2], f[3], f[4]) {
            Ok(i) => i,
            Err(e) => return p.push(|| format!("line {no}: {e}")),
        };
        if begin > end {
            return p.push(|| format!("line {no}: state begins at {begin} after its end {end}"));
        }
        if state > PCF_INT_MAX {
            return p.push(|| format!("line {no}: state {state} exceeds 2^31-1"));
        }
        self.valid_records += 1;
        stats.state_records += 1;
        *stats.states.entry(state as u32).or_insert(0) += 1;
        if !self.pcf.states.contains_key(&(state as u32)) {
            self.undeclared_states
                .entry(state as u32)
                .or_default()
                .note(no, 0);
        }
        self.times(begin, end, no);
        let Some(idx) = idx else { return };
        let tc = &mut self.threads[idx];
        let covered = tc.covered.unwrap_or(0);
        if begin > covered {
            tc.gaps.note(no, covered);
        } else if begin < covered {
            tc.overlaps.note(no, begin);
        }
        tc.covered = Some(covered.max(end));
    }

    fn event(&mut self, f: &[u64], no: u64, stats: &mut Stats, p: &mut Problems) {
        if f.len() < 8 || f.len() % 2 != 0 {
            return p.push(|| {
                format!(
                    "line {no}: an event record is 2:cpu:appl:task:thread:time followed by type:value pairs; found {} field(s){}",
                    f.len(),
                    if f.len() >= 8 { " (an odd number after the time)" } else { "" }
                )
            });
        }
        let idx = match self.locate(f[1], f[2], f[3], f[4]) {
            Ok(i) => i,
            Err(e) => return p.push(|| format!("line {no}: {e}")),
        };
        for pair in f[6..].chunks_exact(2) {
            let (ty, value) = (pair[0], pair[1]);
            if ty > PCF_INT_MAX {
                return p.push(|| {
                    format!("line {no}: event type {ty} exceeds 2^31-1 (a .pcf cannot label it)")
                });
            }
            if value > MAX_EVENT_VALUE {
                return p.push(|| {
                    format!("line {no}: event value {value} of type {ty} exceeds 2^53 (not exact in Paraver)")
                });
            }
        }
        self.valid_records += 1;
        stats.event_records += 1;
        self.times(f[5], f[5], no);
        for pair in f[6..].chunks_exact(2) {
            let (ty, value) = (pair[0] as u32, pair[1]);
            if let Some(i) = idx {
                self.threads[i].shown.note(ty, value, f[5]);
            }
            stats.event_pairs += 1;
            *stats.event_types.entry(ty).or_insert(0) += 1;
            if value != 0 {
                *stats.nonzero_events.entry(ty).or_insert(0) += 1;
            }
            match self.pcf.types.get(&ty) {
                None => self.undeclared_types.entry(ty).or_default().note(no, value),
                Some(decl) => match &decl.values {
                    Some(labels) if value != 0 && !labels.contains_key(&value) => self
                        .undeclared_values
                        .entry(ty)
                        .or_default()
                        .note(no, value),
                    // Labelled values are bounded by the pcf: always counted.
                    Some(_) => count_value(stats, ty, value, usize::MAX),
                    None => count_value(stats, ty, value, MAX_DISTINCT_NUMERIC_VALUES),
                },
            }
        }
    }

    fn comm(&mut self, f: &[u64], no: u64, stats: &mut Stats, p: &mut Problems) {
        if f.len() != 15 {
            return p.push(|| {
                format!(
                    "line {no}: a communication record has 15 fields, found {}",
                    f.len()
                )
            });
        }
        if let Err(e) = self.locate(f[1], f[2], f[3], f[4]) {
            return p.push(|| format!("line {no}: sender: {e}"));
        }
        if let Err(e) = self.locate(f[7], f[8], f[9], f[10]) {
            return p.push(|| format!("line {no}: receiver: {e}"));
        }
        self.valid_records += 1;
        stats.comm_records += 1;
        *stats.comm_tags.entry(f[14]).or_insert(0) += 1;
        let latest = f[5].max(f[6]).max(f[11]).max(f[12]);
        self.times(f[5], latest, no);
    }

    /// Problems that can only be judged once the whole body has been read; the time each row
    /// showed a GPU operation goes to `stats`.
    pub(super) fn finish(self, stats: &mut Stats, p: &mut Problems) {
        let end = self.ftime().unwrap_or(self.last_time);
        for t in &self.threads {
            let (kernel_ns, memory_ns) = t.shown.totals(end);
            if kernel_ns > 0 || memory_ns > 0 {
                stats.row_busy.push(RowBusy {
                    task: t.name.1,
                    thread: t.name.2,
                    kernel_ns,
                    memory_ns,
                });
            }
        }
        if self.header.is_some() && self.valid_records == 0 {
            p.push(|| "the body has no valid record (Paraver refuses to load it)".into());
        }
        if self.unsorted.count > 0 {
            let s = self.unsorted;
            p.push(|| {
                format!(
                    "{} record(s) start earlier than a record above them (body not sorted by time), first at line {} (time {})",
                    s.count, s.first_line, s.first_value
                )
            });
        }
        if self.beyond_end.count > 0 {
            let (s, end) = (self.beyond_end, self.ftime().unwrap_or(0));
            p.push(|| {
                format!(
                    "{} record(s) reach past the header's end time {end}, first at line {} (time {})",
                    s.count, s.first_line, s.first_value
                )
            });
        }
        for (ty, s) in &self.undeclared_types {
            let hint = misplaced_type_hint(self.pcf, *ty);
            p.push(|| {
                format!(
                    "event type {ty} is not declared in the .pcf ({} occurrence(s), first at line {}){hint}",
                    s.count, s.first_line
                )
            });
        }
        for (ty, s) in &self.undeclared_values {
            p.push(|| {
                format!(
                    "event type {ty}: {} value occurrence(s) have no label in the .pcf VALUES, first at line {} (value {})",
                    s.count, s.first_line, s.first_value
                )
            });
        }
        for (st, s) in &self.undeclared_states {
            p.push(|| {
                format!(
                    "state {st} is not declared in the .pcf STATES ({} record(s), first at line {})",
                    s.count, s.first_line
                )
            });
        }
        let end = self.ftime();
        for tc in &self.threads {
            let (a, t, h) = tc.name;
            if tc.overlaps.count > 0 {
                let s = tc.overlaps;
                p.push(|| {
                    format!(
                        "thread {a}.{t}.{h}: {} state(s) overlap the previous one, first at line {} (begin {})",
                        s.count, s.first_line, s.first_value
                    )
                });
            }
            if !self.opts.require_full_state_coverage {
                continue;
            }
            if tc.gaps.count > 0 {
                let s = tc.gaps;
                p.push(|| {
                    format!(
                        "thread {a}.{t}.{h}: {} gap(s) between states, first at line {} (no state from {})",
                        s.count, s.first_line, s.first_value
                    )
                });
            }
            match (tc.covered, end) {
                (None, _) => p.push(|| format!("thread {a}.{t}.{h}: no state record")),
                (Some(c), Some(e)) if c < e => p.push(|| {
                    format!("thread {a}.{t}.{h}: states end at {c}, before the trace end {e}")
                }),
                _ => {}
            }
        }
    }
}

fn count_value(stats: &mut Stats, ty: u32, value: u64, cap: usize) {
    if stats.values_truncated.contains(&ty) {
        return;
    }
    let m = stats.values.entry(ty).or_default();
    if m.len() >= cap && !m.contains_key(&value) {
        stats.values.remove(&ty);
        stats.values_truncated.insert(ty);
        return;
    }
    *m.entry(value).or_insert(0) += 1;
}

/// A type line written after a VALUES list is read as a value whose label starts with the type.
fn misplaced_type_hint(pcf: &PcfInfo, ty: u32) -> String {
    let prefix = format!("{ty} ");
    for (owner, decl) in &pcf.types {
        if let Some((v, _)) = decl
            .values
            .iter()
            .flatten()
            .find(|(_, l)| l.starts_with(&prefix))
        {
            return format!(
                "; it appears as value {v} of type {owner}: a type line after VALUES needs its own EVENT_TYPE block"
            );
        }
    }
    String::new()
}

/// Splits a record into unsigned integers; any other content is a problem (§0.2).
fn parse_fields(line: &[u8], out: &mut Vec<u64>) -> Result<(), String> {
    out.clear();
    if line.last() == Some(&b':') {
        return Err("trailing ':' (Paraver reads an extra empty field)".into());
    }
    for (k, field) in line.split(|&b| b == b':').enumerate() {
        if field.is_empty() {
            return Err(format!("field {} is empty", k + 1));
        }
        if !field.iter().all(u8::is_ascii_digit) {
            return Err(format!(
                "field {} ('{}') is not an unsigned integer",
                k + 1,
                String::from_utf8_lossy(&field[..field.len().min(24)])
            ));
        }
        let mut v: u64 = 0;
        for &d in field {
            v = v
                .checked_mul(10)
                .and_then(|v| v.checked_add(u64::from(d - b'0')))
                .ok_or_else(|| format!("field {} does not fit in 64 bits", k + 1))?;
        }
        out.push(v);
    }
    Ok(())
}
