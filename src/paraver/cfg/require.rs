//! What a cfg requires of a trace (docs/paraver-format.md §6): event types that resolve (by label,
//! else by number) to types declared in the .pcf and present in the body, labels equal to the
//! pcf's, objects and levels the trace has, valid window references in composed windows and
//! histograms, and the records each semantic function reads.

use std::collections::BTreeMap;

use super::names;
use super::{Cfg, Level, Window, WindowKind};
use crate::paraver::check::{self, Header, PcfInfo, Report};
use crate::paraver::written::Written;

/// What a checked trace offers to a cfg.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceFacts {
    /// Event types declared in the .pcf → label.
    pub pcf_types: BTreeMap<u32, String>,
    /// States declared in the .pcf → label.
    pub pcf_states: BTreeMap<u32, String>,
    /// Event types present in the body → occurrences.
    pub event_types: BTreeMap<u32, u64>,
    /// States present in the body → records.
    pub states: BTreeMap<u32, u64>,
    /// Communication tags present in the body → records.
    pub comm_tags: BTreeMap<u64, u64>,
    /// Threads of each task, per application.
    pub appls: Vec<Vec<u32>>,
    /// CPUs per node; empty without a resource model.
    pub nodes: Vec<u32>,
}

impl TraceFacts {
    pub fn from_report(r: &Report) -> Self {
        let (appls, nodes) = header_objects(r.header.as_ref());
        TraceFacts {
            pcf_types: labels(&r.pcf),
            pcf_states: r.pcf.states.clone(),
            event_types: r.stats.event_types.clone(),
            states: r.stats.states.clone(),
            comm_tags: r.stats.comm_tags.clone(),
            appls,
            nodes,
        }
    }

    /// The facts of a trace as its writer reports it ([`Written`]) with its .pcf: what
    /// [`from_report`](Self::from_report) gives on the files, without reading the body back.
    pub fn from_written(w: &Written, pcf: &str) -> Self {
        let (appls, nodes) = header_objects(check::parse_header(&w.header).0.as_ref());
        let pcf = check::parse_pcf(pcf).0;
        TraceFacts {
            pcf_types: labels(&pcf),
            pcf_states: pcf.states,
            event_types: w.body.event_types.clone(),
            states: w.body.states.clone(),
            comm_tags: w.body.comm_tags.clone(),
            appls,
            nodes,
        }
    }

    fn types_labelled(&self, label: &str) -> Vec<u32> {
        self.pcf_types
            .iter()
            .filter(|(_, l)| *l == label)
            .map(|(t, _)| *t)
            .collect()
    }

    fn occurs(&self, ty: u64) -> bool {
        u32::try_from(ty).is_ok_and(|t| self.event_types.contains_key(&t))
    }
}

/// Threads of each task per application, and CPUs per node, as the header declares them.
fn header_objects(header: Option<&Header>) -> (Vec<Vec<u32>>, Vec<u32>) {
    match header {
        Some(h) => (
            h.appls
                .iter()
                .map(|a| a.iter().map(|t| t.threads).collect())
                .collect(),
            h.nodes.clone(),
        ),
        None => (Vec::new(), Vec::new()),
    }
}

/// Event type → label, from a parsed .pcf.
fn labels(pcf: &PcfInfo) -> BTreeMap<u32, String> {
    pcf.types
        .iter()
        .map(|(t, d)| (*t, d.label.clone()))
        .collect()
}

/// How much a finding matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    /// Paraver refuses the cfg or one of its windows/histograms, or a view cannot show any data.
    Error,
    /// The views load and show data, but not everything the cfg names (a listed event type is
    /// absent, a line is ignored...).
    Warning,
}

/// One thing wrong with a cfg, or missing from the trace it is applied to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub severity: Severity,
    pub message: String,
}

/// Findings in order: the cfg's own syntax first, then what the trace lacks.
#[derive(Default)]
struct Out(Vec<Finding>);

impl Out {
    fn error(&mut self, message: String) {
        self.0.push(Finding {
            severity: Severity::Error,
            message,
        });
    }
    fn warn(&mut self, message: String) {
        self.0.push(Finding {
            severity: Severity::Warning,
            message,
        });
    }
}

/// Everything that keeps `cfg` from showing exactly what it promises on the trace described by
/// `facts`, errors and warnings alike. Empty means Paraver loads it and every event type, state
/// and message it names is in the trace.
pub fn check_cfg(cfg: &Cfg, facts: &TraceFacts) -> Vec<String> {
    assess_cfg(cfg, facts)
        .into_iter()
        .map(|f| f.message)
        .collect()
}

/// Whether Paraver can load `cfg` on that trace with data in every view (warnings allowed).
pub fn cfg_applies(cfg: &Cfg, facts: &TraceFacts) -> bool {
    assess_cfg(cfg, facts)
        .iter()
        .all(|f| f.severity == Severity::Warning)
}

/// [`check_cfg`] with the severity of each finding.
pub fn assess_cfg(cfg: &Cfg, facts: &TraceFacts) -> Vec<Finding> {
    let mut out = Out::default();
    for p in &cfg.problems {
        out.error(p.clone());
    }
    for w in &cfg.warnings {
        out.warn(w.clone());
    }
    let problems = &mut out;
    // paramedir aborts the whole cfg unless some window lets events through (§6 rule 1).
    let mut some_events_exist = false;
    for (i, w) in cfg.windows.iter().enumerate() {
        let at = format!("window {} '{}'", i + 1, w.name);
        if w.effective_level().is_resource() && facts.nodes.is_empty() {
            problems.error(format!(
                "{at}: level {} needs a resource model, but the trace header has none",
                w.effective_level().name()
            ));
        }
        objects(w, facts, &at, problems);
        match w.kind {
            WindowKind::Composed => composed(cfg, i, &at, problems),
            WindowKind::Single => {
                some_events_exist |= event_filter(w, facts, &at, problems);
                semantics(w, facts, &at, problems);
            }
        }
    }
    if !cfg.windows.is_empty() && !some_events_exist {
        problems.error(
            "no window lets any event of the trace through: paramedir prints 'None of the events specified in the filter appear in the trace' and aborts"
                .into(),
        );
    }
    for k in 0..cfg.analyzers.len() {
        analyzer(cfg, k, facts, problems);
    }
    out.0
}

/// Resolves the window's event types as Paraver does and checks them. Returns whether the window
/// counts as "some events exist" for paramedir.
fn event_filter(w: &Window, facts: &TraceFacts, at: &str, problems: &mut Out) -> bool {
    let function = w.filter("evt_type");
    let explicit_all = matches!(
        w.filters.get("evt_type").map(String::as_str),
        Some("All" | "None")
    );
    if !w.evt_type_labels.is_empty() && w.evt_type_labels.len() != w.evt_types.len() {
        problems.error(format!(
            "{at}: {} evt_type value(s) but {} evt_type_label(s) (Paraver drops the window)",
            w.evt_types.len(),
            w.evt_type_labels.len()
        ));
        return explicit_all;
    }
    let mut resolved: Vec<u64> = Vec::new();
    for (k, &ty) in w.evt_types.iter().enumerate() {
        let Some(label) = w.evt_type_labels.get(k) else {
            resolved.push(ty);
            continue;
        };
        let by_label = facts.types_labelled(label);
        let own = u32::try_from(ty).ok().and_then(|t| facts.pcf_types.get(&t));
        if by_label.len() > 1 {
            problems.warn(format!(
                "{at}: label \"{label}\" names event types {by_label:?} in the .pcf; the window picks them all"
            ));
        } else if !by_label.is_empty() && by_label[0] as u64 != ty {
            problems.error(format!(
                "{at}: label \"{label}\" is type {} in the .pcf, so Paraver filters on {} instead of {ty}",
                by_label[0], by_label[0]
            ));
        } else if let Some(own) = own.filter(|l| *l != label) {
            problems.warn(format!(
                "{at}: type {ty} is labelled \"{own}\" in the .pcf, not \"{label}\""
            ));
        }
        if by_label.is_empty() {
            resolved.push(ty);
        } else {
            resolved.extend(by_label.iter().map(|&t| u64::from(t)));
        }
    }
    if matches!(function, "All" | "None") {
        return explicit_all;
    }
    if resolved.is_empty() {
        problems.error(format!(
            "{at}: evt_type function '{function}' but no event type listed (the window sees no event)"
        ));
        return false;
    }
    if function == "[x,y]" {
        // A range uses the first two types as bounds.
        if resolved.len() < 2 {
            problems.error(format!(
                "{at}: the range function [x,y] needs two event types"
            ));
            return false;
        }
        let (lo, hi) = (resolved[0].min(resolved[1]), resolved[0].max(resolved[1]));
        let exists = facts
            .event_types
            .keys()
            .any(|&t| (lo..=hi).contains(&u64::from(t)));
        if !exists {
            problems.error(format!(
                "{at}: no event type of [{lo}, {hi}] occurs in the trace"
            ));
        }
        return exists;
    }
    // Missing types only empty the window when none of them is there (paramedir then warns
    // "Some of the events ... doesn't appear in the trace" and goes on).
    let exists = resolved.iter().any(|&ty| facts.occurs(ty));
    for &ty in &resolved {
        let declared = u32::try_from(ty).is_ok_and(|t| facts.pcf_types.contains_key(&t));
        let note = |m: String, out: &mut Out| if exists { out.warn(m) } else { out.error(m) };
        if !declared {
            note(
                format!("{at}: event type {ty} is not declared in the trace's .pcf"),
                problems,
            );
        }
        if !facts.occurs(ty) {
            note(
                format!("{at}: event type {ty} does not occur in the trace"),
                problems,
            );
        }
    }
    exists
}

/// The records the window's thread function reads must exist, with its parameters.
fn semantics(w: &Window, facts: &TraceFacts, at: &str, problems: &mut Out) {
    let f = w.thread_function();
    if names::listed(names::STATE_FUNCTIONS, f) {
        if facts.states.is_empty() {
            problems.error(format!(
                "{at}: '{f}' reads states, and the trace has no state record"
            ));
        }
        for p in w
            .params
            .iter()
            .filter(|p| p.key == "thread" && p.function == f)
        {
            for &s in p.params.iter().flatten() {
                let known = s >= 0.0 && s.fract() == 0.0 && facts.states.contains_key(&(s as u32));
                if !known {
                    problems.warn(format!(
                        "{at}: '{f}' names state {s}, which the trace never enters"
                    ));
                }
            }
        }
    }
    if names::listed(names::COMM_FUNCTIONS, f) {
        if facts.comm_tags.is_empty() {
            problems.error(format!(
                "{at}: '{f}' reads communications, and the trace has none"
            ));
        }
        match w.filter("tag_msg") {
            "=" => {
                if w.comm_tags.is_empty() {
                    problems.error(format!("{at}: tag_msg '=' but no tag listed"));
                }
                let present =
                    |t: &i64| u64::try_from(*t).is_ok_and(|t| facts.comm_tags.contains_key(&t));
                let any = w.comm_tags.iter().any(present);
                for t in w.comm_tags.iter().filter(|t| !present(t)) {
                    let m = format!("{at}: no communication with tag {t} in the trace");
                    if any {
                        problems.warn(m)
                    } else {
                        problems.error(m)
                    }
                }
                if !w.tag_size_and && w.filter("size_msg") == "All" {
                    problems.error(format!(
                        "{at}: window_comm_tagsize false (OR) with size_msg All lets every message through; the tag filter has no effect"
                    ));
                }
            }
            "All" => {}
            other => {
                if w.comm_tags.is_empty() {
                    problems.error(format!("{at}: tag_msg '{other}' but no tag listed"));
                }
            }
        }
    }
}

/// Object selections must fit the trace (Paraver ignores a list longer than the objects it has),
/// and the window's own level must keep some object.
fn objects(w: &Window, facts: &TraceFacts, at: &str, problems: &mut Out) {
    for sel in &w.objects {
        let expected: Option<usize> = match (sel.level, sel.scope.as_slice()) {
            (Level::Appl, []) => Some(facts.appls.len()),
            (Level::Task, [a]) => facts.appls.get(*a as usize).map(Vec::len),
            (Level::Thread, [a, t]) => facts
                .appls
                .get(*a as usize)
                .and_then(|ts| ts.get(*t as usize))
                .map(|&n| n as usize),
            (Level::Node, []) => Some(facts.nodes.len()),
            (Level::Cpu, [n]) => facts.nodes.get(*n as usize).map(|&c| c as usize),
            _ => None,
        };
        let scope: Vec<String> = sel.scope.iter().map(|s| s.to_string()).collect();
        match expected {
            None => problems.warn(format!(
                "{at}: window_object {} {{{}}} (line {}) names a scope the trace does not have",
                sel.level.name(),
                scope.join(", "),
                sel.line
            )),
            // A shorter list only sets the first objects (the rest keep their selection).
            Some(n) if sel.selected.len() > n => problems.warn(format!(
                "{at}: window_object {} (line {}) lists {} object(s), the trace has {n} (Paraver ignores the line)",
                sel.level.name(),
                sel.line,
                sel.selected.len()
            )),
            Some(_) => {}
        }
        if sel.level == w.effective_level() && !sel.selected.iter().any(|&s| s) {
            problems.error(format!(
                "{at}: no object selected at its level (paramedir: 'Some timeline has 0 objects selected')"
            ));
        }
    }
}

/// A composed window needs two earlier windows of a compatible level and an operation.
fn composed(cfg: &Cfg, i: usize, at: &str, problems: &mut Out) {
    let w = &cfg.windows[i];
    if w.operation.is_none() {
        problems.error(format!("{at}: composed window without window_operation"));
    }
    if w.parents.len() != 2 {
        problems.error(format!(
            "{at}: a composed window needs 2 window_identifiers, it has {}",
            w.parents.len()
        ));
        return;
    }
    let levels: Vec<Level> = w
        .parents
        .iter()
        .filter_map(|&p| cfg.windows.get(p as usize - 1))
        .map(Window::effective_level)
        .collect();
    if levels
        .iter()
        .any(|l| l.is_resource() != w.effective_level().is_resource())
    {
        problems.error(format!(
            "{at}: parents and window mix process-model and resource-model levels"
        ));
    } else if let Some(&finest) = levels.iter().max() {
        // Paraver ignores a level finer than the finest parent (KDerivedWindow::setLevel).
        if w.effective_level() > finest {
            problems.warn(format!(
                "{at}: level {} is finer than its parents' ({}); Paraver keeps the default",
                w.effective_level().name(),
                finest.name()
            ));
        }
    }
}

fn analyzer(cfg: &Cfg, k: usize, facts: &TraceFacts, problems: &mut Out) {
    let a = &cfg.analyzers[k];
    let at = format!("histogram {} '{}'", k + 1, a.name);
    let window = |i: Option<u32>| i.and_then(|i| cfg.windows.get(i as usize - 1));
    let (Some(control), Some(data)) = (window(a.control_window), window(a.data_window)) else {
        problems.error(format!(
            "{at}: needs Analyzer2D.ControlWindow and Analyzer2D.DataWindow"
        ));
        return;
    };
    // LoadedWindows::validDataWindow: same level, or a coarser data window of the same model.
    let (cl, dl) = (control.effective_level(), data.effective_level());
    if cl != dl && (cl.is_resource() != dl.is_resource() || dl > cl) {
        problems.error(format!(
            "{at}: data window level {} does not fit control window level {}",
            dl.name(),
            cl.name()
        ));
    }
    match a.statistic.as_deref() {
        None => problems.error(format!("{at}: no Analyzer2D.Statistic")),
        Some(s) if names::listed(names::COMM_STATISTICS, s) && facts.comm_tags.is_empty() => {
            problems.error(format!(
                "{at}: statistic '{s}' counts communications, and the trace has none"
            ))
        }
        Some(_) => {}
    }
    if a.compute_y_scale == Some(false) {
        match (a.minimum, a.maximum, a.delta) {
            (Some(lo), Some(hi), Some(d)) if lo <= hi && d > 0.0 => {}
            (lo, hi, d) => problems.error(format!(
                "{at}: fixed columns need Minimum <= Maximum and Delta > 0 (got {lo:?}, {hi:?}, {d:?})"
            )),
        }
    }
}
