//! The .prv writer.
//!
//! Order: every record is written at its first time field (state begin, event time, send time) in
//! non-decreasing order, as Paraver's cutter and filters require. Records arrive at their start
//! with their end known; everything that happens later (an interval's end events, the idle or
//! running state after it) goes into a small queue keyed by time (pending.rs) and is written once
//! the stream reaches that time. The queue holds only open intervals and one pending state per
//! thread, so memory does not grow with the trace.
//!
//! States per thread cover [0, end] without overlap: GPU streams are Idle between operations,
//! host threads Running between traced calls. The gap after an operation needs the start of the
//! next one on the same resource; the readers deliver it with each record (`next_on_*`).

use crate::FastMap;
use std::collections::BTreeMap;
use std::io::Write;

use super::events::*;
use super::line::{push_u64, LinePrefix, Stamps, TypeText};
use super::open_regions::OpenRegions;
use super::pending::{Pending, PendingQueue};
use super::states;
use super::window::{Cut, Window};
use super::written::{Tally, Written};
use crate::error::{Error, Result};
use crate::model::*;
use crate::options::Family;

/// Paraver reads event values into doubles: above 2^53 they are no longer exact, and the checker
/// (like `ptd comprovar`) refuses them. Absurd values (a memcpy of 2^63 bytes) are capped here.
const MAX_EVENT_VALUE: u64 = 1 << 53;

/// Body lines are gathered and handed to the .prv output this many bytes at a time: two calls
/// through `dyn Write` per line cost more than formatting the line when the output is a gzip
/// encoder.
const OUT_CHUNK: usize = 64 * 1024;
/// Line buffers of written pending lines kept for reuse (one allocation less per interval).
const SPARE_LINES: usize = 4096;

mod payloads;
mod records;
mod used_types;

pub use records::metric_type;
pub use used_types::ValueLabels;
pub(crate) use used_types::{SeenValues, UsedType, UsedTypes};

/// Per-thread state bookkeeping.
#[derive(Clone, Default)]
struct ThreadState {
    /// States are written (or pending) up to this time.
    covered: Ns,
    /// End of the current run of overlapping operations, and the state it shows.
    island_end: Ns,
    island_state: u32,
    /// Ends of open push/pop NVTX ranges per domain (for nesting levels).
    nvtx_open: BTreeMap<u32, Vec<Ns>>,
    /// Open NCCL-domain ranges: (end, payload pairs), for attaching payloads to kernels.
    nccl_open: Vec<(Ns, Vec<(u32, u64)>)>,
}

pub struct ParaverWriter<'w> {
    prv: Box<dyn Write + 'w>,
    pcf: Box<dyn Write + 'w>,
    row: Box<dyn Write + 'w>,
    /// (task, thread) per model thread, 1-based.
    ids: Vec<(u32, u32)>,
    /// Per model thread: `2:0:1:task:thread:` and `1:0:1:task:thread:`, the start of its event
    /// and state lines.
    event_prefix: Vec<LinePrefix>,
    state_prefix: Vec<LinePrefix>,
    threads: Vec<ThreadState>,
    /// Per model thread, the regions still open on it (for rows whose records overlap).
    regions: Vec<OpenRegions>,
    idle_by_default: Vec<bool>,
    /// Process of every thread (correlation ids are per process).
    process_of: Vec<usize>,
    /// Event type of each GPU metric → its name.
    pub(crate) metric_labels: BTreeMap<u32, NameId>,
    /// Cut to a time window, if asked (see window.rs).
    window: Option<Window>,
    /// Regions shorter than this per family write no events.
    min_duration: BTreeMap<Family, Ns>,
    /// NCCL payloads waiting for the kernel their launch call caused: (process, correlation id).
    nccl_pending: FastMap<(usize, u64), Vec<(u32, u64)>>,
    /// NCCL facts parsed from kernel names, per name.
    nccl_names: FastMap<NameId, Option<crate::model::nccl::NcclKernelInfo>>,
    end_time: Ns,
    pending: PendingQueue,
    /// The bytes of the pending lines, by slot; the slots free for reuse.
    waiting: Vec<Vec<u8>>,
    free_slots: Vec<u32>,
    seq: u64,
    /// The timestamps formatted last (see [`Stamps`]).
    stamps: Stamps,
    /// The event types written so far.
    pub(crate) used_types: UsedTypes,
    /// The rest of what [`Self::written`] reports.
    tally: Tally,
    /// NVTX domain index → push/pop base type.
    domain_types: Vec<u32>,
    pub(crate) domain_names: Vec<String>,
    /// The config's NVTX payload fields (`--nvtx-config`), as the output cut gave it.
    payload_config: Option<crate::nvtx_config::NvtxConfig>,
    pub(crate) payloads: payloads::NvtxPayloads,
    lines_written: u64,
    /// Body lines not yet handed to `prv` (see [`OUT_CHUNK`]).
    out: Vec<u8>,
    /// The line being built (reused for every line written at once).
    line: Vec<u8>,
    /// Buffers of pending lines already written, reused by [`Self::schedule`]d lines.
    spare: Vec<Vec<u8>>,
    /// An interval's event pairs and their labels, built per record (kept to reuse).
    pairs: Vec<(u32, u64)>,
    labels: Vec<ValueLabels>,
}

impl<'w> ParaverWriter<'w> {
    /// A writer of the three files; pcf and row are written when the stream ends.
    pub fn new(
        prv: Box<dyn Write + 'w>,
        pcf: Box<dyn Write + 'w>,
        row: Box<dyn Write + 'w>,
    ) -> Self {
        ParaverWriter {
            prv,
            pcf,
            row,
            ids: Vec::new(),
            event_prefix: Vec::new(),
            state_prefix: Vec::new(),
            threads: Vec::new(),
            regions: Vec::new(),
            idle_by_default: Vec::new(),
            process_of: Vec::new(),
            metric_labels: BTreeMap::new(),
            window: None,
            min_duration: BTreeMap::new(),
            nccl_pending: FastMap::default(),
            nccl_names: FastMap::default(),
            end_time: 0,
            pending: PendingQueue::default(),
            waiting: Vec::new(),
            free_slots: Vec::new(),
            seq: 0,
            stamps: Stamps::default(),
            used_types: UsedTypes::default(),
            tally: Tally::default(),
            domain_types: Vec::new(),
            domain_names: Vec::new(),
            payload_config: None,
            payloads: Default::default(),
            lines_written: 0,
            out: Vec::with_capacity(OUT_CHUNK + 256),
            line: Vec::new(),
            spare: Vec::new(),
            pairs: Vec::new(),
            labels: Vec::new(),
        }
    }

    /// Number of body lines written (records).
    pub fn lines_written(&self) -> u64 {
        self.lines_written
    }

    fn write_line(&mut self, line: &[u8]) -> Result<()> {
        if let Some(w) = self.window.as_mut() {
            let line = std::str::from_utf8(line).expect("the writer's lines are ASCII");
            match w.cut(line) {
                Cut::Drop => return Ok(()),
                Cut::Keep(l) => return self.write_raw(l.as_bytes()),
                Cut::OpenThenKeep(pre, l) => {
                    for p in pre {
                        self.write_raw(p.as_bytes())?;
                    }
                    return self.write_raw(l.as_bytes());
                }
            }
        }
        self.write_raw(line)
    }

    fn write_raw(&mut self, line: &[u8]) -> Result<()> {
        self.tally.line(line);
        self.out.extend_from_slice(line);
        self.end_line()
    }

    /// Ends the line just appended to the gathered lines.
    fn end_line(&mut self) -> Result<()> {
        self.lines_written += 1;
        self.out.push(b'\n');
        if self.out.len() >= OUT_CHUNK {
            self.flush_out()?;
        }
        Ok(())
    }

    /// The buffer a line written now is built in: the gathered lines themselves where no
    /// window cuts it (no copy), else the reused line buffer. Give it back to
    /// [`write_taken`](Self::write_taken).
    fn take_line(&mut self) -> Vec<u8> {
        if self.window.is_none() {
            std::mem::take(&mut self.out)
        } else {
            let mut line = std::mem::take(&mut self.line);
            line.clear();
            line
        }
    }

    /// Writes the line built in the buffer [`take_line`](Self::take_line) gave.
    fn write_taken(&mut self, line: Vec<u8>) -> Result<()> {
        if self.window.is_none() {
            self.out = line;
            self.end_line()
        } else {
            let written = self.write_line(&line);
            self.line = line;
            written
        }
    }

    /// Hands the gathered body lines to the .prv output.
    fn flush_out(&mut self) -> Result<()> {
        let written = self.prv.write_all(&self.out);
        self.out.clear();
        written.map_err(|e| Error::write("the .prv trace", e))
    }

    /// Builds a line and writes it.
    fn write_built(&mut self, build: impl FnOnce(&mut Self, &mut Vec<u8>)) -> Result<()> {
        let mut line = self.take_line();
        build(self, &mut line);
        self.write_taken(line)
    }

    /// An empty buffer for a line that will wait in `pending`.
    fn spare_line(&mut self) -> Vec<u8> {
        let mut line = self.spare.pop().unwrap_or_default();
        line.clear();
        line
    }

    fn flush_until(&mut self, t: Ns) -> Result<()> {
        while self.pending.next_time().is_some_and(|time| time <= t) {
            let slot = self.pending.pop().expect("one is due").slot;
            let line = std::mem::take(&mut self.waiting[slot as usize]);
            self.free_slots.push(slot);
            // Empty: an end line a later region took over (open_regions.rs).
            if !line.is_empty() {
                self.write_line(&line)?;
            }
            if self.spare.len() < SPARE_LINES {
                self.spare.push(line);
            }
        }
        Ok(())
    }

    /// Puts `line` in the queue for `time`; gives the slot its bytes wait in.
    fn schedule(&mut self, time: Ns, class: u8, tiebreak: Ns, line: Vec<u8>) -> u32 {
        self.seq += 1;
        let slot = match self.free_slots.pop() {
            Some(slot) => {
                self.waiting[slot as usize] = line;
                slot
            }
            None => {
                self.waiting.push(line);
                u32::try_from(self.waiting.len() - 1).expect("fewer than 2^32 lines pending")
            }
        };
        self.pending
            .push(Pending::new(time, class, tiebreak, self.seq, slot));
        slot
    }

    /// Notes an event of type `ty` written in `pairs` pairs (for the .pcf) and gives its
    /// `:type:` text.
    fn note(&mut self, ty: u32, labels: ValueLabels, value: u64, pairs: u64) -> TypeText {
        let e = self.used_types.get_or_add(ty, || UsedType {
            labels,
            values: SeenValues::default(),
            text: TypeText::of_type(ty),
            pairs: 0,
        });
        e.pairs += pairs;
        if labels != ValueLabels::Numeric && value != 0 {
            e.values.insert(value);
        }
        e.text
    }

    /// Writes `2:0:1:task:thread:time:type:value`, a single event.
    fn point_event(
        &mut self,
        thread: ThreadId,
        time: Ns,
        ty: u32,
        labels: ValueLabels,
        value: u64,
    ) -> Result<()> {
        let text = self.note(ty, labels, value, 1);
        self.write_built(|w, s| {
            w.event_prefix[thread.0 as usize].push_to(s);
            w.stamps.push(s, time);
            text.push_to(s);
            push_u64(s, value.min(MAX_EVENT_VALUE));
        })
    }

    /// `1:0:1:task:thread:begin:end:state`, appended to `s`.
    fn state_line(&mut self, s: &mut Vec<u8>, thread: ThreadId, begin: Ns, end: Ns, state: u32) {
        self.tally.state(state);
        self.state_prefix[thread.0 as usize].push_to(s);
        self.stamps.push(s, begin);
        s.push(b':');
        self.stamps.push(s, end);
        s.push(b':');
        push_u64(s, u64::from(state));
    }

    /// Writes an interval's begin line now, `2:0:1:task:thread:start` then `:type:value` per
    /// pair, and schedules its end line (same types, every value 0). Both lines are built in
    /// one pass over the pairs. A `stacked` interval may overlap others of its row
    /// (open_regions.rs); NVTX ranges are not stacked: they nest, and Paraver's *Stacked Val*
    /// reads them with 0 at every end.
    fn interval(
        &mut self,
        thread: ThreadId,
        start: Ns,
        end: Ns,
        pairs: &[(u32, u64)],
        labels: &[ValueLabels],
        stacked: bool,
    ) -> Result<()> {
        debug_assert_eq!(pairs.len(), labels.len(), "a label per pair");
        let i = thread.0 as usize;
        let overlaps = stacked && {
            let regions = &mut self.regions[i];
            regions.expire(start);
            !regions.is_empty()
        };
        let prefix = self.event_prefix[i];
        let mut begin = self.take_line();
        let mut end_line = self.spare_line();
        prefix.push_to(&mut begin);
        self.stamps.push(&mut begin, start);
        prefix.push_to(&mut end_line);
        self.stamps.push(&mut end_line, end);
        for (&(ty, v), &l) in pairs.iter().zip(labels) {
            // Its begin and its end line.
            let text = self.note(ty, l, v, 2);
            text.push_to(&mut begin);
            push_u64(&mut begin, v.min(MAX_EVENT_VALUE));
            text.push_to(&mut end_line);
            end_line.push(b'0');
        }
        self.write_taken(begin)?;
        let slot = self.schedule(end, 0, start, end_line);
        if !stacked {
            return Ok(());
        }
        if !overlaps {
            self.regions[i].push(start, end, slot, pairs, |_, _| {});
            return Ok(());
        }
        // Overlapping regions: this one's end line and those of the regions it covers change.
        // (slot, time, pairs) of each end line to write again.
        let mut rewrites: Vec<EndLine> = Vec::new();
        let mut unwritten: Vec<u32> = Vec::new();
        let after = self.regions[i].push(start, end, slot, pairs, |x, dropped| {
            rewrites.push((x.slot, x.end, shown_after(&x.pairs, &x.after)));
            unwritten.extend_from_slice(dropped);
        });
        for ty in unwritten {
            self.used_types.unwrite(ty);
        }
        rewrites.push((slot, end, shown_after(pairs, after)));
        for (slot, at, shown) in rewrites {
            let line = self.region_end_line(thread, at, &shown);
            let old = std::mem::replace(&mut self.waiting[slot as usize], line);
            self.spare.push(old);
        }
        Ok(())
    }

    /// The end line of a region: `2:0:1:task:thread:time` then `:type:value` per pair; empty
    /// where there is no pair (the line is not written).
    fn region_end_line(&mut self, thread: ThreadId, time: Ns, pairs: &[(u32, u64)]) -> Vec<u8> {
        let mut line = self.spare_line();
        if pairs.is_empty() {
            return line;
        }
        self.event_prefix[thread.0 as usize].push_to(&mut line);
        self.stamps.push(&mut line, time);
        for &(ty, v) in pairs {
            TypeText::of_type(ty).push_to(&mut line);
            push_u64(&mut line, v.min(MAX_EVENT_VALUE));
        }
        line
    }

    /// Emits or schedules a state record; `begin` is never before the current time.
    fn state(&mut self, thread: ThreadId, begin: Ns, end: Ns, state: u32, now: Ns) -> Result<()> {
        if end <= begin {
            return Ok(());
        }
        if begin <= now {
            self.write_built(|w, s| w.state_line(s, thread, begin, end, state))
        } else {
            let mut line = self.spare_line();
            self.state_line(&mut line, thread, begin, end, state);
            self.schedule(begin, 1, 0, line);
            Ok(())
        }
    }

    /// Advances the state timeline of `thread` for an operation [start, end) whose resource is next
    /// busy at `next` (see the module doc). Overlapping operations form an "island" that keeps the
    /// state of its first (outermost) operation, written as one record; only an operation that
    /// outlasts the island extends it with a further record.
    fn busy(
        &mut self,
        thread: ThreadId,
        start: Ns,
        end: Ns,
        next: Option<Ns>,
        state: u32,
    ) -> Result<()> {
        let i = thread.0 as usize;
        let gap_state = if self.idle_by_default[i] {
            states::IDLE
        } else {
            states::RUNNING
        };
        let next = next.unwrap_or(self.end_time).max(start);
        let ts = &mut self.threads[i];
        if start >= ts.island_end {
            // A new island: its state is known for its whole first operation.
            ts.island_end = end;
            ts.island_state = state;
            let begin = start.max(ts.covered);
            ts.covered = ts.covered.max(end);
            self.state(thread, begin, end, state, start)?;
        } else if end > ts.island_end {
            // Overlaps the island and outlasts it: extend.
            let (from, island_state) = (ts.island_end.max(ts.covered), ts.island_state);
            ts.island_end = end;
            ts.covered = ts.covered.max(end);
            self.state(thread, from, end, island_state, start)?;
        }
        let ts = &mut self.threads[i];
        if next > ts.island_end {
            // The next operation starts after the island: the gap until then.
            let gap_begin = ts.island_end.max(ts.covered);
            ts.covered = ts.covered.max(next);
            self.state(thread, gap_begin, next, gap_state, start)?;
        }
        Ok(())
    }
}

/// An end line to write again: its slot, its time and its pairs.
type EndLine = (u32, Ns, Vec<(u32, u64)>);

/// What a region's end line writes: per pair, the value shown after it, where it writes one.
fn shown_after(pairs: &[(u32, u64)], after: &[Option<u64>]) -> Vec<(u32, u64)> {
    pairs
        .iter()
        .zip(after)
        .filter_map(|(&(ty, _), a)| a.map(|v| (ty, v)))
        .collect()
}

impl Sink for ParaverWriter<'_> {
    /// One: natively its .prv is written (the CLI's `convert`) or compressed (a bundle) on a
    /// thread of its own where the conversion may use more than one.
    fn threads(&self) -> usize {
        1
    }

    fn set_output_cut(&mut self, cut: &OutputCut) {
        self.window = cut.window.map(|(a, b)| Window::new(a, b));
        self.tally.count_lines(self.window.is_some());
        self.min_duration = cut.min_duration.clone();
        self.payload_config = cut.nvtx_payloads.clone();
    }

    fn begin(&mut self, trace: &TraceInfo, _names: &Names) -> Result<()> {
        let o = &trace.objects;
        self.ids = o.paraver_ids();
        let prefix = |kind| {
            let ids = self.ids.iter();
            ids.map(|(task, th)| {
                LinePrefix::new(&format!("{kind}:0:1:{task}:{th}:")).expect("two u32s fit a piece")
            })
            .collect()
        };
        self.event_prefix = prefix(2);
        self.state_prefix = prefix(1);
        self.end_time = trace.end_time;
        self.threads = vec![ThreadState::default(); o.threads.len()];
        self.regions = (0..o.threads.len())
            .map(|_| OpenRegions::default())
            .collect();
        self.idle_by_default = (0..o.threads.len())
            .map(|i| o.idle_by_default(ThreadId(i as u32)))
            .collect();
        self.process_of = o.threads.iter().map(|t| t.process).collect();
        self.domain_names = trace.domains.clone();
        self.payloads = payloads::NvtxPayloads::new(self.payload_config.as_ref(), &trace.domains);
        let mut k = 0;
        self.domain_types = trace
            .domains
            .iter()
            .map(|d| {
                if d == "NCCL" {
                    NVTX_NCCL_DOMAIN
                } else {
                    let t = NVTX_PUSH_POP_BASE + 100 * k;
                    k += 1;
                    t
                }
            })
            .collect();

        // #Paraver (date):end_ns:NODES(cpus,...):1:NTASKS(threads:node,...),0
        let mut h = format!(
            "#Paraver ({}):{}_ns:{}(",
            trace.date_label,
            self.window.as_ref().map_or(trace.end_time, Window::span),
            o.hosts.len()
        );
        h.push_str(&vec!["1"; o.hosts.len()].join(","));
        h.push_str(&format!("):1:{}(", o.processes.len()));
        let per = o.threads_per_process();
        let tasks: Vec<String> = o
            .processes
            .iter()
            .zip(&per)
            .map(|(p, n)| format!("{}:{}", n, p.host + 1))
            .collect();
        h.push_str(&tasks.join(","));
        h.push_str("),0\n");
        self.out.extend_from_slice(h.as_bytes());
        self.tally.header = h.trim_end().to_owned();

        // Initial state of every thread, from 0 to its first activity.
        for (i, t) in o.threads.iter().enumerate() {
            let first = t.first_busy.unwrap_or(trace.end_time).min(trace.end_time);
            let state = if self.idle_by_default[i] {
                states::IDLE
            } else {
                states::RUNNING
            };
            self.threads[i].covered = first;
            self.state(ThreadId(i as u32), 0, first, state, 0)?;
        }
        Ok(())
    }

    fn record(&mut self, rec: &Record, names: &Names) -> Result<()> {
        self.flush_until(rec.time())?;
        match rec {
            Record::Gpu(op) => self.gpu(op, names),
            Record::Host(c) => self.host(c, names),
            Record::Nvtx(r) => self.nvtx(r),
            Record::Mark(m) => {
                let v = Self::name_value(m.name);
                self.point_event(m.thread, m.time, NVTX_MARK, ValueLabels::Names, v)
            }
            Record::Link(l) => self.link(l),
            Record::Message(m) => self.message(m),
            Record::Sched(r) => self.interval(
                r.thread,
                r.start,
                r.end,
                &[(ON_CPU, u64::from(r.cpu) + 1)],
                &[ValueLabels::Cpu],
                true,
            ),
            Record::Annotation(a) => {
                let (pairs, labels) = super::annotations::events(a);
                let sample = matches!(
                    a.kind,
                    AnnotationKind::CpuCounter(_) | AnnotationKind::NicMetric(_)
                );
                if let (true, Some(name)) = (sample, a.call) {
                    // Its type is named by the counter, like a GPU metric's.
                    self.metric_labels.insert(pairs[0].0, name);
                }
                if a.is_instant() {
                    for (&(ty, value), &l) in pairs.iter().zip(&labels) {
                        self.point_event(a.thread, a.start, ty, l, value)?;
                    }
                    return Ok(());
                }
                // Not stacked: its type is its own, and the call it annotates keeps its lines.
                self.interval(a.thread, a.start, a.end, &pairs, &labels, false)
            }
            Record::Metric(m) => {
                let ty = metric_type(m.metric_id);
                self.metric_labels.insert(ty, m.name);
                self.point_event(m.thread, m.time, ty, ValueLabels::Numeric, m.value)
            }
        }
    }

    fn finish(&mut self, trace: &TraceInfo, names: &Names) -> Result<()> {
        self.flush_until(Ns::MAX)?;
        uncovered_thread(&self.threads, trace)?;
        if let Some(w) = self.window.as_mut() {
            for line in w.close() {
                self.write_raw(line.as_bytes())?;
            }
        }
        self.flush_out()?;
        self.prv
            .flush()
            .map_err(|e| Error::write("the .prv trace", e))?;
        let pcf = super::pcf::render(self, names);
        self.pcf
            .write_all(pcf.as_bytes())
            .and_then(|_| self.pcf.flush())
            .map_err(|e| Error::write("the .pcf labels", e))?;
        let row = super::row::render(&trace.objects);
        self.row
            .write_all(row.as_bytes())
            .and_then(|_| self.row.flush())
            .map_err(|e| Error::write("the .row names", e))
    }
}

/// States cover every thread up to the trace's end, unless a record the readers announced never
/// came (only a damaged export gives different rows to two reads of one table): that breaks
/// Paraver's rule that states cover the thread, so it is an error naming the file and thread.
fn uncovered_thread(threads: &[ThreadState], trace: &TraceInfo) -> Result<()> {
    let Some(i) = threads.iter().position(|t| t.covered < trace.end_time) else {
        return Ok(());
    };
    let o = &trace.objects;
    let id = ThreadId(i as u32);
    let source = o.processes[o.thread(id).process].source;
    Err(Error::BadData {
        file: trace
            .sources
            .get(source)
            .map_or_else(String::new, |s| s.label.clone()),
        why: format!(
            "reading the same rows twice gave different answers (is the file damaged? `sqlite3 FILE \
             'PRAGMA integrity_check'` tells): {} has activity at {} ns in one read and none in the other",
            o.thread_label(id),
            threads[i].covered
        ),
    })
}

impl ParaverWriter<'_> {
    /// What the stream wrote (call once it has finished).
    pub fn written(&self) -> Written {
        let pairs = self.used_types.iter().map(|(t, u)| (*t, u.pairs));
        self.tally
            .written(pairs, &self.domain_names, &self.domain_types)
    }

    /// Label of an event type, NVTX domain types included.
    pub fn label_of(&self, ty: u32) -> String {
        if let Some(l) = type_label(ty) {
            return l.to_owned();
        }
        if let Some(l) = self.payloads.label(ty) {
            return l.to_owned();
        }
        for (d, &base) in self.domain_types.iter().enumerate() {
            let name = if self.domain_names[d].is_empty() {
                "default domain".to_owned()
            } else {
                if self.domain_names[d].starts_with("domain ") {
                    self.domain_names[d].clone()
                } else {
                    format!("domain {}", self.domain_names[d])
                }
            };
            if ty == base {
                return format!("NVTX push/pop ranges, {name}");
            }
            if base != NVTX_NCCL_DOMAIN && ty > base && ty <= base + NVTX_MAX_LEVEL {
                return format!("NVTX push/pop ranges, {name}, nesting level {}", ty - base);
            }
        }
        format!("Event type {ty}")
    }
}
