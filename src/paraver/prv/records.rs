//! The record writers: what each GPU operation, host call, NVTX range, link and MPI message
//! writes.

use super::super::events::*;
use super::super::line::push_u64;
use super::super::{mpi, states};
use super::{ParaverWriter, ValueLabels, MAX_EVENT_VALUE};
use crate::error::Result;
use crate::model::*;
use crate::options::Family;

impl ParaverWriter<'_> {
    pub(super) fn name_value(n: NameId) -> u64 {
        u64::from(n.0) + NAME_VALUE_OFFSET
    }

    /// NCCL facts of a communication kernel: parsed from its name, and the payload of the NCCL
    /// range whose launch call caused it.
    fn nccl_kernel_pairs(
        &mut self,
        op: &GpuOp,
        name: NameId,
        names: &Names,
        pairs: &mut Vec<(u32, u64)>,
        labels: &mut Vec<ValueLabels>,
    ) {
        use crate::model::nccl::parse_kernel_name;
        let info = *self
            .nccl_names
            .entry(name)
            .or_insert_with(|| parse_kernel_name(names.get(name)));
        if let Some(i) = info {
            for (ty, v, l) in [
                (NCCL_COLLECTIVE, i.collective, ValueLabels::NcclCollective),
                (NCCL_ALGORITHM, i.algorithm, ValueLabels::NcclAlgorithm),
                (NCCL_PROTOCOL, i.protocol, ValueLabels::NcclProtocol),
                (NCCL_DATATYPE, i.datatype, ValueLabels::NcclDatatype),
                (NCCL_KERNEL_OP, i.op, ValueLabels::NcclOp),
            ] {
                if v != 0 {
                    pairs.push((ty, u64::from(v)));
                    labels.push(l);
                }
            }
        }
        let key = (self.process_of[op.thread.0 as usize], op.correlation_id);
        if let Some(payload) = self.nccl_pending.remove(&key) {
            for (ty, v) in payload {
                labels.push(nccl_payload_labels(ty));
                pairs.push((ty, v));
            }
        }
    }

    pub(super) fn gpu(&mut self, op: &GpuOp, names: &Names) -> Result<()> {
        self.busy(
            op.thread,
            op.start,
            op.end,
            op.next_on_stream,
            states::of_gpu_op(&op.kind),
        )?;
        let family = match op.kind {
            GpuOpKind::Kernel(_) => Family::Kernel,
            GpuOpKind::Memcpy(_) => Family::Memcpy,
            GpuOpKind::Memset(_) => Family::Memset,
            GpuOpKind::Graph(_) => Family::Graphs,
        };
        if self.too_short(family, op.start, op.end) {
            return Ok(());
        }
        use ValueLabels::*;
        // The pairs are built in buffers kept between records (no allocation per operation).
        let mut pairs = std::mem::take(&mut self.pairs);
        let mut labels = std::mem::take(&mut self.labels);
        pairs.clear();
        labels.clear();
        match &op.kind {
            GpuOpKind::Kernel(k) => {
                let ty = if k.class == KernelClass::Communication {
                    COMM_KERNEL
                } else {
                    KERNEL
                };
                pairs.extend_from_slice(&[
                    (ty, Self::name_value(k.name)),
                    (KERNEL_SHORT_NAME, Self::name_value(k.short_name)),
                    (GRID_X, u64::from(k.grid[0])),
                    (GRID_Y, u64::from(k.grid[1])),
                    (GRID_Z, u64::from(k.grid[2])),
                    (BLOCK_X, u64::from(k.block[0])),
                    (BLOCK_Y, u64::from(k.block[1])),
                    (BLOCK_Z, u64::from(k.block[2])),
                    (STATIC_SHARED_MEMORY, u64::from(k.static_shared_memory)),
                    (DYNAMIC_SHARED_MEMORY, u64::from(k.dynamic_shared_memory)),
                    (LOCAL_MEMORY_TOTAL, k.local_memory_total),
                    (REGISTERS_PER_THREAD, u64::from(k.registers_per_thread)),
                    (
                        LOCAL_MEMORY_PER_THREAD,
                        u64::from(k.local_memory_per_thread),
                    ),
                    (CORRELATION_ID, op.correlation_id),
                ]);
                labels.extend([Names, Names]);
                labels.resize(pairs.len(), Numeric);
                if k.class == KernelClass::Communication {
                    self.nccl_kernel_pairs(op, k.name, names, &mut pairs, &mut labels);
                }
            }
            GpuOpKind::Memcpy(m) => {
                pairs.extend_from_slice(&[
                    (GPU_MEMORY_OP, memcpy_value(m.copy_kind)),
                    (MEMORY_OP_BYTES, m.bytes),
                    (MEMCPY_SRC_KIND, m.src_kind.map_or(0, mem_kind_value)),
                    (MEMCPY_DST_KIND, m.dst_kind.map_or(0, mem_kind_value)),
                    (CORRELATION_ID, op.correlation_id),
                ]);
                labels.extend_from_slice(&[MemoryOps, Numeric, MemKinds, MemKinds, Numeric]);
            }
            GpuOpKind::Memset(m) => {
                pairs.extend_from_slice(&[
                    (GPU_MEMORY_OP, MEMSET_OP_VALUE),
                    (MEMORY_OP_BYTES, m.bytes),
                    (MEMSET_VALUE, m.value),
                    (CORRELATION_ID, op.correlation_id),
                ]);
                labels.extend_from_slice(&[MemoryOps, Numeric, Numeric, Numeric]);
            }
            GpuOpKind::Graph(gx) => {
                pairs.extend_from_slice(&[
                    (GRAPH_EXEC, Self::name_value(gx.name)),
                    (GRAPH_ID, gx.graph_id),
                    (GRAPH_EXEC_ID, gx.exec_id),
                    (CORRELATION_ID, op.correlation_id),
                ]);
                labels.extend_from_slice(&[Names, Numeric, Numeric, Numeric]);
            }
        }
        if let Some(node) = op.graph_node_id {
            pairs.push((GRAPH_NODE_ID, node));
            labels.push(Numeric);
        }
        let written = self.interval(op.thread, op.start, op.end, &pairs, &labels, true);
        self.pairs = pairs;
        self.labels = labels;
        written
    }

    pub(super) fn host(&mut self, call: &HostCall, names: &Names) -> Result<()> {
        self.busy(
            call.thread,
            call.start,
            call.end,
            call.next_on_thread,
            states::of_host(call.activity),
        )?;
        let family = match call.kind {
            HostCallKind::Cuda(_) => Family::CudaApi,
            HostCallKind::Mpi(_) => Family::Mpi,
            HostCallKind::Os(_) => Family::Osrt,
            HostCallKind::OpenAcc(_) => Family::OpenAcc,
        };
        if self.too_short(family, call.start, call.end) {
            return Ok(());
        }
        match &call.kind {
            HostCallKind::Cuda(c) => {
                self.note_nccl_launch(call, c, names);
                let pairs = [
                    (CUDA_API, Self::name_value(c.name)),
                    (CORRELATION_ID, c.correlation_id),
                ];
                self.interval(
                    call.thread,
                    call.start,
                    call.end,
                    &pairs,
                    &[ValueLabels::Names, ValueLabels::Numeric],
                    true,
                )
            }
            HostCallKind::OpenAcc(a) => {
                let c = match a.class {
                    AccClass::Other => 0,
                    AccClass::Data => 1,
                    AccClass::Launch => 2,
                };
                let mut pairs = vec![
                    (ACC_EVENT_KIND + c, u64::from(a.event_kind) + 1),
                    (ACC_CONSTRUCT + c, Self::name_value(a.construct)),
                ];
                let mut labels = vec![ValueLabels::AccKind, ValueLabels::Names];
                if let Some(f) = a.function {
                    pairs.push((ACC_FUNCTION + c, Self::name_value(f)));
                    labels.push(ValueLabels::Names);
                }
                if let (Some(b), AccClass::Data) = (a.bytes, a.class) {
                    pairs.push((ACC_BYTES, b));
                    labels.push(ValueLabels::Numeric);
                }
                if let Some(k) = a.kernel {
                    pairs.push((ACC_KERNEL, Self::name_value(k)));
                    labels.push(ValueLabels::Names);
                }
                self.interval(call.thread, call.start, call.end, &pairs, &labels, true)
            }
            HostCallKind::Os(o) => {
                let pairs = [(OS_CALL, Self::name_value(o.name))];
                self.interval(
                    call.thread,
                    call.start,
                    call.end,
                    &pairs,
                    &[ValueLabels::Names],
                    true,
                )
            }
            HostCallKind::Mpi(m) => {
                let name = names.get(m.name);
                let value =
                    mpi::extrae_value(name).unwrap_or(mpi::UNKNOWN_MPI_BASE + u64::from(m.name.0));
                let mut pairs = vec![(mpi::type_of(name, m.class), value)];
                let mut labels = vec![ValueLabels::Mpi];
                if m.class == MpiClass::Collective {
                    pairs.push((mpi::MPI_GLOBAL_SEND_SIZE, m.bytes_sent.unwrap_or(0)));
                    pairs.push((mpi::MPI_GLOBAL_RECV_SIZE, m.bytes_received.unwrap_or(0)));
                    labels.extend([ValueLabels::Numeric; 2]);
                } else if m.class == MpiClass::PointToPoint {
                    pairs.push((mpi::MPI_P2P_SIZE, m.bytes_sent.unwrap_or(0)));
                    let peer = m.peer.and_then(|p| u64::try_from(p + 1).ok()).unwrap_or(0);
                    pairs.push((mpi::MPI_P2P_PEER, peer));
                    labels.extend([ValueLabels::Numeric; 2]);
                }
                self.interval(call.thread, call.start, call.end, &pairs, &labels, true)
            }
        }
    }

    /// A kernel launch inside an open NCCL range carries that range's payload to its kernel.
    fn note_nccl_launch(&mut self, call: &HostCall, c: &CudaCall, names: &Names) {
        let open = &mut self.threads[call.thread.0 as usize].nccl_open;
        open.retain(|(end, _)| *end > call.start);
        if let Some((_, payload)) = open.last() {
            if !payload.is_empty() && names.get(c.name).contains("LaunchKernel") {
                let key = (self.process_of[call.thread.0 as usize], c.correlation_id);
                self.nccl_pending.insert(key, payload.clone());
            }
        }
    }

    /// True when `--min-duration` leaves this region out of the events.
    fn too_short(&self, family: Family, start: Ns, end: Ns) -> bool {
        self.min_duration
            .get(&family)
            .is_some_and(|&min| end - start < min)
    }

    pub(super) fn nvtx(&mut self, r: &NvtxRange) -> Result<()> {
        if self.too_short(Family::Nvtx, r.start, r.end) {
            return Ok(());
        }
        let value = Self::name_value(r.name);
        let mut pairs: Vec<(u32, u64)> = Vec::with_capacity(3);
        let mut labels = Vec::with_capacity(3);
        match r.kind {
            NvtxRangeKind::PushPop => {
                let base = self.domain_types[r.domain as usize];
                pairs.push((base, value));
                labels.push(ValueLabels::Names);
                // Nesting level: ranges of this thread and domain still open at our start.
                let open = self.threads[r.thread.0 as usize]
                    .nvtx_open
                    .entry(r.domain)
                    .or_default();
                open.retain(|&e| e > r.start);
                open.push(r.end);
                // The NCCL domain's neighbours (9501+) hold NCCL payload fields: no level types there.
                if base != NVTX_NCCL_DOMAIN {
                    let level = (open.len() as u32).min(NVTX_MAX_LEVEL);
                    pairs.push((base + level, value));
                    labels.push(ValueLabels::Names);
                }
            }
            NvtxRangeKind::StartEnd => {
                pairs.push((NVTX_START_END, value));
                labels.push(ValueLabels::Names);
            }
        }
        if let Some(c) = r.category {
            pairs.push((NVTX_CATEGORY, Self::name_value(c)));
            labels.push(ValueLabels::Names);
        }
        if self.domain_types[r.domain as usize] == NVTX_NCCL_DOMAIN {
            let payload = r
                .payload_json
                .as_deref()
                .and_then(crate::model::nccl::parse_payload)
                .map(|p| nccl_payload_pairs(&p))
                .unwrap_or_default();
            for (ty, v) in &payload {
                pairs.push((*ty, *v));
                labels.push(nccl_payload_labels(*ty));
            }
            let open = &mut self.threads[r.thread.0 as usize].nccl_open;
            open.retain(|(end, _)| *end > r.start);
            open.push((r.end, payload));
        }
        let json = r.payload_json.as_deref();
        (self.payloads).pairs(r.domain, json, &mut pairs, &mut labels);
        self.interval(r.thread, r.start, r.end, &pairs, &labels, false)
    }

    pub(super) fn link(&mut self, l: &Link) -> Result<()> {
        let (st, sth) = self.ids[l.from.0 as usize];
        let (rt, rth) = self.ids[l.to.0 as usize];
        let tag = match l.kind {
            LinkKind::Launch => TAG_LAUNCH,
            LinkKind::Memory => TAG_MEMORY,
        };
        let recv = [
            u64::from(rt),
            u64::from(rth),
            l.recv,
            l.recv,
            l.bytes.min(MAX_EVENT_VALUE),
            tag,
        ];
        self.write_communication([u64::from(st), u64::from(sth), l.send, l.send], recv)
    }

    /// `3:0:1:task:thread:lsend:psend:0:1:task:thread:lrecv:precv:size:tag`, written.
    fn write_communication(&mut self, send: [u64; 4], recv: [u64; 6]) -> Result<()> {
        self.tally.comm(recv[5]);
        // Task and thread, then the two times (through the kept timestamps), on either side.
        self.write_built(|w, s| {
            s.extend_from_slice(b"3:0:1:");
            for (k, v) in send.into_iter().enumerate() {
                if k < 2 {
                    push_u64(s, v);
                } else {
                    w.stamps.push(s, v);
                }
                s.push(b':');
            }
            s.extend_from_slice(b"0:1:");
            for (k, v) in recv.into_iter().enumerate() {
                if (2..4).contains(&k) {
                    w.stamps.push(s, v);
                } else {
                    push_u64(s, v);
                }
                s.push(b':');
            }
            s.pop();
        })
    }
}

/// Event type of GPU metric `id`: 9400 + id as nsys2prv numbers them (its cfgs rely on it), or
/// 94 000 000 + id for ids that would run into the NCCL/NVTX types above 9500.
pub fn metric_type(id: u32) -> u32 {
    if id < 100 {
        9400 + id
    } else {
        94_000_000 + id
    }
}

/// The Paraver pairs of an NCCL payload (absent fields are not written; ranks as rank + 1).
fn nccl_payload_pairs(p: &crate::model::nccl::NcclPayload) -> Vec<(u32, u64)> {
    let mut v = Vec::new();
    let mut push = |ty, x: Option<u64>| {
        if let Some(x) = x {
            v.push((ty, x));
        }
    };
    push(NCCL_MESSAGE_SIZE, p.message_bytes);
    push(NCCL_REDUCTION_OP, p.op.map(u64::from));
    push(NCCL_PAYLOAD_DATATYPE, p.datatype.map(u64::from));
    push(NCCL_PEER, p.peer.map(|r| r + 1));
    push(NCCL_COMMUNICATOR, p.communicator);
    push(NCCL_RANKS, p.ranks);
    push(NCCL_RANK, p.rank.map(|r| r + 1));
    v
}

fn nccl_payload_labels(ty: u32) -> ValueLabels {
    match ty {
        NCCL_REDUCTION_OP => ValueLabels::NcclOp,
        NCCL_PAYLOAD_DATATYPE => ValueLabels::NcclDatatype,
        _ => ValueLabels::Numeric,
    }
}

impl ParaverWriter<'_> {
    /// `3:` record of an MPI message: logical send = physical send = send call start; logical
    /// receive = receive posted, physical receive = message available; tag = the MPI tag.
    pub(super) fn message(&mut self, m: &Message) -> Result<()> {
        let (st, sth) = self.ids[m.from.0 as usize];
        let (rt, rth) = self.ids[m.to.0 as usize];
        let recv = [
            u64::from(rt),
            u64::from(rth),
            m.recv_posted,
            m.recv,
            m.bytes.min(MAX_EVENT_VALUE),
            m.tag.min(MAX_EVENT_VALUE),
        ];
        self.write_communication([u64::from(st), u64::from(sth), m.send, m.send], recv)
    }
}
