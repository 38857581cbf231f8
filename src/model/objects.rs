//! Resources of a trace: hosts, processes (one per report and pid), threads. A thread is a host
//! thread with activity, one GPU stream, a GPU's metrics or a NIC's metrics. The order here is
//! the Paraver object order: processes in input order, inside each its host threads first (by
//! tid), then its GPU streams (by device, stream), its GPU metrics threads, its NICs.

use serde::{Deserialize, Serialize};

/// Global index of a thread in [`ObjectModel::threads`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ThreadId(pub u32);

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Host {
    pub name: String,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Process {
    /// Index into [`ObjectModel::hosts`].
    pub host: usize,
    /// Which input file (0-based) the process comes from.
    pub source: usize,
    pub pid: u32,
    pub name: String,
    /// MPI rank when the export tells it.
    pub rank: Option<u32>,
}

/// One GPU of one host. GPUs are identified by (host, CUDA device ordinal).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Device {
    pub host: usize,
    pub cuda_id: u32,
    /// Marketing name when the export lists it (TARGET_INFO_GPU), else None.
    pub name: Option<String>,
    /// Device memory bandwidth, bytes/s, when the export lists it (TARGET_INFO_GPU).
    #[serde(default)]
    pub memory_bandwidth: Option<u64>,
}

impl Device {
    /// `GPU0 (NVIDIA H100)` or `GPU0`.
    pub fn label(&self) -> String {
        match &self.name {
            Some(n) => format!("GPU{} ({})", self.cuda_id, n),
            None => format!("GPU{}", self.cuda_id),
        }
    }
}

/// A network interface of one host whose metrics were sampled (`--nic-metrics`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Nic {
    pub host: usize,
    /// TARGET_INFO_NIC_INFO `nicId`, else the metrics' `globalId`.
    pub nic_id: i64,
    /// Interface name (`mlx5_0`) and device (`ConnectX-6`), when the export lists them.
    pub name: Option<String>,
    pub device: Option<String>,
}

impl Nic {
    /// `NIC 0 (mlx5_0, ConnectX-6)`, or as much of it as is known.
    pub fn label(&self) -> String {
        let known: Vec<&str> = [&self.name, &self.device]
            .into_iter()
            .flatten()
            .map(String::as_str)
            .collect();
        match known.is_empty() {
            true => format!("NIC {}", self.nic_id),
            false => format!("NIC {} ({})", self.nic_id, known.join(", ")),
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum ThreadKind {
    Host {
        tid: u32,
        name: Option<String>,
    },
    GpuStream {
        device: usize,
        context: u32,
        stream: u32,
    },
    /// Samples of a GPU's metrics (one pseudo-thread per GPU, in the process that uses it).
    GpuMetrics {
        device: usize,
    },
    /// Samples of a NIC's metrics (one pseudo-thread per NIC, in the host's first process).
    Nic {
        nic: usize,
    },
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ThreadObj {
    /// Index into [`ObjectModel::processes`].
    pub process: usize,
    pub kind: ThreadKind,
    /// Trace time of its first state-setting activity (GPU operation, CUDA call), if any.
    pub first_busy: Option<u64>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ObjectModel {
    pub hosts: Vec<Host>,
    pub processes: Vec<Process>,
    pub devices: Vec<Device>,
    /// Not written where empty, so traces without NICs serialize as before.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nics: Vec<Nic>,
    /// Grouped by process (processes in order), host threads before GPU streams.
    pub threads: Vec<ThreadObj>,
}

impl ObjectModel {
    pub fn thread(&self, id: ThreadId) -> &ThreadObj {
        &self.threads[id.0 as usize]
    }

    /// Paraver's 1-based (task, thread-in-task) of a thread; task = process.
    pub fn paraver_ids(&self) -> Vec<(u32, u32)> {
        let mut out = Vec::with_capacity(self.threads.len());
        let mut last_process = usize::MAX;
        let mut n = 0;
        for t in &self.threads {
            if t.process != last_process {
                last_process = t.process;
                n = 0;
            }
            n += 1;
            out.push((t.process as u32 + 1, n));
        }
        out
    }

    /// Number of threads per process, in process order.
    pub fn threads_per_process(&self) -> Vec<u32> {
        let mut v = vec![0u32; self.processes.len()];
        for t in &self.threads {
            v[t.process] += 1;
        }
        v
    }

    /// A readable, unique name for a thread as shown in Paraver's .row file.
    pub fn thread_label(&self, id: ThreadId) -> String {
        let t = self.thread(id);
        let p = &self.processes[t.process];
        match &t.kind {
            ThreadKind::Host { tid, name } => {
                let n = name.clone().unwrap_or_else(|| "thread".to_owned());
                match p.rank {
                    Some(r) => format!("{n} (rank {r}, pid {}, tid {tid})", p.pid),
                    None => format!("{n} (pid {}, tid {tid})", p.pid),
                }
            }
            ThreadKind::GpuMetrics { device } => {
                format!("{} metrics (pid {})", self.devices[*device].label(), p.pid)
            }
            ThreadKind::Nic { nic } => {
                let n = &self.nics[*nic];
                format!("{} metrics ({})", n.label(), self.hosts[n.host].name)
            }
            ThreadKind::GpuStream {
                device,
                stream,
                context,
            } => {
                let d = self.devices[*device].label();
                let ctx = if self.same_stream_in_other_context(id) {
                    format!(" ctx {context}")
                } else {
                    String::new()
                };
                match p.rank {
                    Some(r) => format!("{d} stream {stream}{ctx} (rank {r}, pid {})", p.pid),
                    None => format!("{d} stream {stream}{ctx} (pid {})", p.pid),
                }
            }
        }
    }

    /// True when another stream of the same process, device and stream number exists in another
    /// context: then the context must be part of the name for names to stay unique.
    fn same_stream_in_other_context(&self, id: ThreadId) -> bool {
        let t = self.thread(id);
        let ThreadKind::GpuStream {
            device,
            context,
            stream,
        } = t.kind
        else {
            return false;
        };
        self.threads.iter().any(|o| {
            o.process == t.process
                && matches!(o.kind, ThreadKind::GpuStream { device: d, context: c, stream: s }
                    if d == device && s == stream && c != context)
        })
    }

    /// GPU streams, GPU metrics and NIC threads: Idle when nothing runs, not host Running.
    pub fn idle_by_default(&self, id: ThreadId) -> bool {
        matches!(
            self.thread(id).kind,
            ThreadKind::GpuStream { .. } | ThreadKind::GpuMetrics { .. } | ThreadKind::Nic { .. }
        )
    }
}
