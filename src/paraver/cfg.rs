//! Paraver .cfg files (saved views): a parser that follows Paraver's loader (`CFGLoader`, grammar in
//! docs/paraver-format.md §6) and [`check_cfg`], which says whether a cfg can be applied to a
//! given trace ("What a cfg requires of a trace").
//!
//! The parser keeps what Paraver keeps and records, as problems, every line Paraver would refuse
//! (that deletes the window or histogram being built and stops the load) or silently ignore.

mod names;
mod require;

use std::collections::BTreeMap;

pub use names::{COMM_STATISTICS, SEMANTIC_STATISTICS};
pub use require::{check_cfg, TraceFacts};

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
    fn new(line: usize, name: String, kind: WindowKind) -> Self {
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
    pub problems: Vec<String>,
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

/// Where the tags of the current line apply.
struct Parser {
    cfg: Cfg,
    pending_name: Option<String>,
    in_description: bool,
    description: Vec<String>,
    has_shebang: bool,
    has_version: bool,
}

/// Parses cfg text. Never fails: problems are listed in [`Cfg::problems`].
pub fn parse(text: &str) -> Cfg {
    let mut p = Parser {
        cfg: Cfg::default(),
        pending_name: None,
        in_description: false,
        description: Vec::new(),
        has_shebang: false,
        has_version: false,
    };
    for (i, raw) in text.lines().enumerate() {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        p.line(i + 1, line);
    }
    if p.in_description {
        p.cfg
            .problems
            .push("ConfigFile.BeginDescription has no ConfigFile.EndDescription".into());
    }
    if !p.has_shebang && !(p.has_version && p.cfg.num_windows.is_some()) {
        p.cfg.problems.insert(
            0,
            "not recognised as a cfg: it needs a '#ParaverCFG' line (or ConfigFile.Version: and ConfigFile.NumWindows:)".into(),
        );
    }
    if let Some(n) = p.cfg.num_windows {
        if n as usize != p.cfg.windows.len() {
            let have = p.cfg.windows.len();
            p.cfg.problems.push(format!(
                "ConfigFile.NumWindows: says {n} but the file defines {have} window(s)"
            ));
        }
    }
    if p.cfg.windows.is_empty() {
        p.cfg.problems.push("the cfg defines no window".into());
    }
    if !p.description.is_empty() {
        p.cfg.description = Some(p.description.join("\n"));
    }
    p.cfg
}

impl Parser {
    fn line(&mut self, no: usize, line: &str) {
        if line.trim() == "#ParaverCFG" {
            self.has_shebang = true;
        }
        if line.is_empty() || line.starts_with('#') {
            return;
        }
        if self.in_description {
            if line == "ConfigFile.EndDescription" {
                self.in_description = false;
                return;
            }
            self.description.push(line.to_owned());
            // Paraver's loader still reads description lines as tags.
            let first = line.split(' ').next().unwrap_or("");
            if names::KNOWN_TAGS.contains(&first) || line.starts_with('<') {
                self.cfg.problems.push(format!(
                    "cfg line {no}: description line starts with the tag '{first}', which Paraver will execute"
                ));
            }
            return;
        }
        let (tag, rest) = if line.starts_with('<') {
            (line, "")
        } else {
            line.split_once(' ').unwrap_or((line, ""))
        };
        if let Err(e) = self.tag(no, tag, rest) {
            self.cfg.problems.push(format!("cfg line {no}: {e}"));
        }
    }

    fn window(&mut self, tag: &str) -> Result<&mut Window, String> {
        self.cfg
            .windows
            .last_mut()
            .ok_or_else(|| format!("{tag} before any window_type (Paraver stops loading here)"))
    }

    fn analyzer(&mut self, tag: &str) -> Result<&mut Analyzer, String> {
        if self.cfg.windows.is_empty() {
            return Err(format!(
                "{tag} before any window (Paraver stops loading here)"
            ));
        }
        self.cfg.analyzers.last_mut().ok_or_else(|| {
            format!("{tag} before '< NEW ANALYZER2D >' (Paraver stops loading here)")
        })
    }

    fn tag(&mut self, no: usize, tag: &str, rest: &str) -> Result<(), String> {
        match tag {
            "ConfigFile.Version:" => {
                self.has_version = true;
                self.cfg.version = Some(rest.trim().to_owned());
            }
            "ConfigFile.NumWindows:" => {
                self.cfg.num_windows = Some(
                    rest.trim()
                        .parse()
                        .map_err(|_| format!("ConfigFile.NumWindows: '{rest}' is not a number"))?,
                );
            }
            "ConfigFile.BeginDescription" => self.in_description = true,
            "ConfigFile.EndDescription" => {
                return Err("ConfigFile.EndDescription without BeginDescription".into())
            }
            "window_name" => self.pending_name = Some(rest.to_owned()),
            "window_type" => {
                let kind = match rest {
                    "single" => WindowKind::Single,
                    "composed" => WindowKind::Composed,
                    // Measured: Paraver segfaults on this (§6).
                    _ => {
                        return Err(format!(
                            "window_type '{rest}' is neither single nor composed"
                        ))
                    }
                };
                let name = self.pending_name.take().ok_or(
                    "window_type without a window_name before it (the window gets the previous name)",
                )?;
                self.cfg.windows.push(Window::new(no, name, kind));
            }
            "window_level" => {
                let w = self.window(tag)?;
                let level = Level::parse(rest.split(' ').next().unwrap_or(""))
                    .ok_or_else(|| format!("window_level '{rest}' is not a level"))?;
                if w.kind == WindowKind::Composed && w.parents.is_empty() {
                    // KDerivedWindow::setLevel compares with the parents, unknown until then.
                    return Err("window_level before window_identifiers: Paraver ignores it".into());
                }
                w.level = Some(level);
            }
            "window_units" => {
                let w = self.window(tag)?;
                let u = rest.split(' ').next().unwrap_or("");
                if !names::TIME_UNITS.contains(&u) {
                    return Err(format!(
                        "window_units '{u}' is not a unit (Paraver ignores it)"
                    ));
                }
                w.units = Some(u.to_owned());
            }
            "window_operation" => {
                let w = self.window(tag)?;
                if w.kind == WindowKind::Composed {
                    if !names::DERIVED_FUNCTIONS.contains(&rest) {
                        return Err(format!(
                            "window_operation '{rest}' is not a derived function"
                        ));
                    }
                    w.operation = Some(rest.to_owned());
                }
            }
            "window_identifiers" => {
                let current = self.cfg.windows.len();
                let w = self.window(tag)?;
                if w.kind == WindowKind::Composed {
                    for id in rest.split(' ') {
                        let id: u32 = id.parse().map_err(|_| {
                            format!("window_identifiers: '{id}' is not a window number")
                        })?;
                        if id == 0 || id as usize >= current {
                            return Err(format!(
                                "window_identifiers: {id} is not an earlier window (this is window {current})"
                            ));
                        }
                        w.parents.push(id);
                    }
                }
            }
            "window_factors" | "window_shifts" => {
                let w = self.window(tag)?;
                if w.kind == WindowKind::Composed {
                    numbers(rest, tag)?;
                }
            }
            "window_position_x"
            | "window_position_y"
            | "window_width"
            | "window_height"
            | "window_pixel_size"
            | "window_labels_to_draw"
            | "window_object_axis_position"
            | "window_punctual_color_window"
            | "window_synchronize" => {
                self.window(tag)?;
                let v = rest.split(' ').next().unwrap_or("");
                v.parse::<u16>()
                    .map_err(|_| format!("{tag} '{v}' is not an unsigned 16-bit integer"))?;
            }
            "window_maximum_y"
            | "window_minimum_y"
            | "window_scale_relative"
            | "window_end_time_relative"
            | "window_begin_time_relative"
            | "window_begin_time"
            | "window_stop_time"
            | "window_end_time" => {
                self.window(tag)?;
                let v = rest.split(' ').next().unwrap_or("");
                v.parse::<f64>()
                    .map_err(|_| format!("{tag} '{v}' is not a number"))?;
            }
            "window_comm_lines_enabled"
            | "window_flags_enabled"
            | "window_noncolor_mode"
            | "window_logical_filtered"
            | "window_physical_filtered"
            | "window_intracomms_enabled"
            | "window_intercomms_enabled"
            | "window_comm_fromto"
            | "window_comm_tagsize"
            | "window_comm_typeval"
            | "window_open"
            | "window_custom_color_enabled"
            | "window_semantic_scale_min_at_zero"
            | "window_compute_y_max" => {
                let w = self.window(tag)?;
                let v = rest.split(' ').next().unwrap_or("");
                let b = match v {
                    "true" => true,
                    "false" => false,
                    "" if tag == "window_compute_y_max" => true,
                    _ => return Err(format!("{tag} '{v}' must be true or false (lower case)")),
                };
                match tag {
                    "window_comm_tagsize" => w.tag_size_and = b,
                    "window_comm_typeval" => w.type_value_and = b,
                    _ => {}
                }
            }
            "window_color_mode" => {
                self.window(tag)?;
                let v = rest.split(' ').next().unwrap_or("");
                if !names::COLOR_MODES.contains(&v) {
                    return Err(format!(
                        "window_color_mode '{v}' is unknown (Paraver ignores it)"
                    ));
                }
            }
            "window_drawmode" | "window_drawmode_rows" => {
                self.window(tag)?;
                let v = rest.split(' ').next().unwrap_or("");
                if !names::DRAW_MODES.contains(&v) {
                    return Err(format!("{tag} '{v}' is unknown (Paraver ignores it)"));
                }
            }
            "window_selected_functions" => {
                let w = self.window(tag)?;
                for (key, function) in function_list(rest, tag)? {
                    if names::FILTER_KEYS.contains(&key.as_str()) {
                        if w.kind == WindowKind::Composed {
                            return Err(format!(
                                "a composed window cannot have the filter {{{key}, {function}}}"
                            ));
                        }
                        if !names::FILTER_FUNCTIONS.contains(&function.as_str()) {
                            return Err(format!(
                                "'{function}' is not a filter function (for {key})"
                            ));
                        }
                        w.filters.insert(key, function);
                    } else {
                        check_function(&key, &function, false)?;
                        w.functions.insert(key, function);
                    }
                }
            }
            "window_compose_functions" => {
                let w = self.window(tag)?;
                for (key, function) in function_list(rest, tag)? {
                    // Old cfgs name compose levels with plain level names.
                    let key = match Level::parse(&key) {
                        Some(l) => format!("compose_{}", l.name()),
                        None => key,
                    };
                    check_function(&key, &function, true)?;
                    w.compose.insert(key, function);
                }
            }
            "window_semantic_module" => {
                let w = self.window(tag)?;
                w.params.push(semantic_module(rest)?);
            }
            "window_filter_module" => {
                let w = self.window(tag)?;
                if w.kind == WindowKind::Single {
                    filter_module(w, rest)?;
                }
            }
            "window_object" => {
                let w = self.window(tag)?;
                let own = w.effective_level();
                w.objects.push(object_selection(no, rest, own)?);
            }
            "< NEW ANALYZER2D >" => {
                if self.cfg.windows.is_empty() {
                    return Err("a histogram before any window (Paraver stops loading here)".into());
                }
                self.cfg.analyzers.push(Analyzer {
                    line: no,
                    ..Analyzer::default()
                });
            }
            t if t.starts_with("Analyzer2D.") || t.starts_with("Analyzer3D.") => {
                let nwindows = self.cfg.windows.len() as u32;
                let a = self.analyzer(tag)?;
                analyzer_tag(a, tag, rest.trim_end(), nwindows)?;
            }
            t if t.starts_with('<') => {} // `< NEW DISPLAYING WINDOW ... >` is a comment
            t if names::KNOWN_TAGS.contains(&t) => {}
            _ => return Err(format!("unknown tag '{tag}' (Paraver ignores the line)")),
        }
        Ok(())
    }
}

fn numbers(rest: &str, tag: &str) -> Result<Vec<f64>, String> {
    rest.split(' ')
        .map(|v| {
            v.parse::<f64>()
                .map_err(|_| format!("{tag}: '{v}' is not a number"))
        })
        .collect()
}

/// `{ N, { {key, function}, ... } }`: Paraver reads exactly N entries.
fn function_list(rest: &str, tag: &str) -> Result<Vec<(String, String)>, String> {
    let bad = || format!("{tag} must be '{{ N, {{ {{key, function}}, ... }} }}'");
    let inner = rest
        .trim()
        .strip_prefix('{')
        .and_then(|r| r.strip_suffix('}'))
        .ok_or_else(bad)?;
    let (count, list) = inner.split_once(',').ok_or_else(bad)?;
    let count: usize = count.trim().parse().map_err(|_| bad())?;
    let mut list = list
        .trim()
        .strip_prefix('{')
        .and_then(|r| r.strip_suffix('}'))
        .ok_or_else(bad)?;
    let mut out = Vec::new();
    loop {
        list = list.trim_start_matches([' ', ',']);
        if list.is_empty() {
            break;
        }
        let body = list.strip_prefix('{').ok_or_else(bad)?;
        let end = body.find('}').ok_or_else(bad)?;
        // Paraver: key up to ',', one skipped character, function up to '}'.
        let (key, function) = body[..end].split_once(", ").ok_or_else(bad)?;
        out.push((key.to_owned(), function.to_owned()));
        list = &body[end + 1..];
    }
    if out.len() != count {
        return Err(format!(
            "{tag} announces {count} entries but lists {}",
            out.len()
        ));
    }
    Ok(out)
}

fn check_function(key: &str, function: &str, compose: bool) -> Result<(), String> {
    let is_compose_key = key.starts_with("compose") || key.contains("topcompose");
    if compose != is_compose_key {
        return Err(format!("'{key}' does not belong in this function list"));
    }
    match names::functions_for_key(key) {
        None => Err(format!("unknown level '{key}'")),
        Some(allowed) if !allowed.contains(&function) => Err(format!(
            "'{function}' is not a {key} function (Paraver drops the window)"
        )),
        Some(_) => Ok(()),
    }
}

/// `LEVEL FUNCTION { NPARAMS, { NVALUES v v ..., ... } }`.
fn semantic_module(rest: &str) -> Result<SemanticParams, String> {
    let bad = || {
        format!(
            "window_semantic_module '{rest}' must be 'level function {{ N, {{ k v..., ... }} }}'"
        )
    };
    let (key, after) = rest.split_once(' ').ok_or_else(bad)?;
    let brace = after.find('{').ok_or_else(bad)?;
    let function = after[..brace].trim_end().to_owned();
    let tokens: Vec<&str> = after[brace..]
        .split(|c: char| c == '{' || c == '}' || c == ',' || c == ' ')
        .filter(|t| !t.is_empty())
        .collect();
    let num = |t: &str| t.parse::<f64>().map_err(|_| bad());
    let mut it = tokens.into_iter();
    let nparams = num(it.next().ok_or_else(bad)?)? as usize;
    let mut params = Vec::new();
    for _ in 0..nparams {
        let n = num(it.next().ok_or_else(bad)?)? as usize;
        let values = (0..n)
            .map(|_| num(it.next().ok_or_else(bad)?))
            .collect::<Result<Vec<f64>, String>>()?;
        params.push(values);
    }
    if it.next().is_some() {
        return Err(bad());
    }
    Ok(SemanticParams {
        key: key.to_owned(),
        function,
        params,
    })
}

/// `KIND N v1 ... vN` (labels quoted).
fn filter_module(w: &mut Window, rest: &str) -> Result<(), String> {
    let (kind, after) = rest
        .split_once(' ')
        .ok_or("window_filter_module needs a kind and a count")?;
    let (count, values) = after.split_once(' ').unwrap_or((after, ""));
    let count: usize = count
        .parse()
        .map_err(|_| format!("window_filter_module {kind}: count '{count}' is not a number"))?;
    let mismatch =
        |n: usize| format!("window_filter_module {kind} announces {count} value(s) but lists {n}");
    if kind.ends_with("_label") {
        let labels: Vec<String> = values
            .split('"')
            .skip(1)
            .step_by(2)
            .map(str::to_owned)
            .collect();
        if labels.len() != count || values.matches('"').count() != 2 * count {
            return Err(mismatch(labels.len()));
        }
        match kind {
            "evt_type_label" => w.evt_type_labels = labels,
            "evt_value_label" => {}
            _ => return Err(format!("unknown filter module '{kind}'")),
        }
        return Ok(());
    }
    let tokens: Vec<&str> = values.split(' ').filter(|t| !t.is_empty()).collect();
    if tokens.len() != count {
        return Err(mismatch(tokens.len()));
    }
    let ints = || {
        tokens
            .iter()
            .map(|t| {
                t.parse::<i64>()
                    .map_err(|_| format!("window_filter_module {kind}: '{t}' is not an integer"))
            })
            .collect::<Result<Vec<i64>, String>>()
    };
    match kind {
        "evt_type" => {
            w.evt_types = ints()?
                .into_iter()
                .map(|t| u64::try_from(t).map_err(|_| format!("event type {t} is negative")))
                .collect::<Result<_, _>>()?
        }
        "evt_value" => w.evt_values = numbers(&tokens.join(" "), "evt_value").unwrap_or_default(),
        "tag_msg" => w.comm_tags = ints()?,
        "size_msg" => w.comm_sizes = ints()?,
        "from_obj" | "to_obj" => {
            ints()?;
        }
        "bw_msg" => {
            numbers(&tokens.join(" "), "bw_msg")?;
        }
        _ => return Err(format!("unknown filter module '{kind}'")),
    }
    Ok(())
}

/// `appl { N, { v, ... } }`, `task { A, N, {...} }`, `thread { A, T, N, {...} }`,
/// `node { N, {...} }`, `cpu { NODE, N, {...} }`. At the window's own level the values are 1/0,
/// elsewhere All/None (Paraver fails on anything else at its own level).
fn object_selection(line: usize, rest: &str, own: Level) -> Result<ObjectSelection, String> {
    let bad = || format!("window_object '{rest}' is malformed");
    let (level, after) = rest.split_once(' ').ok_or_else(bad)?;
    let level =
        Level::parse(level).ok_or_else(|| format!("window_object level '{level}' is unknown"))?;
    let inner = after
        .trim()
        .strip_prefix('{')
        .and_then(|r| r.strip_suffix('}'))
        .ok_or_else(bad)?;
    let open = inner.find('{').ok_or_else(bad)?;
    let close = inner.rfind('}').ok_or_else(bad)?;
    let head: Vec<u32> = inner[..open]
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(|t| t.parse::<u32>().map_err(|_| bad()))
        .collect::<Result<_, _>>()?;
    let scope_len = match level {
        Level::Appl | Level::Node => 0,
        Level::Task | Level::Cpu => 1,
        Level::Thread => 2,
        Level::Workload | Level::System => {
            return Err(format!(
                "window_object cannot select at level {}",
                level.name()
            ))
        }
    };
    if head.len() != scope_len + 1 {
        return Err(bad());
    }
    let n = head[scope_len] as usize;
    let values: Vec<&str> = inner[open + 1..close].split(',').map(str::trim).collect();
    if values.len() != n {
        return Err(format!(
            "window_object {} announces {n} object(s) but lists {}",
            level.name(),
            values.len()
        ));
    }
    let selected = values
        .iter()
        .map(|v| match (level == own, *v) {
            (true, "1") => Ok(true),
            (true, "0") => Ok(false),
            (true, _) => Err(format!(
                "window_object at the window's own level {} needs 1/0, not '{v}' (Paraver drops the window)",
                level.name()
            )),
            (false, "None") => Ok(false),
            (false, _) => Ok(true),
        })
        .collect::<Result<Vec<bool>, String>>()?;
    Ok(ObjectSelection {
        line,
        level,
        scope: head[..scope_len].to_vec(),
        selected,
    })
}

fn analyzer_tag(a: &mut Analyzer, tag: &str, v: &str, nwindows: u32) -> Result<(), String> {
    let window_index = |v: &str| -> Result<u32, String> {
        match v.parse::<u32>() {
            Ok(i) if i >= 1 && i <= nwindows => Ok(i),
            _ => Err(format!(
                "{tag} '{v}' is not a window of this file (1..{nwindows} defined so far)"
            )),
        }
    };
    let boolean = |v: &str| match v {
        "True" => Ok(true),
        "False" => Ok(false),
        _ => Err(format!(
            "{tag} '{v}' must be True or False (histogram silently lost)"
        )),
    };
    let number = |v: &str| {
        v.parse::<f64>()
            .map_err(|_| format!("{tag} '{v}' is not a number (histogram silently lost)"))
    };
    match tag {
        "Analyzer2D.Name:" => a.name = v.to_owned(),
        "Analyzer2D.ControlWindow:" => a.control_window = Some(window_index(v)?),
        "Analyzer2D.DataWindow:" => a.data_window = Some(window_index(v)?),
        "Analyzer2D.3D_ControlWindow:" => a.extra_control_window = Some(window_index(v)?),
        "Analyzer2D.Statistic:" => {
            if !names::SEMANTIC_STATISTICS.contains(&v) && !names::COMM_STATISTICS.contains(&v) {
                return Err(format!("'{v}' is not a histogram statistic"));
            }
            a.statistic = Some(v.to_owned());
        }
        "Analyzer2D.ComputeYScale:" => a.compute_y_scale = Some(boolean(v)?),
        "Analyzer2D.Minimum:" => a.minimum = Some(number(v)?),
        "Analyzer2D.Maximum:" => a.maximum = Some(number(v)?),
        "Analyzer2D.Delta:" => a.delta = Some(number(v)?),
        "Analyzer2D.HorizVert:" => {
            if v != "Horizontal" && v != "Vertical" {
                return Err(format!("{tag} '{v}' must be Horizontal or Vertical"));
            }
        }
        "Analyzer2D.AnalysisLimits:" => {
            if !matches!(v, "Alltrace" | "Allwindow" | "Region") {
                return Err(format!("{tag} '{v}' must be Alltrace, Allwindow or Region"));
            }
        }
        "Analyzer2D.Zoom:" => {
            if v != "Enabled" && v != "Disabled" {
                return Err(format!("{tag} '{v}' must be Enabled or Disabled"));
            }
        }
        "Analyzer2D.HideCols:"
        | "Analyzer2D.Color:"
        | "Analyzer2D.SemanticColor:"
        | "Analyzer2D.SortCols:"
        | "Analyzer2D.SortReverse:"
        | "Analyzer2D.ComputeGradient:"
        | "Analyzer2D.CodeColor:"
        | "Analyzer2D.ShowOnlyTotals:"
        | "Analyzer2D.ShortHeaderLabels:"
        | "Analyzer2D.ComputeYScaleZero:"
        | "Analyzer2D.UseFixedDelta:"
        | "Analyzer3D.ComputeYScale:" => {
            boolean(v)?;
        }
        "Analyzer2D.MinimumGradient:"
        | "Analyzer2D.MaximumGradient:"
        | "Analyzer2D.3D_Minimum:"
        | "Analyzer2D.3D_Maximum:"
        | "Analyzer2D.3D_Delta:"
        | "Analyzer2D.3D_FixedValue:" => {
            number(v)?;
        }
        "Analyzer2D.X:"
        | "Analyzer2D.Y:"
        | "Analyzer2D.Width:"
        | "Analyzer2D.Height:"
        | "Analyzer2D.PixelSize:"
        | "Analyzer2D.NumColumns:" => {
            v.parse::<u32>()
                .map_err(|_| format!("{tag} '{v}' is not an unsigned integer"))?;
        }
        t if names::KNOWN_TAGS.contains(&t) => {}
        _ => return Err(format!("unknown tag '{tag}' (Paraver ignores the line)")),
    }
    Ok(())
}
