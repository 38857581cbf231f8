//! The timeline's rows: every host thread and GPU stream, in the trace's object order, with the
//! groups the page folds them into (node › process or rank › GPU).

use serde::Serialize;

use crate::model::{ObjectModel, ThreadId, ThreadKind};

#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// The Paraver thread (0-based index into the .row's threads).
    pub thread: u32,
    /// Short, unique inside its group: `thread 1234 (python)`, `stream 7`.
    pub label: String,
    /// The .row's full name.
    pub name: String,
    /// `host` or `gpu`.
    pub kind: &'static str,
    pub node: String,
    /// `rank 3` when the export tells the MPI rank, else `pid N`.
    pub process: String,
    /// The process's command (its executable's file name), when the export has it.
    pub command: Option<String>,
    /// The GPU of a stream (`GPU0 (NVIDIA H100)`); none for host threads.
    pub gpu: Option<String>,
}

/// Rows of the model's threads; `index[thread]` is the row of each thread (None: no row, as for
/// a GPU's metrics samples, which have no intervals to draw).
pub fn rows_of(objects: &ObjectModel) -> (Vec<Row>, Vec<Option<u32>>) {
    let mut rows = Vec::new();
    let mut index = Vec::with_capacity(objects.threads.len());
    for (i, t) in objects.threads.iter().enumerate() {
        let p = &objects.processes[t.process];
        let process = match p.rank {
            Some(r) => format!("rank {r}"),
            None => format!("pid {}", p.pid),
        };
        let command = p
            .name
            .rsplit('/')
            .next()
            .filter(|c| !c.is_empty())
            .map(str::to_owned);
        let node = objects.hosts[p.host].name.clone();
        let name = objects.thread_label(ThreadId(i as u32));
        let (label, kind, gpu) = match &t.kind {
            ThreadKind::Host { tid, name } => (
                match name {
                    Some(n) => format!("thread {tid} ({n})"),
                    None => format!("thread {tid}"),
                },
                "host",
                None,
            ),
            ThreadKind::GpuStream { device, stream, .. } => {
                // `stream 7` or `stream 7 ctx 2`, as the .row's name says it.
                let short = name
                    .find(" stream ")
                    .and_then(|k| name[k + 1..].split(" (").next())
                    .map_or_else(|| format!("stream {stream}"), str::to_owned);
                (short, "gpu", Some(objects.devices[*device].label()))
            }
            ThreadKind::GpuMetrics { .. } | ThreadKind::Nic { .. } => {
                index.push(None);
                continue;
            }
        };
        index.push(Some(rows.len() as u32));
        rows.push(Row {
            thread: i as u32,
            label,
            name,
            kind,
            node,
            process: process.clone(),
            command: command.clone(),
            gpu,
        });
    }
    (rows, index)
}
