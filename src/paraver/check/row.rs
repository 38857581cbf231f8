//! The .row checked against the header (docs/paraver-format.md §5): every `LEVEL X SIZE n` is
//! followed by exactly n labels (Paraver takes the next n lines, blank ones included), levels
//! match the header's object counts, and labels are unique within a level.

use std::collections::{BTreeMap, BTreeSet};

use super::header::Header;

const LEVELS: &[&str] = &[
    "WORKLOAD", "APPL", "TASK", "THREAD", "SYSTEM", "NODE", "CPU",
];

/// Object count the header implies for a row level, when it implies one.
fn expected(level: &str, h: &Header) -> Option<u64> {
    let resources = !h.nodes.is_empty();
    match level {
        "WORKLOAD" => Some(1),
        "APPL" => Some(h.appls.len() as u64),
        "TASK" => Some(h.total_tasks()),
        "THREAD" => Some(h.total_threads()),
        "SYSTEM" if resources => Some(1),
        "NODE" if resources => Some(h.nodes.len() as u64),
        "CPU" if resources => Some(h.total_cpus()),
        // Without a resource model the header has no nodes or CPUs to compare with.
        _ => None,
    }
}

/// `LEVEL <NAME> SIZE <N>` with single spaces, as Paraver's reader expects.
fn level_line(line: &str) -> Option<(&str, &str)> {
    let rest = line.strip_prefix("LEVEL ")?;
    let (name, size) = rest.split_once(" SIZE ")?;
    Some((name, size))
}

pub fn check(text: &str, header: Option<&Header>) -> Vec<String> {
    let mut problems = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut i = 0;
    while i < lines.len() {
        let line_no = i + 1;
        let line = lines[i].strip_suffix('\r').unwrap_or(lines[i]);
        i += 1;
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((name, size)) = level_line(line) else {
            problems.push(format!(
                "row line {line_no}: '{line}' is neither 'LEVEL <NAME> SIZE <N>' nor inside a level's labels"
            ));
            continue;
        };
        if !LEVELS.contains(&name) {
            problems.push(format!(
                "row line {line_no}: unknown level '{name}' (Paraver ignores it; levels are {})",
                LEVELS.join(", ")
            ));
            continue;
        }
        let n: usize = match size.parse() {
            Ok(n) if size.bytes().all(|b| b.is_ascii_digit()) => n,
            _ => {
                problems.push(format!(
                    "row line {line_no}: size '{size}' of level {name} is not an unsigned integer"
                ));
                continue;
            }
        };
        if let Some(first) = seen.insert(name.to_owned(), line_no) {
            problems.push(format!(
                "row line {line_no}: level {name} appears again (first at line {first}); Paraver appends the labels"
            ));
        }
        if let Some(want) = header.and_then(|h| expected(name, h)) {
            if n as u64 != want {
                problems.push(format!(
                    "row line {line_no}: level {name} has size {n} but the header declares {want}"
                ));
            }
        }
        let labels = &lines[i..i.saturating_add(n).min(lines.len())];
        if labels.len() < n {
            problems.push(format!(
                "row line {line_no}: level {name} announces {n} labels but the file ends after {}",
                labels.len()
            ));
        }
        let mut unique = BTreeSet::new();
        for (k, l) in labels.iter().enumerate() {
            let l = l.strip_suffix('\r').unwrap_or(l);
            let at = line_no + 1 + k;
            if l.is_empty() {
                problems.push(format!("row line {at}: empty label in level {name}"));
            } else if level_line(l).is_some() {
                problems.push(format!(
                    "row line {at}: level {name} has fewer labels than its size {n} (next LEVEL line taken as a label)"
                ));
            } else if !unique.insert(l) {
                problems.push(format!(
                    "row line {at}: label '{l}' repeats in level {name}"
                ));
            }
        }
        i += labels.len();
    }
    if !seen.contains_key("THREAD") {
        problems.push("row: no 'LEVEL THREAD SIZE n' block".into());
    }
    problems
}
