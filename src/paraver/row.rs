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
        let _ = writeln!(out, "{}", clean_label(&label));
    }
    let _ = writeln!(out, "\nLEVEL THREAD SIZE {}", o.threads.len());
    for i in 0..o.threads.len() {
        let _ = writeln!(out, "{}", clean_label(&o.thread_label(ThreadId(i as u32))));
    }
    out
}
