//! Exact names Paraver accepts in a cfg (paraver-kernel `::name` strings, `api/paraverlabels.h`),
//! grouped by where they may appear. A name outside its group is a window Paraver cannot build.
//! Each group is one string, its names apart by `|` ([`listed`]).

/// Thread functions that read state records.
pub const STATE_FUNCTIONS: &str = "\
    State As Is|Useful|State Sign|Given State|In State|Not In State|State Record Dur.";

/// Thread functions that read event records (filtered by `evt_type` / `evt_value`).
pub const EVENT_FUNCTIONS: &str = "\
    Last Evt Type|Last Evt Val|Last Evt Val w/o Bursts|Next Evt Type|Next Evt Val|\
    Avg Next Evt Val|Avg Last Evt Val|Given Evt Val|In Evt Val|Int. Between Evt|Not In Evt Val|\
    In Evt Range|Event Bytes|Event Sent Bytes";

/// Thread functions that read communication records (filtered by `tag_msg`, `size_msg`...).
pub const COMM_FUNCTIONS: &str = "\
    Last Tag|Comm Size|Comm Recv. Partner|Comm Partner|Last Send Dur.|Next Recv Dur.|\
    Last Send Size|Send Bytes in Transit|Send Messages in Transit|Send BandWidth|\
    Recv Bytes in Transit|Recv Messages in Transit|Recv BandWidth|Recv Negative Messages|\
    Recv Negative Bytes|Number Of Sends|Number Of Send Bytes|Number Of Receives|\
    Number Of Receive Bytes";

/// Thread functions that only need the object model.
pub const OBJECT_FUNCTIONS: &str = "\
    Application ID|TaskID|Thread ID|Node ID|Cpu ID|In Appl ID|In Task ID|In Thread ID|In Node ID|\
    In Cpu ID";

/// Functions combining the threads of a task, the tasks of an application, the CPUs of a node...
pub const NOT_THREAD_FUNCTIONS: &str = "\
    Adding|AddingSign|Average|Maximum|Minimum|Activity|In Activity|Mode|Thread i|Add Tasks|\
    Changed value";

pub const CPU_FUNCTIONS: &str = "Active Thd|Active Thd Sign|Active Thd Val|Active Thd Val Sign";

/// `compose_*` / `topcompose*` functions.
pub const COMPOSE_FUNCTIONS: &str = "\
    As Is|Sign|1-Sign|Mod|Mod+1|Div|Prod|Add|Subs|Complement|Inverse Div|Select Range|\
    Select Range [)|Is In Range|Is In Range [)|Is Equal|Is Equal (Sign)|Floor|Ceil|Round|Abs|\
    Stacked Val|In Stacked Val|Nesting level|LRU Depth|Enumerate|Accumulate|Delta|Burst Time|\
    Divide by Burst Time|Begin Time|End Time|Join Bursts|Timer|Translate|sin|cos|sqrt (abs)|\
    arc tan|log N|exp";

/// `window_operation` of a composed (derived) window.
pub const DERIVED_FUNCTIONS: &str = "\
    add|product|substract|divide|maximum|minimum|different|controlled: clear by|\
    controlled: maximum|controlled: add|controlled: enumerate|controlled: average";

/// Filter functions (`{evt_type, =}`, `{tag_msg, All}`...).
pub const FILTER_FUNCTIONS: &str = "All|None|=|!=|>|<|[x,y]";

/// Filter keys of `window_selected_functions` and `window_filter_module`.
pub const FILTER_KEYS: &str = "from_obj|to_obj|tag_msg|size_msg|bw_msg|evt_type|evt_value";

/// Histogram statistics computed from the data window's semantic values.
pub const SEMANTIC_STATISTICS: &str = "\
    Time|% Time|% Time Not Zero|% Window Time|# Bursts|% # Bursts|Integral|Average value|Maximum|\
    Minimum|Average Burst Time|Stdev Burst Time|Average per Burst|Average per Burst != 0|\
    Average value != 0|# Bursts != 0|Sum bursts";

/// Histogram statistics computed from communication records.
pub const COMM_STATISTICS: &str = "\
    #Sends|#Receives|Bytes sent|Bytes received|Average bytes sent|Average bytes received|\
    Minimum bytes sent|Minimum bytes received|Maximum bytes sent|Maximum bytes received";

pub const TIME_UNITS: &str = "Nanoseconds|Microseconds|Milliseconds|Seconds|Minutes|Hours|Days";

pub const DRAW_MODES: &str = "\
    0|1|2|3|4|5|6|7|draw_last|draw_maximum|draw_minnotzero|draw_random|draw_randnotzero|\
    draw_average|draw_averagenotzero|draw_mode|draw_absolute_maximum|draw_absolute_minimum";

pub const COLOR_MODES: &str = "\
    window_in_code_mode|window_in_gradient_mode|window_in_null_gradient_mode|\
    window_in_alternative_gradient_mode|window_in_punctual_mode|window_in_fused_lines_mode";

/// Every tag Paraver's loader knows (`CFGLoader::loadMap`) plus the header/description lines and
/// `window_id`, which Paraver writes but ignores when loading (and `< NEW ANALYZER2D >`: see
/// [`is_known_tag`]).
pub const KNOWN_TAGS: &str = "\
    ConfigFile.Version:|ConfigFile.NumWindows:|ConfigFile.BeginDescription|\
    ConfigFile.EndDescription|CFG4D_ENABLED|cfg4d|cfg4dlink|cfg4dstatistic|cfg4dparam|window_name|\
    window_type|window_id|window_factors|window_shifts|window_position_x|window_position_y|\
    window_width|window_height|window_comm_lines_enabled|window_flags_enabled|\
    window_noncolor_mode|window_color_mode|window_gradient_function|window_custom_color_enabled|\
    window_custom_color_palette|window_semantic_scale_min_at_zero|window_units|window_operation|\
    window_maximum_y|window_minimum_y|window_compute_y_max|window_level|window_scale_relative|\
    window_end_time_relative|window_object|window_identifiers|window_zoom_objects|\
    window_begin_time|window_stop_time|window_end_time|window_begin_time_relative|\
    window_number_of_row|window_selected_functions|window_semantic_module|\
    window_compose_functions|window_filter_module|window_logical_filtered|\
    window_physical_filtered|window_intracomms_enabled|window_intercomms_enabled|\
    window_comm_fromto|window_comm_tagsize|window_comm_typeval|window_open|window_drawmode|\
    window_drawmode_rows|window_pixel_size|window_labels_to_draw|window_object_axis_position|\
    window_punctual_color_window|window_synchronize|Analyzer2D.Name:|Analyzer2D.X:|Analyzer2D.Y:|\
    Analyzer2D.Width:|Analyzer2D.Height:|Analyzer2D.ControlWindow:|Analyzer2D.DataWindow:|\
    Analyzer2D.Statistic:|Analyzer2D.CalculateAll:|Analyzer2D.HideCols:|Analyzer2D.HorizVert:|\
    Analyzer2D.Color:|Analyzer2D.SemanticColor:|Analyzer2D.Zoom:|Analyzer2D.Accumulator:|\
    Analyzer2D.AccumulateByControlWindow:|Analyzer2D.SortCols:|Analyzer2D.SortCriteria:|\
    Analyzer2D.SortReverse:|Analyzer2D.Parameters:|Analyzer2D.AnalysisLimits:|\
    Analyzer2D.RelativeTime:|Analyzer2D.ComputeYScale:|Analyzer2D.ComputeYScaleZero:|\
    Analyzer2D.Minimum:|Analyzer2D.Maximum:|Analyzer2D.Delta:|Analyzer2D.UseCustomDelta:|\
    Analyzer2D.UseFixedDelta:|Analyzer2D.NumColumns:|Analyzer2D.ComputeGradient:|\
    Analyzer2D.MinimumGradient:|Analyzer2D.MaximumGradient:|Analyzer2D.Objects:|\
    Analyzer2D.DrawModeObjects:|Analyzer2D.DrawModeColumns:|Analyzer2D.PixelSize:|\
    Analyzer2D.CodeColor:|Analyzer2D.ColorMode:|Analyzer2D.ShowOnlyTotals:|\
    Analyzer2D.ShortHeaderLabels:|Analyzer2D.Synchronize:|Analyzer2D.3D_ControlWindow:|\
    Analyzer3D.ComputeYScale:|Analyzer2D.3D_Minimum:|Analyzer2D.3D_Maximum:|Analyzer2D.3D_Delta:|\
    Analyzer2D.3D_FixedValue:";

/// Whether `name` is one of `list`'s (names apart by `|`).
pub fn listed(list: &str, name: &str) -> bool {
    list.split('|').any(|n| n == name)
}

/// Whether `tag` is one of [`KNOWN_TAGS`] or the analyzer's `< NEW ANALYZER2D >` line.
pub fn is_known_tag(tag: &str) -> bool {
    tag == "< NEW ANALYZER2D >" || listed(KNOWN_TAGS, tag)
}

/// Names allowed at a `window_selected_functions` / `window_compose_functions` key.
pub fn functions_for_key(key: &str) -> Option<Vec<&'static str>> {
    let lists: &[&'static str] = match key {
        "thread" => &[
            STATE_FUNCTIONS,
            EVENT_FUNCTIONS,
            COMM_FUNCTIONS,
            OBJECT_FUNCTIONS,
        ],
        "workload" | "appl" | "ptask" | "task" | "system" | "node" => &[NOT_THREAD_FUNCTIONS],
        "cpu" => &[CPU_FUNCTIONS],
        "compose_workload" | "compose_appl" | "compose_task" | "compose_thread" | "compose_cpu"
        | "compose_node" | "compose_system" | "topcompose" | "topcompose1" | "topcompose2"
        | "compose1" | "compose2" | "extratopcompose1" => &[COMPOSE_FUNCTIONS],
        _ => return None,
    };
    Some(lists.iter().flat_map(|l| l.split('|')).collect())
}
