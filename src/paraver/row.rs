//! The .row: names of every object, level by level, in header order.

use std::fmt::Write as _;

use super::pcf::clean_label;
use crate::model::{ObjectModel, ThreadId};

pub fn render(o: &ObjectModel) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "LEVEL CPU SIZE {}", o.hosts.len());
    for h in &o.hosts {
        let _ = writeln!(out, "{}", clean_label(&format!("{} CPU", h.name)));
    }
    let _ = writeln!(out, "\nLEVEL NODE SIZE {}", o.hosts.len());
    for h in &o.hosts {
        let _ = writeln!(out, "{}", clean_label(&h.name));
    }
    let _ = writeln!(out, "\nLEVEL APPL SIZE 1\nprvsight trace");
    let _ = writeln!(out, "\nLEVEL TASK SIZE {}", o.processes.len());
    for l in task_labels(o) {
        let _ = writeln!(out, "{l}");
    }
    let _ = writeln!(out, "\nLEVEL THREAD SIZE {}", o.threads.len());
    for l in thread_labels(o) {
        let _ = writeln!(out, "{l}");
    }
    out
}

/// The name of every process (Paraver task), in order, as the .row writes it.
pub fn task_labels(o: &ObjectModel) -> Vec<String> {
    let mut tasks = Vec::with_capacity(o.processes.len());
    for p in &o.processes {
        let name = if p.name.is_empty() {
            "process".to_owned()
        } else {
            p.name.clone()
        };
        let label = match p.rank {
            Some(r) => format!("rank {r}: {name} (pid {}, {})", p.pid, o.hosts[p.host].name),
            None => format!("{name} (pid {}, {})", p.pid, o.hosts[p.host].name),
        };
        tasks.push(clean_label(&label));
    }
    distinct(tasks)
}

/// The name of every thread (GPU streams included), in order, as the .row writes it.
pub fn thread_labels(o: &ObjectModel) -> Vec<String> {
    let threads = (0..o.threads.len()).map(|i| clean_label(&o.thread_label(ThreadId(i as u32))));
    distinct(threads.collect())
}

/// Labels name objects, so each must be unique in its level. Two processes can share a pid (and
/// name) when they ran on different machines or VMs of one export (globalPid's top 16 bits differ):
/// later ones get ` #2`, ` #3`, ... in order of appearance.
fn distinct(labels: Vec<String>) -> Vec<String> {
    let mut seen: std::collections::HashSet<String> = labels.iter().cloned().collect();
    let mut first = std::collections::HashSet::new();
    labels
        .into_iter()
        .map(|l| {
            if first.insert(l.clone()) {
                return l;
            }
            let mut k = 2;
            while seen.contains(&format!("{l} #{k}")) {
                k += 1;
            }
            let new = format!("{l} #{k}");
            seen.insert(new.clone());
            first.insert(new.clone());
            new
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn repeated_labels_are_numbered_in_order() {
        let l = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            super::distinct(l(&["a", "b", "a", "a #2", "a"])),
            l(&["a", "b", "a #3", "a #2", "a #4"])
        );
    }
}
