//! [`ExportBuilder`]: describe processes, threads, GPUs, streams and what happened on them; the ids
//! (globalPid/globalTid, StringIds, contexts, correlation ids, grid ids, NVTX range ids) are
//! assigned the way nsys assigns them, and [`ExportBuilder::to_bytes`] writes the SQLite file.

use std::collections::BTreeMap;

use super::ids::{global_pid, global_tid};
use super::rows::*;
use crate::error::{Error, Result};

/// NVTX `eventType` values (ENUM_NSYS_EVENT_TYPE).
pub mod event_type {
    pub const NVTX_CATEGORY: i64 = 33;
    pub const NVTX_MARK: i64 = 34;
    pub const NVTX_THREAD_NAME: i64 = 39;
    pub const NVTX_PUSH_POP: i64 = 59;
    pub const NVTX_START_END: i64 = 60;
    pub const NVTX_DOMAIN_CREATE: i64 = 75;
}

/// `eventClass` of CUPTI_ACTIVITY_KIND_RUNTIME rows (ENUM_NSYS_EVENT_CLASS).
pub const EVENT_CLASS_RUNTIME: i64 = 0;
pub const EVENT_CLASS_DRIVER: i64 = 1;

/// ENUM_CUPTI_STREAM_TYPE: PyTorch's side streams are non-blocking.
pub const STREAM_FLAG_NON_BLOCKING: i64 = 2;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Process {
    pub pid: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Thread {
    pub pid: u32,
    pub tid: u32,
}

impl Thread {
    pub fn global_tid(self) -> i64 {
        global_tid(self.pid, self.tid)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Gpu {
    pub id: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Stream {
    pub pid: u32,
    pub device: u32,
    pub context: u32,
    pub stream: u32,
}

/// How nsys stores an NVTX message: inline `text`, or a registered string (`textId` → StringIds).
#[derive(Clone, Copy, Debug)]
pub enum NvtxText<'a> {
    Inline(&'a str),
    Registered(&'a str),
}

/// Whether a stream is the context's default stream (nsys lists only created streams in
/// TARGET_INFO_CUDA_STREAM) or one the application created.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamKind {
    Default,
    Created { priority: i64 },
}

/// Session-level facts written to TARGET_INFO_SESSION_START_TIME / ANALYSIS_DETAILS.
#[derive(Clone, Debug)]
pub struct Session {
    pub utc_epoch_ns: i64,
    /// The session clock at capture start; event timestamps are on this clock.
    pub system_clock_ns: i64,
    pub hostname: String,
}

pub struct ExportBuilder {
    pub(crate) rows: Rows,
    pub(crate) session: Session,
    /// StringIds: value → id, in first-use order.
    pub(crate) strings: BTreeMap<String, i64>,
    pub(crate) string_order: Vec<String>,
    /// Extra META_DATA_EXPORT rows telling how the file was made (like the DERIVED_* rows that
    /// the authors of mfu_2gpu_before.sqlite added).
    pub(crate) provenance: Vec<(String, String)>,
    /// The capture's environment (`KEY=VALUE` pairs), if set: TARGET_INFO_SYSTEM_ENV's
    /// DeviceEnvironment row.
    pub(crate) environment: Option<Vec<(String, String)>>,
    contexts: BTreeMap<(u32, u32), u32>,
    next_correlation: BTreeMap<u32, u64>,
    next_grid_id: BTreeMap<u32, i64>,
    next_range_id: i64,
    label: String,
}

impl ExportBuilder {
    /// `label` names the export in error messages (the scenario name).
    pub fn new(label: &str, session: Session) -> ExportBuilder {
        let mut b = ExportBuilder {
            rows: Rows::default(),
            session,
            strings: BTreeMap::new(),
            string_order: Vec::new(),
            provenance: Vec::new(),
            environment: None,
            contexts: BTreeMap::new(),
            next_correlation: BTreeMap::new(),
            next_grid_id: BTreeMap::new(),
            next_range_id: 1,
            label: label.to_owned(),
        };
        // nsys reserves the first two StringIds for these (seen in every 2025/2026 export).
        b.string("GpuMetrics");
        b.string("SocMetrics");
        b
    }

    pub fn label(&self) -> &str {
        &self.label
    }

    /// The StringIds id of `s`, added on first use.
    pub fn string(&mut self, s: &str) -> i64 {
        if let Some(&id) = self.strings.get(s) {
            return id;
        }
        let id = self.string_order.len() as i64;
        self.strings.insert(s.to_owned(), id);
        self.string_order.push(s.to_owned());
        id
    }

    pub fn provenance(&mut self, name: &str, value: &str) {
        self.provenance.push((name.to_owned(), value.to_owned()));
    }

    /// The environment nsys recorded for the capture, as the DeviceEnvironment row of
    /// TARGET_INFO_SYSTEM_ENV (`KEY=VALUE` pairs joined by `;`, in this order): where an MPI
    /// launcher ran nsys, its rank variables (`OMPI_COMM_WORLD_RANK=1`, `PMIX_RANK=1`, …).
    pub fn environment(&mut self, vars: &[(&str, &str)]) {
        let vars = vars.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned()));
        self.environment = Some(vars.collect());
    }

    /// A META_DATA_CAPTURE row (capture setting), e.g. `CUDA_GRAPH_TRACE_OPTIONS:MODE`.
    pub fn capture_setting(&mut self, name: &str, value: &str) {
        self.rows.capture.push((name.to_owned(), value.to_owned()));
    }

    fn bad(&self, why: String) -> Error {
        Error::BadData {
            file: self.label.clone(),
            why,
        }
    }

    /// A process, its main thread (tid = pid, named like the process, as Linux does) and, when
    /// `rank` is given, the `MPI Rank n` NVTX thread name nsys records for MPI ranks at `at`.
    pub fn add_process(&mut self, pid: u32, name: &str, rank: Option<u32>, at: i64) -> Process {
        self.rows.processes.push(ProcessRow {
            pid,
            name: name.to_owned(),
        });
        let p = Process { pid };
        let main = self.add_thread(p, pid, name);
        if let Some(r) = rank {
            self.nvtx_thread_name(main, at, &format!("MPI Rank {r}"));
        }
        p
    }

    pub fn main_thread(&self, p: Process) -> Thread {
        Thread {
            pid: p.pid,
            tid: p.pid,
        }
    }

    /// A thread with its ThreadNames row; Linux truncates thread names to 15 bytes.
    pub fn add_thread(&mut self, p: Process, tid: u32, name: &str) -> Thread {
        let short: String = name.chars().take(15).collect();
        let name_id = self.string(&short);
        let t = Thread { pid: p.pid, tid };
        self.rows.threads.push(ThreadRow {
            global_tid: t.global_tid(),
            name_id,
        });
        t
    }

    /// A GPU of the machine (TARGET_INFO_GPU row); `id` is the CUDA device ordinal.
    pub fn add_gpu(&mut self, id: u32, name: &str) -> Gpu {
        self.add_gpu_model(id, name, GpuModel::H100_SXM)
    }

    pub fn add_gpu_model(&mut self, id: u32, name: &str, model: GpuModel) -> Gpu {
        self.rows.gpus.push(GpuRow {
            id,
            name: name.to_owned(),
            model,
        });
        Gpu { id }
    }

    /// A stream of `p` on `gpu`. Contexts are numbered from 1 in order of first use per
    /// (process, device), as CUPTI does within a capture.
    pub fn add_stream(&mut self, p: Process, gpu: Gpu, stream: u32, kind: StreamKind) -> Stream {
        let next = self.contexts.len() as u32 + 1;
        let context = *self.contexts.entry((p.pid, gpu.id)).or_insert(next);
        if let StreamKind::Created { priority } = kind {
            self.rows.streams.push(StreamRow {
                pid: p.pid,
                context,
                stream,
                priority,
                flag: STREAM_FLAG_NON_BLOCKING,
            });
        }
        Stream {
            pid: p.pid,
            device: gpu.id,
            context,
            stream,
        }
    }

    /// The next CUPTI correlation id of a process: every traced API call takes one, and the GPU
    /// work it causes carries the same id.
    pub fn correlation(&mut self, pid: u32) -> u64 {
        // Every process counts from the same base, as in real multi-process exports: the ids only
        // mean something together with the process.
        let c = self.next_correlation.entry(pid).or_insert(2_610_000);
        *c += 1;
        *c
    }

    /// A CUDA API call. Names carry nsys's version suffix where the runtime has one
    /// (`cudaLaunchKernel_v7000`); driver calls (`cu*`) are eventClass 1.
    pub fn runtime_call(&mut self, t: Thread, start: i64, dur: i64, name: &str, corr: u64) {
        let name_id = self.string(name);
        let event_class = if name.starts_with("cuda") {
            EVENT_CLASS_RUNTIME
        } else {
            EVENT_CLASS_DRIVER
        };
        self.rows.runtime.push(RuntimeRow {
            start,
            end: start + dur,
            event_class,
            global_tid: t.global_tid(),
            correlation: corr,
            name_id,
        });
    }

    fn place(&self, s: Stream, start: i64, dur: i64, corr: Option<u64>) -> Result<GpuPlace> {
        if dur <= 0 {
            return Err(self.bad(format!("GPU operation at {start} has duration {dur}")));
        }
        Ok(GpuPlace {
            start,
            end: start + dur,
            device: s.device,
            context: s.context,
            stream: s.stream,
            correlation: corr,
            global_pid: global_pid(s.pid),
        })
    }

    /// A kernel execution launched by the API call with correlation id `corr`; `graph`: the
    /// graph and node it ran as (`--cuda-graph-trace=node`, `corr` then the `cudaGraphLaunch`'s).
    #[allow(clippy::too_many_arguments)]
    pub fn kernel(
        &mut self,
        s: Stream,
        start: i64,
        dur: i64,
        k: &KernelDef,
        grid: [u32; 3],
        block: [u32; 3],
        corr: u64,
        graph: Option<(i64, i64)>,
    ) -> Result<()> {
        let at = self.place(s, start, dur, Some(corr))?;
        let demangled = self.string(&k.demangled);
        let short = self.string(&k.short);
        let mangled = k.mangled.as_deref().map(|m| self.string(m));
        let grid_id = self.next_grid_id.entry(s.pid).or_insert(160_000);
        *grid_id += 1;
        self.rows.kernels.push(KernelRow {
            at,
            demangled,
            short,
            mangled,
            registers: k.registers,
            grid,
            block,
            static_smem: k.static_smem,
            dynamic_smem: k.dynamic_smem,
            grid_id: *grid_id,
            cluster: k.cluster,
            smem_executed: k.smem_executed,
            graph_id: graph.map(|g| g.0),
            graph_node_id: graph.map(|g| g.1),
        });
        Ok(())
    }

    /// A memory copy; kinds are ENUM_CUDA_MEMCPY_OPER / ENUM_CUDA_MEM_KIND ids.
    #[allow(clippy::too_many_arguments)]
    pub fn memcpy(
        &mut self,
        s: Stream,
        start: i64,
        dur: i64,
        bytes: u64,
        copy_kind: u32,
        src_kind: u32,
        dst_kind: u32,
        corr: u64,
    ) -> Result<()> {
        let at = self.place(s, start, dur, Some(corr))?;
        self.rows.memcpys.push(MemcpyRow {
            at,
            bytes,
            copy_kind,
            src_kind,
            dst_kind,
        });
        Ok(())
    }

    /// A memset of device memory.
    pub fn memset(
        &mut self,
        s: Stream,
        start: i64,
        dur: i64,
        bytes: u64,
        value: u32,
        corr: u64,
    ) -> Result<()> {
        let at = self.place(s, start, dur, Some(corr))?;
        self.rows.memsets.push(MemsetRow {
            at,
            bytes,
            value,
            mem_kind: 2,
        });
        Ok(())
    }

    /// One `CUPTI_ACTIVITY_KIND_GRAPH_TRACE` row: a whole graph launch (`--cuda-graph-trace=graph`).
    #[allow(clippy::too_many_arguments)]
    pub fn graph_launch(
        &mut self,
        s: Stream,
        start: i64,
        dur: i64,
        graph_id: i64,
        graph_exec_id: i64,
        corr: u64,
    ) -> Result<()> {
        let at = self.place(s, start, dur, Some(corr))?;
        self.rows.graph_traces.push(GraphTraceRow {
            at,
            graph_id,
            graph_exec_id,
        });
        Ok(())
    }

    fn nvtx_text(&mut self, text: NvtxText) -> (Option<String>, Option<i64>) {
        match text {
            NvtxText::Inline(s) => (Some(s.to_owned()), None),
            NvtxText::Registered(s) => (None, Some(self.string(s))),
        }
    }

    /// eventType 75: `nvtxDomainCreate`, naming `domain_id` for the thread's process.
    pub fn nvtx_domain_create(&mut self, t: Thread, at: i64, domain_id: i64, name: &str) {
        self.rows.nvtx.push(NvtxRow {
            start: at,
            event_type: event_type::NVTX_DOMAIN_CREATE,
            text: Some(name.to_owned()),
            global_tid: t.global_tid(),
            domain_id,
            ..NvtxRow::default()
        });
    }

    /// eventType 39: `nvtxNameOsThread`.
    pub fn nvtx_thread_name(&mut self, t: Thread, at: i64, name: &str) {
        self.rows.nvtx.push(NvtxRow {
            start: at,
            event_type: event_type::NVTX_THREAD_NAME,
            text: Some(name.to_owned()),
            global_tid: t.global_tid(),
            domain_id: 0,
            ..NvtxRow::default()
        });
    }

    /// A push/pop range of inline text `text` in the default domain, without payload.
    pub fn nvtx_range(&mut self, t: Thread, start: i64, end: i64, text: &str) -> Result<()> {
        self.nvtx_push_pop(t, start, end, NvtxText::Inline(text), 0, None)
    }

    /// eventType 59: a push/pop range on one thread; `json` is the extended payload as
    /// `nsys export --include-json=true` writes it to `jsonText`.
    pub fn nvtx_push_pop(
        &mut self,
        t: Thread,
        start: i64,
        end: i64,
        text: NvtxText,
        domain_id: i64,
        json: Option<String>,
    ) -> Result<()> {
        if end < start {
            return Err(self.bad(format!("NVTX range {text:?} ends before it starts")));
        }
        let (text, text_id) = self.nvtx_text(text);
        self.rows.nvtx.push(NvtxRow {
            start,
            end: Some(end),
            event_type: event_type::NVTX_PUSH_POP,
            text,
            global_tid: t.global_tid(),
            text_id,
            domain_id,
            json_text: json,
            ..NvtxRow::default()
        });
        Ok(())
    }

    /// eventType 33: `nvtxDomainNameCategory`, naming user category `category` of `domain_id`.
    pub fn nvtx_category(&mut self, t: Thread, at: i64, domain_id: i64, category: i64, name: &str) {
        self.rows.nvtx.push(NvtxRow {
            start: at,
            event_type: event_type::NVTX_CATEGORY,
            category: Some(category),
            text: Some(name.to_owned()),
            global_tid: t.global_tid(),
            domain_id,
            ..NvtxRow::default()
        });
    }

    /// A push/pop range in user category `category` (named by [`Self::nvtx_category`]).
    pub fn nvtx_push_pop_in_category(
        &mut self,
        t: Thread,
        start: i64,
        end: i64,
        text: NvtxText,
        domain_id: i64,
        category: i64,
    ) -> Result<()> {
        self.nvtx_push_pop(t, start, end, text, domain_id, None)?;
        if let Some(last) = self.rows.nvtx.last_mut() {
            last.category = Some(category);
        }
        Ok(())
    }

    /// eventType 60: a start/end range, which may end on another thread. Returns its range id.
    pub fn nvtx_start_end(
        &mut self,
        t: Thread,
        start: i64,
        end: i64,
        end_thread: Thread,
        text: NvtxText,
        domain_id: i64,
    ) -> Result<i64> {
        if end < start {
            return Err(self.bad(format!("NVTX range {text:?} ends before it starts")));
        }
        let (text, text_id) = self.nvtx_text(text);
        let id = self.next_range_id;
        self.next_range_id += 1;
        self.rows.nvtx.push(NvtxRow {
            start,
            end: Some(end),
            event_type: event_type::NVTX_START_END,
            range_id: Some(id),
            text,
            global_tid: t.global_tid(),
            end_global_tid: Some(end_thread.global_tid()),
            text_id,
            domain_id,
            ..NvtxRow::default()
        });
        Ok(id)
    }

    /// eventType 34: an instant mark.
    pub fn nvtx_mark(&mut self, t: Thread, at: i64, text: NvtxText, domain_id: i64) {
        let (text, text_id) = self.nvtx_text(text);
        self.rows.nvtx.push(NvtxRow {
            start: at,
            event_type: event_type::NVTX_MARK,
            text,
            global_tid: t.global_tid(),
            text_id,
            domain_id,
            ..NvtxRow::default()
        });
    }

    /// NCCL's payload schemas, registered once per process in the `NCCL` domain.
    pub fn nvtx_payload_schema(&mut self, schema: PayloadSchema) {
        self.rows.payload_schemas.push(schema);
    }

    /// The TARGET_INFO_GPU_METRICS catalogue of one GPU; returns its `typeId`.
    /// The GPU is the low byte of `typeId` (the rule nsys2prv relies on); the upper bits follow
    /// the serialized-id layout (hi16 = 1).
    pub fn gpu_metric_catalog(
        &mut self,
        gpu: Gpu,
        type_name: &str,
        metrics: &[(i64, &str)],
    ) -> i64 {
        let source_id = (1_i64 << 48) | (1_i64 << 32);
        let type_id = source_id | i64::from(gpu.id & 0xFF);
        for (metric_id, name) in metrics {
            self.rows.metric_types.push(GpuMetricTypeRow {
                type_id,
                source_id,
                type_name: type_name.to_owned(),
                metric_id: *metric_id,
                metric_name: (*name).to_owned(),
            });
        }
        type_id
    }

    pub fn gpu_metric(&mut self, type_id: i64, timestamp: i64, metric_id: i64, value: i64) {
        self.rows.metrics.push(GpuMetricRow {
            timestamp,
            type_id,
            metric_id,
            value,
        });
    }

    /// A row of `table`, one of the tables only some scenarios write ([`ExtraRows`]), with
    /// `columns` (apart by spaces; the same for every row of the table).
    pub fn extra_row(
        &mut self,
        table: &'static str,
        columns: &'static str,
        row: Vec<rusqlite::types::Value>,
    ) {
        match self.rows.extra.iter_mut().find(|e| e.table == table) {
            Some(e) => e.rows.push(row),
            None => self.rows.extra.push(ExtraRows {
                table,
                columns,
                rows: vec![row],
            }),
        }
    }

    /// The SQLite file, byte for byte deterministic for the same calls.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        super::write::to_bytes(self)
    }

    /// Writes the file to `path` (replacing it).
    pub fn write_path(&self, path: &std::path::Path) -> Result<()> {
        let bytes = self.to_bytes()?;
        std::fs::write(path, bytes).map_err(|e| Error::write(path.display(), e))
    }
}
