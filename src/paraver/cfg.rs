//! Paraver .cfg files (saved views): a parser that follows Paraver's loader (`CFGLoader`, grammar in
//! docs/paraver-format.md §6) and [`check_cfg`], which says whether a cfg can be applied to a
//! given trace ("What a cfg requires of a trace").
//!
//! The parser keeps what Paraver keeps and records, as problems, every line Paraver would refuse
//! (that deletes the window or histogram being built and stops the load) or silently ignore.

mod names;
mod parse;
mod require;
mod values;

use std::collections::BTreeMap;

pub use names::{COMM_STATISTICS, SEMANTIC_STATISTICS};
pub use parse::parse;
pub use require::{assess_cfg, cfg_applies, check_cfg, Finding, Severity, TraceFacts};

/// Object levels, in Paraver's order (process model, then resource model).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Workload,
    Appl,
    Task,
    Thread,
    System,
    Node,
    Cpu,
}

impl Level {
    pub fn parse(s: &str) -> Option<Level> {
        Some(match s {
            "workload" => Level::Workload,
            "appl" | "ptask" => Level::Appl,
            "task" => Level::Task,
            "thread" => Level::Thread,
            "system" => Level::System,
            "node" => Level::Node,
            "cpu" => Level::Cpu,
            _ => return None,
        })
    }
    /// System, node and CPU levels need the header's resource model.
    pub fn is_resource(self) -> bool {
        self >= Level::System
    }
    pub fn name(self) -> &'static str {
        match self {
            Level::Workload => "workload",
            Level::Appl => "appl",
            Level::Task => "task",
            Level::Thread => "thread",
            Level::System => "system",
            Level::Node => "node",
            Level::Cpu => "cpu",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowKind {
    /// Computed from trace records.
    Single,
    /// Derived from two earlier windows (`window_operation`, `window_identifiers`).
    Composed,
}

/// One `window_object` line: the objects of a scope that are selected.
#[derive(Clone, Debug, PartialEq)]
pub struct ObjectSelection {
    pub line: usize,
    pub level: Level,
    /// 0-based scope: [] for appl/node, [appl] for task, [appl, task] for thread, [node] for cpu.
    pub scope: Vec<u32>,
    pub selected: Vec<bool>,
}

/// Parameters of one function (`window_semantic_module`).
#[derive(Clone, Debug, PartialEq)]
pub struct SemanticParams {
    pub key: String,
    pub function: String,
    pub params: Vec<Vec<f64>>,
}

/// A timeline window.
#[derive(Clone, Debug, PartialEq)]
pub struct Window {
    /// Line of its `window_type`.
    pub line: usize,
    pub name: String,
    pub kind: WindowKind,
    pub level: Option<Level>,
    pub units: Option<String>,
    /// Semantic function per level key (`thread`, `task`, `cpu`...), from `window_selected_functions`.
    pub functions: BTreeMap<String, String>,
    /// Compose function per key (`compose_thread`, `topcompose1`...).
    pub compose: BTreeMap<String, String>,
    /// Filter function per key (`evt_type`, `tag_msg`...).
    pub filters: BTreeMap<String, String>,
    pub evt_types: Vec<u64>,
    pub evt_type_labels: Vec<String>,
    pub evt_values: Vec<f64>,
    pub comm_tags: Vec<i64>,
    pub comm_sizes: Vec<i64>,
    /// `window_comm_tagsize` / `window_comm_typeval`: true = AND (Paraver's default), false = OR.
    pub tag_size_and: bool,
    pub type_value_and: bool,
    pub objects: Vec<ObjectSelection>,
    pub params: Vec<SemanticParams>,
    /// Composed windows: the operation and the 1-based indices of the two parents.
    pub operation: Option<String>,
    pub parents: Vec<u32>,
}

impl Window {
    pub(crate) fn new(line: usize, name: String, kind: WindowKind) -> Self {
        Window {
            line,
            name,
            kind,
            level: None,
            units: None,
            functions: BTreeMap::new(),
            compose: BTreeMap::new(),
            filters: BTreeMap::new(),
            evt_types: Vec::new(),
            evt_type_labels: Vec::new(),
            evt_values: Vec::new(),
            comm_tags: Vec::new(),
            comm_sizes: Vec::new(),
            tag_size_and: true,
            type_value_and: true,
            objects: Vec::new(),
            params: Vec::new(),
            operation: None,
            parents: Vec::new(),
        }
    }
    /// The level Paraver computes the window at (thread unless set).
    pub fn effective_level(&self) -> Level {
        self.level.unwrap_or(Level::Thread)
    }
    /// Thread function, with Paraver's default for single windows.
    pub fn thread_function(&self) -> &str {
        self.functions
            .get("thread")
            .map(String::as_str)
            .unwrap_or("State As Is")
    }
    /// A filter function, Paraver's default being `All`.
    pub fn filter(&self, key: &str) -> &str {
        self.filters.get(key).map(String::as_str).unwrap_or("All")
    }
}

/// A 2D histogram (`< NEW ANALYZER2D >`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Analyzer {
    pub line: usize,
    pub name: String,
    /// 1-based indices of windows of this file.
    pub control_window: Option<u32>,
    pub data_window: Option<u32>,
    pub extra_control_window: Option<u32>,
    pub statistic: Option<String>,
    pub compute_y_scale: Option<bool>,
    pub minimum: Option<f64>,
    pub maximum: Option<f64>,
    pub delta: Option<f64>,
}

/// A parsed cfg and the syntax problems found on the way.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Cfg {
    pub version: Option<String>,
    pub num_windows: Option<u32>,
    pub description: Option<String>,
    pub windows: Vec<Window>,
    pub analyzers: Vec<Analyzer>,
    /// Lines Paraver refuses (the window or histogram is dropped, loading stops) or a file it
    /// does not take for a cfg.
    pub problems: Vec<String>,
    /// Lines Paraver silently ignores; the views still load.
    pub warnings: Vec<String>,
}

impl Cfg {
    /// Event types a window needs present in the trace (its `evt_type` function selects).
    pub fn required_event_types(&self) -> Vec<u64> {
        let mut v: Vec<u64> = self
            .windows
            .iter()
            .filter(|w| {
                w.kind == WindowKind::Single && !matches!(w.filter("evt_type"), "All" | "None")
            })
            .flat_map(|w| w.evt_types.iter().copied())
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }
    /// Communication tags a comm-function window filters on.
    pub fn required_comm_tags(&self) -> Vec<i64> {
        let mut v: Vec<i64> = self
            .windows
            .iter()
            .filter(|w| w.filter("tag_msg") == "=")
            .flat_map(|w| w.comm_tags.iter().copied())
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }
}
