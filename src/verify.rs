//! A converted trace held against the exports it came from (`prvsight check TRACE --against
//! EXPORT…`): for every GPU stream, the time its row shows a kernel (or a memory operation) must
//! equal the union of that stream's kernel (memory operation) intervals read with plain SQL.
//! That is what Paraver's useful-time views measure, checked without the converter's own
//! reading code. It holds for a whole conversion; a trace cut to a window, or converted with
//! `--min-duration` or without the GPU families, differs by design.

use std::collections::BTreeMap;

use crate::error::Result;
use crate::nsys::stream_busy::{stream_busy, StreamBusy};
use crate::nsys::Export;
use crate::paraver::check::Report;

/// A stream as a trace's .row names it: (pid, CUDA device, stream, context when named).
type RowStream = (u32, u32, u32, Option<u32>);

/// One GPU stream compared.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamCheck {
    /// The row's name in the trace (or the stream's, when the trace has no row for it).
    pub label: String,
    pub trace: StreamBusy,
    pub export: StreamBusy,
}

impl StreamCheck {
    pub fn agrees(&self) -> bool {
        self.trace == self.export
    }
}

/// Every GPU stream of the exports and of the trace, compared.
pub fn against_exports(report: &Report, row: &str, exports: &[Export]) -> Result<Vec<StreamCheck>> {
    let mut expected: BTreeMap<(u32, u32, u32, u32), StreamBusy> = BTreeMap::new();
    for ex in exports {
        for (id, busy) in stream_busy(ex)? {
            let e = expected.entry(id).or_default();
            e.kernel_ns += busy.kernel_ns;
            e.memory_ns += busy.memory_ns;
        }
    }
    let rows = trace_streams(report, row);
    let mut out = Vec::new();
    for (key, (label, trace)) in &rows {
        let (pid, device, stream, context) = *key;
        let mut export = StreamBusy::default();
        // A row names its context only where the stream id recurs in another one.
        let matching = expected.iter_mut().filter(|((p, d, c, s), _)| {
            (*p, *d, *s) == (pid, device, stream) && context.is_none_or(|x| x == *c)
        });
        for (_, busy) in matching {
            export.kernel_ns += busy.kernel_ns;
            export.memory_ns += busy.memory_ns;
            // Counted: what is left over at the end has no row.
            *busy = StreamBusy::default();
        }
        out.push(StreamCheck {
            label: label.clone(),
            trace: *trace,
            export,
        });
    }
    for ((pid, device, context, stream), busy) in expected {
        if busy != StreamBusy::default() {
            out.push(StreamCheck {
                label: format!(
                    "GPU{device} stream {stream} ctx {context} (pid {pid}): no row in the trace"
                ),
                trace: StreamBusy::default(),
                export: busy,
            });
        }
    }
    Ok(out)
}

/// The trace's GPU stream rows, with the time each shows a kernel and a memory operation.
fn trace_streams(report: &Report, row: &str) -> BTreeMap<RowStream, (String, StreamBusy)> {
    let labels = thread_labels(row);
    // Global thread index of (task, thread), from the header's threads per task.
    let mut first_of_task = vec![0u64];
    if let Some(h) = &report.header {
        for task in h.appls.iter().flatten() {
            let last = *first_of_task.last().expect("starts with 0");
            first_of_task.push(last + u64::from(task.threads));
        }
    }
    let shown: BTreeMap<u64, StreamBusy> = report
        .stats
        .row_busy
        .iter()
        .filter_map(|r| {
            let first = first_of_task.get(usize::try_from(r.task).ok()?.checked_sub(1)?)?;
            let busy = StreamBusy {
                kernel_ns: r.kernel_ns,
                memory_ns: r.memory_ns,
            };
            Some((first + r.thread - 1, busy))
        })
        .collect();
    let mut out: BTreeMap<RowStream, (String, StreamBusy)> = BTreeMap::new();
    for (i, label) in labels.iter().enumerate() {
        let Some(key) = stream_of_label(label) else {
            continue;
        };
        let busy = shown.get(&(i as u64)).copied().unwrap_or_default();
        let e = out
            .entry(key)
            .or_insert_with(|| (label.clone(), StreamBusy::default()));
        e.1.kernel_ns += busy.kernel_ns;
        e.1.memory_ns += busy.memory_ns;
    }
    out
}

/// The thread names of a .row, in order.
fn thread_labels(row: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_threads = false;
    for line in row.lines() {
        if line.starts_with("LEVEL ") {
            in_threads = line.starts_with("LEVEL THREAD ");
        } else if in_threads && !line.is_empty() {
            out.push(line.to_owned());
        }
    }
    out
}

/// (pid, device, stream, context) of a stream row's name: `GPU0 (NAME) stream 7 [ctx 2]
/// ([rank R, ]pid P)`.
fn stream_of_label(label: &str) -> Option<RowStream> {
    let digits = |s: &str| -> Option<(u32, usize)> {
        let n = s.bytes().take_while(u8::is_ascii_digit).count();
        Some((s[..n].parse().ok()?, n))
    };
    let (device, _) = digits(label.strip_prefix("GPU")?)?;
    let at = label.rfind(" stream ")? + " stream ".len();
    let (stream, n) = digits(&label[at..])?;
    let rest = &label[at + n..];
    let context = match rest.strip_prefix(" ctx ") {
        Some(c) => Some(digits(c)?.0),
        None => None,
    };
    let pid_at = rest.rfind("pid ")? + "pid ".len();
    let (pid, _) = digits(&rest[pid_at..])?;
    Some((pid, device, stream, context))
}

#[cfg(test)]
mod tests {
    use super::stream_of_label;

    #[test]
    fn stream_rows_are_told_by_their_names() {
        assert_eq!(
            stream_of_label("GPU0 stream 7 (pid 144)"),
            Some((144, 0, 7, None))
        );
        assert_eq!(
            stream_of_label("GPU1 (NVIDIA H100 stream 3) stream 15 ctx 2 (rank 1, pid 9)"),
            Some((9, 1, 15, Some(2)))
        );
        assert_eq!(stream_of_label("python3 (pid 144, tid 144)"), None);
        assert_eq!(stream_of_label("GPU0 metrics (pid 1)"), None);
    }
}
