//! What each record becomes in the JSON: its name and the arguments that hold what the .prv
//! holds of it (docs/TRACE-FORMAT.md, "Chrome/Perfetto JSON").

use super::json::{quoted, Args};
use crate::model::nccl::{self, NcclKernelInfo, NcclPayload};
use crate::model::*;
use crate::paraver::events::{
    mem_kind_value, memcpy_value, MEMCPY_KIND_LABELS, MEMSET_LABEL, MEM_KIND_LABELS,
};

/// Every interned name as a JSON string literal, escaped the first time it is written: a
/// kernel's long name is escaped once, not once per launch. Grows with distinct names only.
#[derive(Default)]
pub struct NameCache {
    quoted: Vec<Option<Box<str>>>,
}

impl NameCache {
    pub fn get(&mut self, names: &Names, id: NameId) -> &str {
        let i = id.0 as usize;
        if i >= self.quoted.len() {
            self.quoted.resize(i + 1, None);
        }
        self.quoted[i].get_or_insert_with(|| match id.0 {
            0 => quoted(""),
            _ => quoted(names.get(id)),
        })
    }
}

/// Label of entry `code` (1-based, 0 = none) of one of NCCL's code tables.
fn label(table: &'static [&'static str], code: u32) -> Option<&'static str> {
    code.checked_sub(1)
        .and_then(|i| table.get(i as usize))
        .copied()
}

fn mem_kind(kind: u32) -> &'static str {
    MEM_KIND_LABELS[mem_kind_value(kind) as usize - 1]
}

/// The name of a memory copy: its direction as the .pcf labels it.
pub fn memcpy_name(m: &Memcpy) -> &'static str {
    MEMCPY_KIND_LABELS[memcpy_value(m.copy_kind) as usize - 1]
}

pub const MEMSET_NAME: &str = MEMSET_LABEL;

/// Arguments of a GPU operation; `nccl` is what an NCCL kernel's name and the payload of the
/// NCCL range that launched it tell.
pub fn gpu_args(
    a: &mut Args,
    op: &GpuOp,
    cache: &mut NameCache,
    names: &Names,
    nccl: (Option<NcclKernelInfo>, Option<&NcclPayload>),
) {
    match &op.kind {
        GpuOpKind::Kernel(k) => {
            a.quoted("short_name", cache.get(names, k.short_name));
            a.triple("grid", k.grid);
            a.triple("block", k.block);
            a.u64("registers_per_thread", u64::from(k.registers_per_thread));
            a.u64("static_shared_memory", u64::from(k.static_shared_memory));
            a.u64("dynamic_shared_memory", u64::from(k.dynamic_shared_memory));
            a.u64(
                "local_memory_per_thread",
                u64::from(k.local_memory_per_thread),
            );
            a.u64("local_memory_total", k.local_memory_total);
            if k.class == KernelClass::Communication {
                a.str("class", "communication");
            }
        }
        GpuOpKind::Memcpy(m) => {
            a.u64("bytes", m.bytes);
            if let Some(k) = m.src_kind {
                a.str("src_kind", mem_kind(k));
            }
            if let Some(k) = m.dst_kind {
                a.str("dst_kind", mem_kind(k));
            }
        }
        GpuOpKind::Memset(m) => {
            a.u64("bytes", m.bytes);
            a.u64("value", m.value);
            if let Some(k) = m.mem_kind {
                a.str("mem_kind", mem_kind(k));
            }
        }
        GpuOpKind::Graph(g) => {
            a.u64("graph_id", g.graph_id);
            a.u64("graph_exec_id", g.exec_id);
        }
    }
    a.u64("correlation_id", op.correlation_id);
    a.opt_u64("graph_node_id", op.graph_node_id);
    if let Some(i) = nccl.0 {
        let fields = [
            ("nccl_collective", label(nccl::COLLECTIVES, i.collective)),
            ("nccl_algorithm", label(nccl::ALGORITHMS, i.algorithm)),
            ("nccl_protocol", label(nccl::PROTOCOLS, i.protocol)),
            ("nccl_datatype", label(nccl::DATATYPES, i.datatype)),
            ("nccl_op", label(nccl::OPS, i.op)),
        ];
        for (k, v) in fields {
            if let Some(v) = v {
                a.str(k, v);
            }
        }
    }
    if let Some(p) = nccl.1 {
        payload_args(a, p);
    }
}

/// The fields of an NCCL range's payload (ranks 0-based, as NCCL numbers them).
pub fn payload_args(a: &mut Args, p: &NcclPayload) {
    a.opt_u64("message_bytes", p.message_bytes);
    if let Some(op) = p.op.and_then(|c| label(nccl::OPS, c)) {
        a.str("reduction_op", op);
    }
    if let Some(t) = p.datatype.and_then(|c| label(nccl::DATATYPES, c)) {
        a.str("data_type", t);
    }
    a.opt_u64("root_or_peer", p.peer);
    a.opt_u64("communicator", p.communicator);
    a.opt_u64("ranks", p.ranks);
    a.opt_u64("rank", p.rank);
}

/// Arguments of a host call.
pub fn host_args(a: &mut Args, call: &HostCall, cache: &mut NameCache, names: &Names) {
    match &call.kind {
        HostCallKind::Cuda(c) => {
            a.u64("correlation_id", c.correlation_id);
            let layer = match c.layer {
                ApiLayer::Runtime => "runtime",
                ApiLayer::Driver => "driver",
            };
            a.str("layer", layer);
        }
        HostCallKind::Mpi(m) => {
            a.opt_u64("bytes_sent", m.bytes_sent);
            a.opt_u64("bytes_received", m.bytes_received);
            a.opt_i64("peer", m.peer);
            a.opt_i64("tag", m.tag);
            a.opt_i64("root", m.root);
            a.opt_i64("communicator", m.communicator);
            if m.requests > 1 {
                a.u64("requests", u64::from(m.requests));
            }
        }
        HostCallKind::Os(_) => {}
        HostCallKind::OpenAcc(o) => {
            let kind = crate::model::classify::ACC_EVENT_KINDS
                .get(o.event_kind as usize)
                .copied();
            match kind {
                Some(k) => a.str("event_kind", k),
                None => a.u64("event_kind", u64::from(o.event_kind)),
            }
            a.quoted("construct", cache.get(names, o.construct));
            if let Some(f) = o.function {
                a.quoted("function", cache.get(names, f));
            }
            a.opt_u64("bytes", o.bytes);
            if let Some(k) = o.kernel {
                a.quoted("kernel", cache.get(names, k));
            }
        }
    }
}

/// Arguments of an NVTX range; `domain` is its domain's name, quoted.
pub fn nvtx_args(
    a: &mut Args,
    r: &NvtxRange,
    domain: &str,
    cache: &mut NameCache,
    names: &Names,
    payload: Option<&NcclPayload>,
) {
    a.quoted("domain", domain);
    let kind = match r.kind {
        NvtxRangeKind::PushPop => "push/pop",
        NvtxRangeKind::StartEnd => "start/end",
    };
    a.str("kind", kind);
    if let Some(c) = r.category {
        a.quoted("category", cache.get(names, c));
    }
    if let Some(c) = r.color {
        a.str("color", &format!("#{:06x}", c & 0xff_ffff));
    }
    if r.unterminated {
        a.bool("unterminated", true);
    }
    if let Some(p) = payload {
        payload_args(a, p);
    } else if let Some(j) = &r.payload_json {
        a.str("payload", j);
    }
}
