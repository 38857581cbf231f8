//! The Chrome Trace Event Format writer: one event per record, written as the record arrives.
//!
//! Records come in start order with their end known, so an interval is one complete event
//! (`"ph":"X"` with `"dur"`) written at once; nothing waits but the arrows whose target is still
//! ahead (flows.rs). Processes are the Paraver tasks (`pid` = task number), threads and GPU
//! streams the Paraver threads (`tid` = thread number over the whole trace, so unique), named as
//! in the .row by metadata events written first. Events of one thread that overlap without
//! nesting go to extra tracks of that thread (lanes.rs), CPU scheduling to a track of its own.

use std::collections::BTreeMap;
use std::io::Write;

use super::events::{self, NameCache};
use super::flows::{Flow, FlowKind, Waiting};
use super::json::{push_u64, quoted, Args};
use super::lanes::Lanes;
use super::out::{JsonOut, Name};
use crate::error::Result;
use crate::model::nccl::{parse_kernel_name, parse_payload, NcclKernelInfo, NcclPayload};
use crate::model::*;
use crate::options::Family;
use crate::FastMap;

/// What the writer wrote (tests and the CLI's summary read it).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ChromeStats {
    /// Every event, metadata included.
    pub events: u64,
    /// Complete events per category (`kernel`, `cuda-api`, …: the `-t` family names).
    pub complete: BTreeMap<&'static str, u64>,
    /// NVTX marks (`"ph":"i"`) and GPU metric samples (`"ph":"C"`).
    pub instants: u64,
    pub counters: u64,
    /// Arrows written (each an `"s"` and an `"f"` event).
    pub flows: u64,
    /// Arrows left out because their source or target was not written (`--min-duration`, `-t`).
    pub flows_dropped: u64,
    /// The most arrows that waited for their target at once.
    pub flows_waiting_max: usize,
    /// Tracks opened beside the threads' own: for events that overlap others of their thread
    /// without nesting, and for CPU scheduling.
    pub extra_tracks: u64,
}

/// Per model thread.
#[derive(Default)]
struct ThreadOut {
    main: Lanes,
    /// CPU scheduling, on tracks of its own (a run overlaps the calls it interrupts).
    sched: Lanes,
    /// Start (trace time) and track of the last complete event written on `main`.
    last: Option<(Ns, u64)>,
    /// Open ranges of the NCCL NVTX domain: (end, payload), for the kernels they launch.
    nccl_open: Vec<(Ns, NcclPayload)>,
}

pub struct ChromeWriter<'w> {
    out: JsonOut<'w>,
    window: Option<(Ns, Ns)>,
    min_duration: BTreeMap<Family, Ns>,
    threads: Vec<ThreadOut>,
    /// Per model thread: the `pid` of its process and its .row name.
    pid_of: Vec<u32>,
    labels: Vec<String>,
    next_tid: u64,
    names: NameCache,
    /// NVTX domain names, quoted; the index of the NCCL domain.
    domains: Vec<Box<str>>,
    nccl_domain: Option<u32>,
    nccl_names: FastMap<NameId, Option<NcclKernelInfo>>,
    /// Payloads of NCCL ranges waiting for the kernel their launch call caused: (pid, correlation).
    nccl_launches: FastMap<(u32, u64), NcclPayload>,
    /// Per model thread: the label of its GPU where it is a GPU metrics thread, else empty.
    devices: Vec<String>,
    /// Counter names per (metrics thread, metric id), quoted.
    metric_names: FastMap<(ThreadId, u32), Box<str>>,
    waiting: Waiting,
    now: Ns,
    end_time: Ns,
    stats: ChromeStats,
}

/// The name of a complete event: an interned name or a fixed text.
enum Label<'a> {
    Id(NameId),
    Plain(&'a str),
}

/// Sort index of a track: threads in their order, each thread's lanes after it.
fn sort_index(thread: usize, sched: bool, lane: usize) -> u64 {
    thread as u64 * 64 + u64::from(sched) * 32 + lane.min(31) as u64
}

impl<'w> ChromeWriter<'w> {
    pub fn new(dest: Box<dyn Write + 'w>) -> Self {
        ChromeWriter {
            out: JsonOut::new(dest),
            window: None,
            min_duration: BTreeMap::new(),
            threads: Vec::new(),
            pid_of: Vec::new(),
            labels: Vec::new(),
            next_tid: 1,
            names: NameCache::default(),
            domains: Vec::new(),
            nccl_domain: None,
            nccl_names: FastMap::default(),
            nccl_launches: FastMap::default(),
            devices: Vec::new(),
            metric_names: FastMap::default(),
            waiting: Waiting::default(),
            now: 0,
            end_time: 0,
            stats: ChromeStats::default(),
        }
    }

    /// What was written (complete once the stream has finished).
    pub fn stats(&self) -> ChromeStats {
        let mut s = self.stats.clone();
        s.events = self.out.events;
        s.flows_waiting_max = self.waiting.high_water;
        s.flows_dropped += self.waiting.dropped;
        s
    }

    /// Arrows and NCCL payloads waiting now, and events open now on every track: what the
    /// writer holds besides its per-thread and per-name tables.
    pub fn held(&self) -> usize {
        let now = self.now;
        let open: usize = (self.threads.iter())
            .map(|t| t.main.open_at(now) + t.sched.open_at(now) + t.nccl_open.len())
            .sum();
        self.waiting.len() + self.nccl_launches.len() + open
    }

    /// The part of `[start, end]` the output keeps, on its timeline; `None` when outside the
    /// window. As the Paraver cut: events begun inside it, and those still open at its start.
    fn clip(&self, start: Ns, end: Ns) -> Option<(Ns, Ns)> {
        let end = end.max(start);
        match self.window {
            None => Some((start, end)),
            Some((lo, hi)) if start > hi || (start < lo && end <= lo) => None,
            Some((lo, hi)) => Some((start.max(lo) - lo, end.min(hi) - lo)),
        }
    }

    /// An instant on the output's timeline; `None` outside the window.
    fn point(&self, t: Ns) -> Option<Ns> {
        match self.window {
            None => Some(t),
            Some((lo, hi)) => (lo..=hi).contains(&t).then(|| t - lo),
        }
    }

    fn too_short(&self, family: Family, start: Ns, end: Ns) -> bool {
        self.min_duration
            .get(&family)
            .is_some_and(|&min| end.saturating_sub(start) < min)
    }

    /// Starts the complete event of `thread` over `[start, end]` on a track where it nests:
    /// writes its head up to `"dur"` and gives its track, or `None` where the window leaves it
    /// out. The caller writes the arguments.
    fn complete(
        &mut self,
        thread: ThreadId,
        sched: bool,
        cat: &'static str,
        (name, names): (Label, &Names),
        (start, end): (Ns, Ns),
    ) -> Option<u64> {
        let (b, e) = self.clip(start, end)?;
        let i = thread.0 as usize;
        let next_tid = &mut self.next_tid;
        let t = &mut self.threads[i];
        let lanes = if sched { &mut t.sched } else { &mut t.main };
        let placed = lanes.place(b, e, || {
            *next_tid += 1;
            *next_tid - 1
        });
        if !sched {
            t.last = Some((start, placed.tid));
        }
        let pid = self.pid_of[i];
        if let Some(lane) = placed.new_lane {
            self.stats.extra_tracks += u64::from(sched || lane > 0);
            let label = match (sched, lane) {
                (false, k) => format!("{} [{}]", self.labels[i], k + 1),
                (true, 0) => format!("{} on CPU", self.labels[i]),
                (true, k) => format!("{} on CPU [{}]", self.labels[i], k + 1),
            };
            self.out
                .meta("thread_name", pid, placed.tid, Some(&label), 0);
            let sort = sort_index(i, sched, lane);
            self.out
                .meta("thread_sort_index", pid, placed.tid, None, sort);
        }
        let name = match name {
            Label::Id(id) => Name::Quoted(self.names.get(names, id)),
            Label::Plain(s) => Name::Plain(s),
        };
        self.out.head("X", cat, name, pid, placed.tid, b);
        self.out.us_field("dur", e - b);
        *self.stats.complete.entry(cat).or_insert(0) += 1;
        Some(placed.tid)
    }

    fn gpu(&mut self, op: &GpuOp, names: &Names) {
        let (family, cat) = match op.kind {
            GpuOpKind::Kernel(_) => (Family::Kernel, "kernel"),
            GpuOpKind::Memcpy(_) => (Family::Memcpy, "memcpy"),
            GpuOpKind::Memset(_) => (Family::Memset, "memset"),
            GpuOpKind::Graph(_) => (Family::Graphs, "graphs"),
        };
        let pid = self.pid_of[op.thread.0 as usize];
        let mut nccl = (None, None);
        if let GpuOpKind::Kernel(k) = &op.kind {
            if k.class == KernelClass::Communication {
                let info = *self
                    .nccl_names
                    .entry(k.name)
                    .or_insert_with(|| parse_kernel_name(names.get(k.name)));
                nccl = (info, self.nccl_launches.remove(&(pid, op.correlation_id)));
            }
        }
        if self.too_short(family, op.start, op.end) {
            return;
        }
        let name = match &op.kind {
            GpuOpKind::Kernel(k) => Label::Id(k.name),
            GpuOpKind::Graph(g) => Label::Id(g.name),
            GpuOpKind::Memcpy(m) => Label::Plain(events::memcpy_name(m)),
            GpuOpKind::Memset(_) => Label::Plain(events::MEMSET_NAME),
        };
        let span = (op.start, op.end);
        let Some(tid) = self.complete(op.thread, false, cat, (name, names), span) else {
            return;
        };
        let mut a = Args::open(&mut self.out.buf);
        events::gpu_args(
            &mut a,
            op,
            &mut self.names,
            names,
            (nccl.0, nccl.1.as_ref()),
        );
        a.close();
        self.arrive(op.thread, op.start, tid);
    }

    /// Writes the arrow waiting for the operation of `thread` at `start`, just written on `tid`.
    fn arrive(&mut self, thread: ThreadId, start: Ns, tid: u64) {
        if let Some(flow) = self.waiting.take(start, thread) {
            let pid = self.pid_of[thread.0 as usize];
            // Inside the window: the arrow waited only where its target was (arrow()).
            let ts = start - self.window.map_or(0, |w| w.0);
            self.flow(&flow, (pid, tid, ts));
        }
    }

    fn host(&mut self, call: &HostCall, names: &Names) {
        let (family, cat, name) = match &call.kind {
            HostCallKind::Cuda(c) => (Family::CudaApi, "cuda-api", c.name),
            HostCallKind::Mpi(m) => (Family::Mpi, "mpi", m.name),
            HostCallKind::Os(o) => (Family::Osrt, "osrt", o.name),
            HostCallKind::OpenAcc(a) => (Family::OpenAcc, "openacc", a.name),
        };
        if let HostCallKind::Cuda(c) = &call.kind {
            self.note_nccl_launch(call, c, names);
        }
        if self.too_short(family, call.start, call.end) {
            return;
        }
        let span = (call.start, call.end);
        let label = (Label::Id(name), names);
        let Some(tid) = self.complete(call.thread, false, cat, label, span) else {
            return;
        };
        let mut a = Args::open(&mut self.out.buf);
        events::host_args(&mut a, call, &mut self.names, names);
        a.close();
        if matches!(call.kind, HostCallKind::Mpi(_)) {
            self.arrive(call.thread, call.start, tid);
        }
    }

    /// A kernel launch inside an open NCCL range carries that range's payload to its kernel.
    fn note_nccl_launch(&mut self, call: &HostCall, c: &CudaCall, names: &Names) {
        let open = &mut self.threads[call.thread.0 as usize].nccl_open;
        open.retain(|(end, _)| *end > call.start);
        if let Some((_, payload)) = open.last() {
            if names.get(c.name).contains("LaunchKernel") {
                let pid = self.pid_of[call.thread.0 as usize];
                self.nccl_launches
                    .insert((pid, c.correlation_id), payload.clone());
            }
        }
    }

    fn nvtx(&mut self, r: &NvtxRange, names: &Names) {
        let nccl = Some(r.domain) == self.nccl_domain;
        let payload = match (&r.payload_json, nccl) {
            (Some(j), true) => parse_payload(j),
            _ => None,
        };
        if nccl && r.kind == NvtxRangeKind::PushPop {
            let open = &mut self.threads[r.thread.0 as usize].nccl_open;
            open.retain(|(end, _)| *end > r.start);
            open.push((r.end, payload.clone().unwrap_or_default()));
        }
        if self.too_short(Family::Nvtx, r.start, r.end) {
            return;
        }
        let label = (Label::Id(r.name), names);
        if self
            .complete(r.thread, false, "nvtx", label, (r.start, r.end))
            .is_none()
        {
            return;
        }
        let domain = self.domains.get(r.domain as usize).map_or("\"\"", |d| d);
        let mut a = Args::open(&mut self.out.buf);
        events::nvtx_args(&mut a, r, domain, &mut self.names, names, payload.as_ref());
        a.close();
    }

    fn mark(&mut self, m: &NvtxMark, names: &Names) {
        let Some(ts) = self.point(m.time) else {
            return;
        };
        let i = m.thread.0 as usize;
        let tid = self.threads[i].main.first().unwrap_or(0);
        let name = Name::Quoted(self.names.get(names, m.name));
        self.out.head("i", "nvtx", name, self.pid_of[i], tid, ts);
        self.out.write_raw(b",\"s\":\"t\"");
        let domain = self.domains.get(m.domain as usize).map_or("\"\"", |d| d);
        let mut a = Args::open(&mut self.out.buf);
        a.quoted("domain", domain);
        a.close();
        self.stats.instants += 1;
    }

    fn metric(&mut self, m: &MetricSample, names: &Names) {
        let Some(ts) = self.point(m.time) else {
            return;
        };
        let i = m.thread.0 as usize;
        let device = &self.devices[i];
        let name = self
            .metric_names
            .entry((m.thread, m.metric_id))
            .or_insert_with(|| quoted(format!("{device} {}", names.get(m.name)).trim()));
        let tid = self.threads[i].main.first().unwrap_or(0);
        let pid = self.pid_of[i];
        self.out
            .head("C", "gpu-metrics", Name::Quoted(name), pid, tid, ts);
        self.out.write_raw(b",\"args\":{\"value\":");
        push_u64(&mut self.out.buf, m.value);
        self.out.write_raw(b"}}");
        self.stats.counters += 1;
    }

    fn sched(&mut self, r: &CpuRun, names: &Names) {
        let name = format!("CPU {}", r.cpu);
        let span = (r.start, r.end);
        if self
            .complete(r.thread, true, "sched", (Label::Plain(&name), names), span)
            .is_none()
        {
            return;
        }
        let mut a = Args::open(&mut self.out.buf);
        a.u64("cpu", u64::from(r.cpu));
        a.close();
    }

    /// A CUDA event or pthread call: a complete event over its call, `cat` its family. A GPU
    /// memory change: a counter of the memory in use.
    fn annotation(&mut self, a: &Annotation, names: &Names) {
        match &a.kind {
            AnnotationKind::GpuMemory(m) => return self.memory_counter(a.thread, a.start, m),
            AnnotationKind::CpuCounter(c) => return self.sample_counter(a, c.count, names),
            AnnotationKind::NicMetric(n) => return self.sample_counter(a, n.value, names),
            _ => {}
        }
        let span = (a.start, a.end);
        let region = match &a.kind {
            AnnotationKind::OpenMp(r) => crate::paraver::annotations::openmp_label(*r),
            _ => String::new(),
        };
        let label = match a.call {
            Some(id) => Label::Id(id),
            None if !region.is_empty() => Label::Plain(&region),
            None => Label::Plain("<unnamed call>"),
        };
        let label = (label, names);
        if self
            .complete(a.thread, false, a.family_name(), label, span)
            .is_none()
        {
            return;
        }
        let mut args = Args::open(&mut self.out.buf);
        if let AnnotationKind::CudaEvent(e) = &a.kind {
            args.u64("event_id", e.event_id);
            args.u64("device", u64::from(e.device));
            args.u64("stream", e.stream);
            args.u64("context", e.context);
        }
        args.close();
    }

    /// `GPUn memory in use` of the stream's process, after a change.
    fn memory_counter(&mut self, thread: ThreadId, time: Ns, m: &GpuMemoryChange) {
        let Some(ts) = self.point(time) else {
            return;
        };
        let i = thread.0 as usize;
        let tid = self.threads[i].main.first().unwrap_or(0);
        let name = format!("GPU{} memory in use", m.device);
        let pid = self.pid_of[i];
        self.out
            .head("C", "gpu-memory", Name::Plain(&name), pid, tid, ts);
        self.out.write_raw(b",\"args\":{\"bytes\":");
        push_u64(&mut self.out.buf, m.in_use);
        self.out.write_raw(b"}}");
        self.stats.counters += 1;
    }

    /// A CPU counter's count on the thread that ran, or a NIC metric's value: a counter per
    /// thread (one process's threads would otherwise share it), `cat` its family.
    fn sample_counter(&mut self, a: &Annotation, value: u64, names: &Names) {
        let Some(ts) = self.point(a.start) else {
            return;
        };
        let i = a.thread.0 as usize;
        let tid = self.threads[i].main.first().unwrap_or(0);
        let counter = a.call.map_or("sample", |n| names.get(n));
        let (name, field): (String, &[u8]) = match a.kind {
            // `NIC 0 (mlx5_0, ConnectX-6) Eth: Bytes received [bytes/ms]`.
            AnnotationKind::NicMetric(_) => (
                format!("{} {counter}", self.devices[i]),
                b",\"args\":{\"value\":",
            ),
            _ => (
                format!("{counter} (thread {tid})"),
                b",\"args\":{\"count\":",
            ),
        };
        let pid = self.pid_of[i];
        self.out
            .head("C", a.family_name(), Name::Plain(&name), pid, tid, ts);
        self.out.write_raw(field);
        push_u64(&mut self.out.buf, value);
        self.out.write_raw(b"}}");
        self.stats.counters += 1;
    }

    /// An arrow from the call of `from` that began at `send` to what `to` begins at `target`:
    /// written now where its target is written already, else once it is (flows.rs). Left out
    /// where the call was not written, or where the window does not hold both ends.
    fn arrow(
        &mut self,
        kind: FlowKind,
        (from, send): (ThreadId, Ns),
        (to, target): (ThreadId, Ns),
        extra: (u64, Option<u64>, Ns),
    ) {
        let (bytes, tag, last_end) = extra;
        let lo = match self.window {
            Some((lo, hi)) if send < lo || target < lo || target > hi || last_end > hi => return,
            Some((lo, _)) => lo,
            None => 0,
        };
        let source = self.threads[from.0 as usize].last;
        let Some((_, src_tid)) = source.filter(|&(s, _)| s == send) else {
            self.stats.flows_dropped += 1;
            return;
        };
        let flow = Flow {
            kind,
            pid: self.pid_of[from.0 as usize],
            tid: src_tid,
            ts: send - lo,
            bytes,
            tag,
        };
        let t = &self.threads[to.0 as usize];
        let written = match t.last {
            Some((s, tid)) if s == target => Some(tid),
            _ if target < self.now => t.main.first(),
            _ => None,
        };
        match written {
            Some(tid) => self.flow(&flow, (self.pid_of[to.0 as usize], tid, target - lo)),
            None => self.waiting.push((target, to), flow),
        }
    }

    /// The `"s"` and `"f"` events of an arrow ending on track `(pid, tid)` at `ts`.
    fn flow(&mut self, f: &Flow, (pid, tid, ts): (u32, u64, Ns)) {
        self.stats.flows += 1;
        let id = self.stats.flows;
        let name = Name::Plain(f.kind.name());
        self.out.head("s", "flow", name, f.pid, f.tid, f.ts);
        self.out.write_raw(b",\"id\":");
        push_u64(&mut self.out.buf, id);
        let mut a = Args::open(&mut self.out.buf);
        a.u64("bytes", f.bytes);
        a.opt_u64("tag", f.tag);
        a.close();
        self.out
            .head("f", "flow", Name::Plain(f.kind.name()), pid, tid, ts);
        self.out.write_raw(b",\"bp\":\"e\",\"id\":");
        push_u64(&mut self.out.buf, id);
        self.out.write_raw(b"}");
    }
}

impl Sink for ChromeWriter<'_> {
    /// One, as the .prv writer: natively its file is written (or compressed) on a thread of its
    /// own where the conversion may use more than one.
    fn threads(&self) -> usize {
        1
    }

    fn set_output_cut(&mut self, cut: &OutputCut) {
        self.window = cut.window;
        self.min_duration = cut.min_duration.clone();
    }

    fn begin(&mut self, trace: &TraceInfo, _names: &Names) -> Result<()> {
        let o = &trace.objects;
        self.labels = crate::paraver::row::thread_labels(o);
        self.pid_of = o.threads.iter().map(|t| t.process as u32 + 1).collect();
        self.threads = (0..o.threads.len())
            .map(|i| ThreadOut {
                main: Lanes::with_first(i as u64 + 1),
                ..ThreadOut::default()
            })
            .collect();
        self.next_tid = o.threads.len() as u64 + 1;
        self.devices = o
            .threads
            .iter()
            .map(|t| match t.kind {
                ThreadKind::GpuMetrics { device } => o.devices[device].label(),
                ThreadKind::Nic { nic } => o.nics[nic].label(),
                _ => String::new(),
            })
            .collect();
        let domain = |d: &String| quoted(if d.is_empty() { "default" } else { d });
        self.domains = trace.domains.iter().map(domain).collect();
        self.nccl_domain = trace
            .domains
            .iter()
            .position(|d| d == "NCCL")
            .map(|i| i as u32);
        self.end_time = self.window.map_or(trace.end_time, |(lo, hi)| hi - lo);
        self.out.write_raw(b"{\"traceEvents\":[\n");
        for (p, label) in crate::paraver::row::task_labels(o).iter().enumerate() {
            // Named on the tid of its first thread: a tid of its own would show as a thread.
            let tid = o
                .threads
                .iter()
                .position(|t| t.process == p)
                .map_or(0, |i| i as u64 + 1);
            let pid = p as u32 + 1;
            self.out.meta("process_name", pid, tid, Some(label), 0);
            self.out
                .meta("process_sort_index", pid, tid, None, p as u64);
        }
        for (i, label) in self.labels.iter().enumerate() {
            let (pid, tid) = (self.pid_of[i], i as u64 + 1);
            self.out.meta("thread_name", pid, tid, Some(label), 0);
            let sort = sort_index(i, false, 0);
            self.out.meta("thread_sort_index", pid, tid, None, sort);
        }
        self.out.maybe_flush()
    }

    fn record(&mut self, rec: &Record, names: &Names) -> Result<()> {
        self.now = rec.time();
        self.waiting.expire(self.now);
        match rec {
            Record::Gpu(op) => self.gpu(op, names),
            Record::Host(c) => self.host(c, names),
            Record::Nvtx(r) => self.nvtx(r, names),
            Record::Mark(m) => self.mark(m, names),
            Record::Metric(m) => self.metric(m, names),
            Record::Sched(r) => self.sched(r, names),
            Record::Annotation(a) => self.annotation(a, names),
            Record::Link(l) => {
                let kind = match l.kind {
                    LinkKind::Launch => FlowKind::Launch,
                    LinkKind::Memory => FlowKind::Memory,
                };
                self.arrow(
                    kind,
                    (l.from, l.send),
                    (l.to, l.recv),
                    (l.bytes, None, l.recv),
                );
            }
            Record::Message(m) => {
                let extra = (m.bytes, Some(m.tag), m.recv);
                self.arrow(
                    FlowKind::Message,
                    (m.from, m.send),
                    (m.to, m.recv_posted),
                    extra,
                );
            }
        }
        self.out.maybe_flush()
    }

    fn finish(&mut self, _trace: &TraceInfo, _names: &Names) -> Result<()> {
        self.waiting.expire(Ns::MAX);
        // What was open on the tracks ends with the trace.
        self.threads.clear();
        self.nccl_launches.clear();
        self.out.write_raw(
            b"\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"generator\":\"prvsight ",
        );
        self.out.write_raw(env!("CARGO_PKG_VERSION").as_bytes());
        self.out.write_raw(b"\",\"end_ns\":");
        push_u64(&mut self.out.buf, self.end_time);
        self.out.write_raw(b"}}\n");
        self.out.finish()
    }
}
