//! The cfg loader's line loop: header, description, and one handler per tag, applied to the
//! window or histogram being built (as Paraver's `CFGLoader::loadCFG` does).

use super::values::{
    analyzer_tag, check_function, filter_module, function_list, numbers, object_selection,
    semantic_module,
};
use super::{names, Analyzer, Cfg, Level, Window, WindowKind};

/// Why a line is a problem: Paraver refuses it (drops the window or histogram and stops reading
/// the cfg, or the cfg is not loaded), or it silently ignores it (the view loads, minus that line).
enum Issue {
    Refused(String),
    Ignored(String),
}

impl From<String> for Issue {
    fn from(s: String) -> Self {
        Issue::Refused(s)
    }
}

impl From<&str> for Issue {
    fn from(s: &str) -> Self {
        Issue::Refused(s.to_owned())
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
    if !(p.has_shebang || p.has_version && p.cfg.num_windows.is_some()) {
        p.cfg.problems.insert(
            0,
            "not recognised as a cfg: it needs a '#ParaverCFG' line (or ConfigFile.Version: and ConfigFile.NumWindows:)".into(),
        );
    }
    if let Some(n) = p.cfg.num_windows {
        if n as usize != p.cfg.windows.len() {
            let have = p.cfg.windows.len();
            p.cfg.warnings.push(format!(
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
        match self.tag(no, tag, rest) {
            Ok(()) => {}
            Err(Issue::Refused(e)) => self.cfg.problems.push(format!("cfg line {no}: {e}")),
            Err(Issue::Ignored(e)) => self.cfg.warnings.push(format!("cfg line {no}: {e}")),
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

    /// Long: one arm per tag Paraver's loader knows, in its order, easier to check side by side.
    fn tag(&mut self, no: usize, tag: &str, rest: &str) -> Result<(), Issue> {
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
                return Err(Issue::from(
                    "ConfigFile.EndDescription without BeginDescription",
                ))
            }
            "window_name" => self.pending_name = Some(rest.to_owned()),
            "window_type" => {
                let kind = match rest {
                    "single" => WindowKind::Single,
                    "composed" => WindowKind::Composed,
                    // Measured: Paraver segfaults on this (§6).
                    _ => {
                        return Err(Issue::from(format!(
                            "window_type '{rest}' is neither single nor composed"
                        )))
                    }
                };
                let Some(name) = self.pending_name.take() else {
                    let name = self
                        .cfg
                        .windows
                        .last()
                        .map(|w| w.name.clone())
                        .unwrap_or_default();
                    self.cfg.windows.push(Window::new(no, name, kind));
                    return Err(Issue::Ignored(
                        "window_type without a window_name before it (the window gets the previous name)"
                            .into(),
                    ));
                };
                self.cfg.windows.push(Window::new(no, name, kind));
            }
            "window_level" => {
                let w = self.window(tag)?;
                let level = Level::parse(rest.split(' ').next().unwrap_or(""))
                    .ok_or_else(|| format!("window_level '{rest}' is not a level"))?;
                if w.kind == WindowKind::Composed && w.parents.is_empty() {
                    // KDerivedWindow::setLevel compares with the parents, unknown until then.
                    return Err(Issue::Ignored(
                        "window_level before window_identifiers: Paraver ignores it".into(),
                    ));
                }
                w.level = Some(level);
            }
            "window_units" => {
                let w = self.window(tag)?;
                let u = rest.split(' ').next().unwrap_or("");
                if !names::TIME_UNITS.contains(&u) {
                    return Err(Issue::Ignored(format!(
                        "window_units '{u}' is not a unit (Paraver ignores it)"
                    )));
                }
                w.units = Some(u.to_owned());
            }
            "window_operation" => {
                let w = self.window(tag)?;
                if w.kind == WindowKind::Composed {
                    if !names::DERIVED_FUNCTIONS.contains(&rest) {
                        return Err(Issue::from(format!(
                            "window_operation '{rest}' is not a derived function"
                        )));
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
                            return Err(Issue::from(format!(
                                "window_identifiers: {id} is not an earlier window (this is window {current})"
                            )));
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
                    _ => {
                        return Err(Issue::from(format!(
                            "{tag} '{v}' must be true or false (lower case)"
                        )))
                    }
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
                    return Err(Issue::Ignored(format!(
                        "window_color_mode '{v}' is unknown (Paraver ignores it)"
                    )));
                }
            }
            "window_drawmode" | "window_drawmode_rows" => {
                self.window(tag)?;
                let v = rest.split(' ').next().unwrap_or("");
                if !names::DRAW_MODES.contains(&v) {
                    return Err(Issue::Ignored(format!(
                        "{tag} '{v}' is unknown (Paraver ignores it)"
                    )));
                }
            }
            "window_selected_functions" => {
                let w = self.window(tag)?;
                for (key, function) in function_list(rest, tag)? {
                    if names::FILTER_KEYS.contains(&key.as_str()) {
                        if w.kind == WindowKind::Composed {
                            return Err(Issue::from(format!(
                                "a composed window cannot have the filter {{{key}, {function}}}"
                            )));
                        }
                        if !names::FILTER_FUNCTIONS.contains(&function.as_str()) {
                            return Err(Issue::from(format!(
                                "'{function}' is not a filter function (for {key})"
                            )));
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
                    return Err(Issue::from(
                        "a histogram before any window (Paraver stops loading here)",
                    ));
                }
                self.cfg.analyzers.push(Analyzer {
                    line: no,
                    ..Analyzer::default()
                });
            }
            t if (t.starts_with("Analyzer2D.") || t.starts_with("Analyzer3D."))
                && names::KNOWN_TAGS.contains(&t) =>
            {
                let nwindows = self.cfg.windows.len() as u32;
                let a = self.analyzer(tag)?;
                analyzer_tag(a, tag, rest.trim_end(), nwindows)?;
            }
            t if t.starts_with('<') => {} // `< NEW DISPLAYING WINDOW ... >` is a comment
            t if names::KNOWN_TAGS.contains(&t) => {}
            _ => {
                return Err(Issue::Ignored(format!(
                    "unknown tag '{tag}' (Paraver ignores the line)"
                )))
            }
        }
        Ok(())
    }
}
