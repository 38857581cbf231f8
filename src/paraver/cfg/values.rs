//! The value grammar of individual cfg lines: function lists, filter modules, object
//! selections, semantic parameters and histogram settings.

use super::{names, Analyzer, Level, ObjectSelection, SemanticParams, Window};

pub(super) fn numbers(rest: &str, tag: &str) -> Result<Vec<f64>, String> {
    rest.split(' ')
        .map(|v| {
            v.parse::<f64>()
                .map_err(|_| format!("{tag}: '{v}' is not a number"))
        })
        .collect()
}

/// `{ N, { {key, function}, ... } }`: Paraver reads exactly N entries.
pub(super) fn function_list(rest: &str, tag: &str) -> Result<Vec<(String, String)>, String> {
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

pub(super) fn check_function(key: &str, function: &str, compose: bool) -> Result<(), String> {
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
pub(super) fn semantic_module(rest: &str) -> Result<SemanticParams, String> {
    let bad = || {
        format!(
            "window_semantic_module '{rest}' must be 'level function {{ N, {{ k v..., ... }} }}'"
        )
    };
    let (key, after) = rest.split_once(' ').ok_or_else(bad)?;
    let brace = after.find('{').ok_or_else(bad)?;
    let function = after[..brace].trim_end().to_owned();
    let tokens: Vec<&str> = after[brace..]
        .split(['{', '}', ',', ' '])
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
pub(super) fn filter_module(w: &mut Window, rest: &str) -> Result<(), String> {
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
pub(super) fn object_selection(
    line: usize,
    rest: &str,
    own: Level,
) -> Result<ObjectSelection, String> {
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
    let close = inner.rfind('}').filter(|&c| c > open).ok_or_else(bad)?;
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

pub(super) fn analyzer_tag(
    a: &mut Analyzer,
    tag: &str,
    v: &str,
    nwindows: u32,
) -> Result<(), String> {
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
            if !names::listed(names::SEMANTIC_STATISTICS, v)
                && !names::listed(names::COMM_STATISTICS, v)
            {
                return Err(format!("'{v}' is not a histogram statistic"));
            }
            a.statistic = Some(v.to_owned());
        }
        "Analyzer2D.ComputeYScale:" => a.compute_y_scale = Some(boolean(v)?),
        "Analyzer2D.Minimum:" => a.minimum = Some(number(v)?),
        "Analyzer2D.Maximum:" => a.maximum = Some(number(v)?),
        "Analyzer2D.Delta:" => a.delta = Some(number(v)?),
        "Analyzer2D.HorizVert:" if v != "Horizontal" && v != "Vertical" => {
            return Err(format!("{tag} '{v}' must be Horizontal or Vertical"));
        }
        "Analyzer2D.AnalysisLimits:" if !matches!(v, "Alltrace" | "Allwindow" | "Region") => {
            return Err(format!("{tag} '{v}' must be Alltrace, Allwindow or Region"));
        }
        "Analyzer2D.Zoom:" if v != "Enabled" && v != "Disabled" => {
            return Err(format!("{tag} '{v}' must be Enabled or Disabled"));
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
        // The other known histogram tags take values Paraver does not validate.
        _ => {}
    }
    Ok(())
}
