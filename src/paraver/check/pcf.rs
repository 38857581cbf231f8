//! The .pcf read the way Paraver's `PCFFileParser` reads it (docs/paraver-format.md §4), keeping
//! what it would keep and reporting every line it would silently drop or misread.

use std::collections::BTreeMap;

use serde::Serialize;

/// Largest type, value or state Paraver's pcf reader accepts (`std::stoi`, int32).
pub const PCF_INT_MAX: u64 = i32::MAX as u64;

/// One declared event type.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PcfType {
    pub label: String,
    /// `None` when its group has no `VALUES` list (values are plain numbers).
    pub values: Option<BTreeMap<u64, String>>,
    /// Line of its declaration (1-based).
    pub line: usize,
}

/// What the .pcf declares.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PcfInfo {
    pub states: BTreeMap<u32, String>,
    pub types: BTreeMap<u32, PcfType>,
}

impl PcfInfo {
    /// Types whose label is exactly `label` (Paraver cfgs select types by label).
    pub fn types_labelled(&self, label: &str) -> Vec<u32> {
        self.types
            .iter()
            .filter(|(_, t)| t.label == label)
            .map(|(&n, _)| n)
            .collect()
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Section {
    None,
    Options,
    Semantic,
    States,
    Colors,
    Events,
    Ignored,
}

fn section_of(line: &str) -> Option<Section> {
    Some(match line {
        "DEFAULT_OPTIONS" => Section::Options,
        "DEFAULT_SEMANTIC" => Section::Semantic,
        "STATES" => Section::States,
        "STATES_COLOR" => Section::Colors,
        "EVENT_TYPE" => Section::Events,
        "GRADIENT_COLOR" | "GRADIENT_NAMES" => Section::Ignored,
        _ => return None,
    })
}

/// Splits `NUMBER<spaces>REST` as Paraver does; the number must be plain digits for us.
fn number_and_rest(line: &str) -> (&str, &str) {
    match line.find(' ') {
        Some(i) => (&line[..i], line[i..].trim_start()),
        None => (line, ""),
    }
}

/// A pcf integer: plain digits, at most `PCF_INT_MAX` (larger ones are dropped by Paraver).
fn pcf_int(text: &str, what: &str, line_no: usize) -> Result<u64, String> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "pcf line {line_no}: {what} '{text}' is not an unsigned integer (Paraver drops the line)"
        ));
    }
    match text.parse::<u64>() {
        Ok(v) if v <= PCF_INT_MAX => Ok(v),
        _ => Err(format!(
            "pcf line {line_no}: {what} {text} exceeds 2^31-1 (Paraver silently drops the line)"
        )),
    }
}

/// Parses the pcf text. Returns what Paraver would load and the problems found. Long: one
/// state machine over the lines, its sections side by side.
pub fn parse(text: &str) -> (PcfInfo, Vec<String>) {
    let mut info = PcfInfo::default();
    let mut problems = Vec::new();
    let mut section = Section::None;
    // Current EVENT_TYPE group: its types, whether VALUES was seen, and the value labels seen.
    let mut group: Vec<u32> = Vec::new();
    // Type lines seen in the current block, kept or dropped.
    let mut attempted = 0usize;
    let mut in_values = false;
    let mut group_start = 0usize;
    let mut value_labels: BTreeMap<String, u64> = BTreeMap::new();

    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        if raw.is_empty() {
            continue;
        }
        let line = raw.replace('\t', " ");
        let line = line.trim_matches(' ');
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(s) = section_of(line) {
            if section == Section::Events {
                close_group(&mut group, group_start, attempted, &mut problems);
            }
            section = s;
            if s == Section::Events {
                group_start = line_no;
                attempted = 0;
                in_values = false;
                value_labels.clear();
            }
            continue;
        }
        match section {
            Section::None => problems.push(format!(
                "pcf line {line_no}: '{line}' is outside any section (Paraver ignores it)"
            )),
            Section::Options | Section::Semantic | Section::Ignored => {}
            Section::States => {
                let (n, label) = number_and_rest(line);
                match pcf_int(n, "state", line_no) {
                    Err(e) => problems.push(e),
                    Ok(_) if label.is_empty() => problems.push(format!(
                        "pcf line {line_no}: state {n} has no label (Paraver drops the line)"
                    )),
                    Ok(s) => {
                        if info.states.insert(s as u32, label.to_owned()).is_some() {
                            problems
                                .push(format!("pcf line {line_no}: state {s} is declared twice"));
                        }
                    }
                }
            }
            Section::Colors => {
                let (n, rgb) = number_and_rest(line);
                if let Err(e) = pcf_int(n, "colour index", line_no) {
                    problems.push(e);
                } else if !valid_rgb(rgb) {
                    problems.push(format!(
                        "pcf line {line_no}: colour '{rgb}' is not {{R,G,B}} with components 0-255"
                    ));
                }
            }
            Section::Events => {
                if line == "VALUES" {
                    if group.is_empty() {
                        problems.push(format!(
                            "pcf line {line_no}: VALUES before any event type of its block"
                        ));
                    }
                    in_values = true;
                    for t in &group {
                        if let Some(ty) = info.types.get_mut(t) {
                            ty.values.get_or_insert_with(BTreeMap::new);
                        }
                    }
                    continue;
                }
                if let Some(p) = line.strip_prefix("PRECISION") {
                    if pcf_int(p.trim(), "precision", line_no).is_err() {
                        problems.push(format!(
                            "pcf line {line_no}: PRECISION needs an unsigned integer"
                        ));
                    }
                    continue;
                }
                if in_values {
                    value_line(
                        line,
                        line_no,
                        &group,
                        &mut info,
                        &mut value_labels,
                        &mut problems,
                    );
                } else {
                    attempted += 1;
                    type_line(line, line_no, &mut group, &mut info, &mut problems);
                }
            }
        }
    }
    if section == Section::Events {
        close_group(&mut group, group_start, attempted, &mut problems);
    }
    check_unique_type_labels(&info, &mut problems);
    (info, problems)
}

/// Ends an EVENT_TYPE block; one with no type line at all is a problem (dropped lines already
/// were reported).
fn close_group(group: &mut Vec<u32>, start: usize, attempted: usize, problems: &mut Vec<String>) {
    if start > 0 && attempted == 0 {
        problems.push(format!(
            "pcf line {start}: EVENT_TYPE block declares no event type"
        ));
    }
    group.clear();
}

fn valid_rgb(s: &str) -> bool {
    let Some(inner) = s.strip_prefix('{').and_then(|s| s.strip_suffix('}')) else {
        return false;
    };
    let parts: Vec<&str> = inner.split(',').map(str::trim).collect();
    parts.len() == 3 && parts.iter().all(|p| p.parse::<u8>().is_ok())
}

/// `GRADIENT_FLAG TYPE LABEL`.
fn type_line(
    line: &str,
    line_no: usize,
    group: &mut Vec<u32>,
    info: &mut PcfInfo,
    problems: &mut Vec<String>,
) {
    let (flag, rest) = number_and_rest(line);
    let (ty, label) = number_and_rest(rest);
    if flag.is_empty() || !flag.bytes().all(|b| b.is_ascii_digit()) {
        problems.push(format!(
            "pcf line {line_no}: event type line '{line}' must be 'FLAG TYPE LABEL'"
        ));
        return;
    }
    let ty = match pcf_int(ty, "event type", line_no) {
        Ok(t) => t as u32,
        Err(e) => return problems.push(e),
    };
    if label.is_empty() {
        return problems.push(format!(
            "pcf line {line_no}: event type {ty} has no label (Paraver drops the line)"
        ));
    }
    if let Some(prev) = info.types.get(&ty) {
        problems.push(format!(
            "pcf line {line_no}: event type {ty} is declared again (first at line {})",
            prev.line
        ));
    }
    info.types.insert(
        ty,
        PcfType {
            label: label.to_owned(),
            values: None,
            line: line_no,
        },
    );
    group.push(ty);
}

/// `VALUE LABEL`, shared by every type of the group.
fn value_line(
    line: &str,
    line_no: usize,
    group: &[u32],
    info: &mut PcfInfo,
    labels: &mut BTreeMap<String, u64>,
    problems: &mut Vec<String>,
) {
    let (v, label) = number_and_rest(line);
    let v = match pcf_int(v, "event value", line_no) {
        Ok(v) => v,
        Err(e) => return problems.push(e),
    };
    if label.is_empty() {
        return problems.push(format!(
            "pcf line {line_no}: value {v} has no label (Paraver drops the line)"
        ));
    }
    if let Some(other) = labels.insert(label.to_owned(), v) {
        if other != v {
            problems.push(format!(
                "pcf line {line_no}: label '{label}' names both value {other} and value {v} of the same type"
            ));
        }
    }
    for t in group {
        // Every type of the group got its map when VALUES was read.
        let Some(values) = info.types.get_mut(t).and_then(|ty| ty.values.as_mut()) else {
            continue;
        };
        if values.insert(v, label.to_owned()).is_some() {
            problems.push(format!(
                "pcf line {line_no}: value {v} of event type {t} is declared twice"
            ));
        }
    }
}

/// Cfgs select event types by label (§6), so one label must name one type.
fn check_unique_type_labels(info: &PcfInfo, problems: &mut Vec<String>) {
    let mut by_label: BTreeMap<&str, Vec<u32>> = BTreeMap::new();
    for (t, ty) in &info.types {
        by_label.entry(ty.label.as_str()).or_default().push(*t);
    }
    for (label, types) in by_label {
        if types.len() > 1 {
            problems.push(format!(
                "pcf: event types {types:?} share the label '{label}' (a cfg selecting it by label picks them all)"
            ));
        }
    }
}
