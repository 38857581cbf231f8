//! prvsight's own Paraver cfgs (cfgs/): each parses without problem and can be applied to the
//! converted representative trace (every event type, label, state and message tag it needs is
//! there); the cfg checker catches what would make Paraver refuse or empty a view.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::shared_traces;
use prvsight::nsys::Export;
use prvsight::paraver::cfg::{self, check_cfg, Finding, Level, Severity, TraceFacts, WindowKind};
use prvsight::paraver::check::{check_readers, CheckOptions};
use prvsight::paraver::ParaverWriter;
use prvsight::pipeline;
use prvsight::Options;

const CFGS: &[&str] = &[
    "active_time.cfg",
    "comm_compute_overlap.cfg",
    "cuda_activity.cfg",
    "cuda_api.cfg",
    "gpu_active.cfg",
    "gpu_idle_gaps.cfg",
    "gpu_kernels.cfg",
    "gpu_useful.cfg",
    "kernel_count.cfg",
    "kernel_duration.cfg",
    "kernels_in_flight.cfg",
    "launch_parameters.cfg",
    "memory_operations.cfg",
    "nccl_kernels.cfg",
    "nvtx_pushpop.cfg",
    "nvtx_startend.cfg",
    "states.cfg",
    "states_profile.cfg",
    "useful_time.cfg",
];

fn cfg_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/cfgs"))
}

fn read_cfg(name: &str) -> String {
    std::fs::read_to_string(cfg_dir().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Converts one export through the library and checks the trace; its facts for cfg checks.
fn facts_of(path: &Path) -> TraceFacts {
    let exports = vec![Export::open_path(path).unwrap()];
    let (mut prv, mut pcf, mut row) = (Vec::new(), Vec::new(), Vec::new());
    {
        let mut w = ParaverWriter::new(Box::new(&mut prv), Box::new(&mut pcf), Box::new(&mut row));
        pipeline::run(&exports, &Options::default(), &mut [&mut w], &mut |_| true).unwrap();
    }
    let pcf = String::from_utf8(pcf).unwrap();
    let row = String::from_utf8(row).unwrap();
    let report = check_readers(&prv[..], &pcf, &row, &CheckOptions::default());
    assert!(report.is_ok(), "{}: {report}", path.display());
    TraceFacts::from_report(&report)
}

enum Source {
    /// ../shared/traces/mfu_2gpu_before.sqlite: kernels, NCCL, memcpy/memset, API, NVTX, links.
    Representative(PathBuf),
    /// A small real export shipped in tests/data (not every view has data there).
    Fallback(PathBuf),
}

fn source() -> Option<Source> {
    let shared = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/traces"));
    if shared.join("mfu_2gpu_before.sqlite").is_file() {
        return Some(Source::Representative(
            shared.join("mfu_2gpu_before.sqlite"),
        ));
    }
    let data = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data"));
    let mut found: Vec<PathBuf> = std::fs::read_dir(&data)
        .into_iter()
        .flatten()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sqlite"))
        .collect();
    found.sort();
    match found.into_iter().next() {
        Some(p) => {
            eprintln!(
                "SKIP: ../shared/traces missing; checking cfgs against {} instead",
                p.display()
            );
            Some(Source::Fallback(p))
        }
        None => {
            eprintln!("SKIP: neither ../shared/traces nor tests/data/*.sqlite: cfgs not checked against a trace");
            None
        }
    }
}

#[test]
fn cfg_folder_holds_exactly_the_documented_views() {
    let mut names: Vec<String> = std::fs::read_dir(cfg_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".cfg"))
        .collect();
    names.sort();
    assert_eq!(names, CFGS);
    let readme = std::fs::read_to_string(cfg_dir().join("README.md")).unwrap();
    for name in CFGS {
        assert!(
            readme.contains(&format!("`{name}`")),
            "cfgs/README.md does not list {name}"
        );
    }
}

#[test]
fn every_cfg_parses_cleanly_with_a_one_line_description() {
    for name in CFGS {
        let text = read_cfg(name);
        let c = cfg::parse(&text);
        assert!(c.problems.is_empty(), "{name}: {:#?}", c.problems);
        assert!(c.warnings.is_empty(), "{name}: {:#?}", c.warnings);
        assert_eq!(c.version.as_deref(), Some("3.4"), "{name}");
        assert_eq!(c.num_windows, Some(c.windows.len() as u32), "{name}");
        let d = c
            .description
            .as_deref()
            .unwrap_or_else(|| panic!("{name}: no description"));
        assert!(
            !d.contains('\n') && d.len() > 40,
            "{name}: description {d:?}"
        );
        assert!(
            text.lines()
                .nth(1)
                .is_some_and(|l| l.starts_with("# prvsight view: ")),
            "{name}: second line must be the '# prvsight view:' comment"
        );
    }
}

#[test]
fn cfg_structure_matches_what_each_view_promises() {
    let c = cfg::parse(&read_cfg("gpu_useful.cfg"));
    let w = &c.windows[0];
    assert_eq!((w.kind, w.level), (WindowKind::Single, Some(Level::Task)));
    assert_eq!(w.thread_function(), "Last Evt Val");
    assert_eq!(w.compose["compose_thread"], "Sign");
    assert_eq!(w.functions["task"], "AddingSign");
    assert_eq!(
        (w.filter("evt_type"), w.evt_types.as_slice()),
        ("=", &[63000006][..])
    );
    assert_eq!(w.evt_type_labels, ["CUDA kernel"]);

    let c = cfg::parse(&read_cfg("cuda_activity.cfg"));
    assert_eq!(
        c.windows[0].evt_types,
        [63000000, 63000001, 63000006, 63000007]
    );

    let c = cfg::parse(&read_cfg("kernels_in_flight.cfg"));
    let w = &c.windows[0];
    assert_eq!(w.thread_function(), "Send Messages in Transit");
    assert_eq!(
        (w.filter("tag_msg"), w.comm_tags.as_slice()),
        ("=", &[55001][..])
    );
    assert_eq!(c.required_comm_tags(), [55001]);

    let c = cfg::parse(&read_cfg("comm_compute_overlap.cfg"));
    assert_eq!(c.windows.len(), 3);
    assert_eq!(c.windows[0].functions["task"], "Adding");
    assert_eq!(c.windows[2].kind, WindowKind::Composed);
    assert_eq!(
        (
            c.windows[2].operation.as_deref(),
            c.windows[2].parents.as_slice()
        ),
        (Some("product"), &[1, 2][..])
    );
    let a = &c.analyzers[0];
    assert_eq!(
        (a.control_window, a.data_window, a.statistic.as_deref()),
        (Some(3), Some(3), Some("% Time"))
    );

    let c = cfg::parse(&read_cfg("kernel_duration.cfg"));
    assert_eq!(
        c.analyzers[0].statistic.as_deref(),
        Some("Average Burst Time")
    );
    let c = cfg::parse(&read_cfg("kernel_count.cfg"));
    assert_eq!(c.analyzers[0].statistic.as_deref(), Some("# Bursts"));
    for name in ["useful_time.cfg", "active_time.cfg"] {
        let c = cfg::parse(&read_cfg(name));
        assert_eq!(c.analyzers[0].statistic.as_deref(), Some("Time"), "{name}");
        assert_eq!(c.windows[0].effective_level(), Level::Task, "{name}");
    }
    let c = cfg::parse(&read_cfg("launch_parameters.cfg"));
    let types: Vec<u64> = c.windows.iter().flat_map(|w| w.evt_types.clone()).collect();
    assert_eq!(types, (9101..=9111).collect::<Vec<u64>>());
    let c = cfg::parse(&read_cfg("states.cfg"));
    assert_eq!(
        (
            c.windows[0].thread_function(),
            c.windows[0].filter("evt_type")
        ),
        ("State As Is", "All")
    );
}

#[test]
fn every_cfg_applies_to_the_representative_trace() {
    let Some(src) = source() else { return };
    match src {
        Source::Representative(path) => {
            let facts = facts_of(&path);
            // Views whose event types this trace lacks, and the real trace that has them.
            let elsewhere: BTreeMap<&str, (&str, Vec<String>)> = BTreeMap::from([(
                "nvtx_startend.cfg",
                (
                    "generated/nvtx_demo_nsys2022.4.sqlite",
                    vec![
                        "window 1 'NVTX start/end ranges': event type 9004 is not declared in the trace's .pcf".to_owned(),
                        "window 1 'NVTX start/end ranges': event type 9004 does not occur in the trace".to_owned(),
                        "no window lets any event of the trace through: paramedir prints 'None of the events specified in the filter appear in the trace' and aborts".to_owned(),
                    ],
                ),
            )]);
            for name in CFGS {
                let c = cfg::parse(&read_cfg(name));
                let problems = check_cfg(&c, &facts);
                match elsewhere.get(name) {
                    None => assert!(
                        problems.is_empty(),
                        "{name} on {}: {problems:#?}",
                        path.display()
                    ),
                    Some((other, expected)) => {
                        assert_eq!(&problems, expected, "{name} on the representative trace");
                        let other = path.parent().unwrap().join(other);
                        let problems = check_cfg(&c, &facts_of(&other));
                        assert!(
                            problems.is_empty(),
                            "{name} on {}: {problems:#?}",
                            other.display()
                        );
                    }
                }
            }
        }
        Source::Fallback(path) => {
            let facts = facts_of(&path);
            for name in CFGS {
                let c = cfg::parse(&read_cfg(name));
                let missing: Vec<u64> = c
                    .required_event_types()
                    .into_iter()
                    .filter(|&t| !facts.event_types.contains_key(&(t as u32)))
                    .collect();
                let missing_tags: Vec<i64> = c
                    .required_comm_tags()
                    .into_iter()
                    .filter(|&t| !facts.comm_tags.contains_key(&(t as u64)))
                    .collect();
                if !missing.is_empty() || !missing_tags.is_empty() {
                    eprintln!(
                        "SKIP: {name}: {} lacks event types {missing:?} / tags {missing_tags:?}",
                        path.display()
                    );
                    continue;
                }
                let problems = check_cfg(&c, &facts);
                assert!(
                    problems.is_empty(),
                    "{name} on {}: {problems:#?}",
                    path.display()
                );
            }
        }
    }
}

/// `nvtx_pushpop.cfg` is the default domain's view (cfgs/README.md, Limits): on an export whose
/// push/pop ranges are all in a named domain (type 9700), paramedir aborts on it; the bundle
/// leaves it out and ships that domain's view instead (tests/bundle_views.rs).
#[test]
fn the_default_domain_view_does_not_apply_to_ranges_of_a_named_domain_only() {
    let Some(traces) = shared_traces() else {
        return;
    };
    let facts = facts_of(&traces.join("isc25icon_gpu.sqlite"));
    assert_eq!(
        facts.pcf_types.get(&9700).map(String::as_str),
        Some("NVTX push/pop ranges, domain STDPAR")
    );
    let c = cfg::parse(&read_cfg("nvtx_pushpop.cfg"));
    assert_eq!(
        check_cfg(&c, &facts),
        [
            "window 1 'NVTX ranges (innermost)': event type 9600 is not declared in the trace's .pcf",
            "window 1 'NVTX ranges (innermost)': event type 9600 does not occur in the trace",
            "window 2 'NVTX ranges (level 1)': event type 9601 is not declared in the trace's .pcf",
            "window 2 'NVTX ranges (level 1)': event type 9601 does not occur in the trace",
            "no window lets any event of the trace through: paramedir prints 'None of the events specified in the filter appear in the trace' and aborts",
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// The checker catches broken cfgs.

/// A trace as the cfg checker sees it: 1 application, 2 tasks of 2 threads, one node.
fn small_facts() -> TraceFacts {
    TraceFacts {
        pcf_types: BTreeMap::from([
            (63000006, "CUDA kernel".to_owned()),
            (63000007, "NCCL kernel".to_owned()),
            (63000000, "CUDA API call".to_owned()),
        ]),
        pcf_states: BTreeMap::from([(0, "Idle".to_owned()), (1, "Running".to_owned())]),
        event_types: BTreeMap::from([(63000006, 40), (63000007, 10)]),
        states: BTreeMap::from([(0, 5), (1, 7)]),
        comm_tags: BTreeMap::from([(55001, 20)]),
        appls: vec![vec![2, 2]],
        nodes: vec![1],
    }
}

/// 1-based line of the first line of `text` containing `needle`.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .expect("needle in text")
        + 1
}

fn problems_of(text: &str, facts: &TraceFacts) -> Vec<String> {
    check_cfg(&cfg::parse(text), facts)
}

#[test]
fn own_cfgs_pass_on_the_small_facts_where_their_types_exist() {
    for name in [
        "gpu_kernels.cfg",
        "nccl_kernels.cfg",
        "gpu_useful.cfg",
        "kernels_in_flight.cfg",
        "states.cfg",
        "comm_compute_overlap.cfg",
        "kernel_count.cfg",
    ] {
        assert_eq!(
            problems_of(&read_cfg(name), &small_facts()),
            Vec::<String>::new(),
            "{name}"
        );
    }
}

#[test]
fn a_missing_event_type_is_caught() {
    let text = read_cfg("gpu_kernels.cfg")
        .replace("evt_type 1 63000006", "evt_type 1 63000099")
        .replace("\"CUDA kernel\"", "\"Missing kernel\"");
    assert_eq!(
        problems_of(&text, &small_facts()),
        [
            "window 1 'GPU kernels': event type 63000099 is not declared in the trace's .pcf",
            "window 1 'GPU kernels': event type 63000099 does not occur in the trace",
            "no window lets any event of the trace through: paramedir prints 'None of the events specified in the filter appear in the trace' and aborts",
        ]
    );
    // Declared in the pcf but absent from the body (63000000 here).
    let text = read_cfg("cuda_api.cfg");
    let p = problems_of(&text, &small_facts());
    assert_eq!(
        p[0],
        "window 1 'CUDA API calls': event type 63000000 does not occur in the trace"
    );
    assert_eq!(p.len(), 2, "{p:#?}");
}

#[test]
fn labels_must_equal_the_pcf_labels() {
    let text = read_cfg("gpu_kernels.cfg").replace("\"CUDA kernel\"", "\"GPU kernel\"");
    assert_eq!(
        problems_of(&text, &small_facts()),
        ["window 1 'GPU kernels': type 63000006 is labelled \"CUDA kernel\" in the .pcf, not \"GPU kernel\""]
    );
    // A label that names another type makes Paraver filter on that type.
    let text = read_cfg("gpu_kernels.cfg").replace("\"CUDA kernel\"", "\"NCCL kernel\"");
    assert_eq!(
        problems_of(&text, &small_facts()),
        ["window 1 'GPU kernels': label \"NCCL kernel\" is type 63000007 in the .pcf, so Paraver filters on 63000007 instead of 63000006"]
    );
    let text = read_cfg("gpu_kernels.cfg").replace(
        "evt_type_label 1 \"CUDA kernel\"",
        "evt_type_label 2 \"CUDA kernel\" \"x\"",
    );
    let p = problems_of(&text, &small_facts());
    assert!(p.contains(&"window 1 'GPU kernels': 1 evt_type value(s) but 2 evt_type_label(s) (Paraver drops the window)".to_owned()), "{p:#?}");
}

#[test]
fn bad_histogram_window_index_and_statistic_are_caught() {
    let text = read_cfg("kernel_count.cfg")
        .replace("Analyzer2D.ControlWindow: 1", "Analyzer2D.ControlWindow: 2");
    let p = problems_of(&text, &small_facts());
    let at = line_of(&text, "Analyzer2D.ControlWindow:");
    assert_eq!(p[0], format!("cfg line {at}: Analyzer2D.ControlWindow: '2' is not a window of this file (1..1 defined so far)"));
    assert_eq!(
        p[1],
        "histogram 1 'Kernel executions': needs Analyzer2D.ControlWindow and Analyzer2D.DataWindow"
    );
    assert_eq!(p.len(), 2);
    let text = read_cfg("kernel_count.cfg")
        .replace("Analyzer2D.DataWindow: 1", "Analyzer2D.DataWindow: 0");
    assert!(problems_of(&text, &small_facts())[0]
        .contains("Analyzer2D.DataWindow: '0' is not a window"));
    let text =
        read_cfg("kernel_count.cfg").replace("Statistic: # Bursts", "Statistic: Number of bursts");
    let p = problems_of(&text, &small_facts());
    assert!(
        p[0].ends_with("'Number of bursts' is not a histogram statistic"),
        "{p:#?}"
    );
    assert!(p[1].ends_with("no Analyzer2D.Statistic"), "{p:#?}");
    let text = read_cfg("useful_time.cfg").replace(
        "Analyzer2D.Delta: 1.000000000000",
        "Analyzer2D.Delta: 0.000000000000",
    );
    let p = problems_of(&text, &small_facts());
    assert_eq!(p, ["histogram 1 'GPU useful time per process [ns]': fixed columns need Minimum <= Maximum and Delta > 0 (got Some(0.0), Some(1.0), Some(0.0))"]);
}

#[test]
fn composed_window_references_are_checked() {
    let text = read_cfg("comm_compute_overlap.cfg")
        .replace("window_identifiers 1 2", "window_identifiers 1 3");
    let p = problems_of(&text, &small_facts());
    assert!(
        p[0].ends_with("window_identifiers: 3 is not an earlier window (this is window 3)"),
        "{p:#?}"
    );
    assert!(p.iter().any(|x| x == "window 3 'Kernels running during communication': a composed window needs 2 window_identifiers, it has 1"), "{p:#?}");
    let text = read_cfg("comm_compute_overlap.cfg")
        .replace("window_operation product", "window_operation multiply");
    assert!(problems_of(&text, &small_facts())[0]
        .ends_with("window_operation 'multiply' is not a derived function"));
}

#[test]
fn comm_views_need_their_tag() {
    let facts = TraceFacts {
        comm_tags: BTreeMap::from([(55002, 3)]),
        ..small_facts()
    };
    assert_eq!(
        problems_of(&read_cfg("kernels_in_flight.cfg"), &facts),
        ["window 1 'Kernels in flight': no communication with tag 55001 in the trace"]
    );
    let text = read_cfg("kernels_in_flight.cfg")
        .replace("window_comm_tagsize true", "window_comm_tagsize false");
    assert_eq!(
        problems_of(&text, &small_facts()),
        ["window 1 'Kernels in flight': window_comm_tagsize false (OR) with size_msg All lets every message through; the tag filter has no effect"]
    );
}

#[test]
fn state_views_need_states_and_known_state_parameters() {
    let facts = TraceFacts {
        states: BTreeMap::new(),
        ..small_facts()
    };
    assert_eq!(
        problems_of(&read_cfg("states.cfg"), &facts),
        ["window 1 'States': 'State As Is' reads states, and the trace has no state record"]
    );
    let text = read_cfg("states.cfg").replace("{thread, State As Is}", "{thread, Given State}")
        + "window_semantic_module thread Given State { 1, { 2 1.000000000000 13.000000000000 } }\n";
    assert_eq!(
        problems_of(&text, &small_facts()),
        ["window 1 'States': 'Given State' names state 13, which the trace never enters"]
    );
}

#[test]
fn syntax_paraver_refuses_is_caught() {
    let f = small_facts();
    let p = problems_of(
        &read_cfg("gpu_kernels.cfg").replace("window_type single", "window_type simple"),
        &f,
    );
    assert!(
        p[0].ends_with("window_type 'simple' is neither single nor composed"),
        "{p:#?}"
    );
    let p = problems_of(
        &read_cfg("gpu_kernels.cfg")
            .replace("{thread, Last Evt Val}", "{thread, Last Event Value}"),
        &f,
    );
    assert!(
        p[0].ends_with("'Last Event Value' is not a thread function (Paraver drops the window)"),
        "{p:#?}"
    );
    let p = problems_of(
        &read_cfg("gpu_kernels.cfg").replace("{ 14, {", "{ 13, {"),
        &f,
    );
    assert!(
        p[0].ends_with("window_selected_functions announces 13 entries but lists 14"),
        "{p:#?}"
    );
    let p = problems_of(
        &read_cfg("gpu_kernels.cfg").replace("{task, Adding}", "{task, Last Evt Val}"),
        &f,
    );
    assert!(
        p[0].ends_with("'Last Evt Val' is not a task function (Paraver drops the window)"),
        "{p:#?}"
    );
    let p = problems_of(
        &read_cfg("gpu_kernels.cfg")
            .replace("ConfigFile.NumWindows: 1", "ConfigFile.NumWindows: 2"),
        &f,
    );
    assert_eq!(
        p,
        ["ConfigFile.NumWindows: says 2 but the file defines 1 window(s)"]
    );
    let p = problems_of(
        &read_cfg("gpu_kernels.cfg").replace("#ParaverCFG\n", ""),
        &f,
    );
    assert!(
        p.is_empty(),
        "ConfigFile.Version + NumWindows also identify a cfg: {p:#?}"
    );
    let p = problems_of(
        &read_cfg("gpu_kernels.cfg").replace("window_comm_fromto true", "window_comm_fromto True"),
        &f,
    );
    assert!(
        p[0].ends_with("window_comm_fromto 'True' must be true or false (lower case)"),
        "{p:#?}"
    );
    let p = problems_of(
        &read_cfg("gpu_kernels.cfg").replace(
            "window_filter_module evt_type 1",
            "window_filter_modul evt_type 1",
        ),
        &f,
    );
    assert!(
        p[0].ends_with("unknown tag 'window_filter_modul' (Paraver ignores the line)"),
        "{p:#?}"
    );
    let p = problems_of(
        &read_cfg("useful_time.cfg").replace(
            "Analyzer2D.ComputeYScale: False",
            "Analyzer2D.ComputeYScale: Maybe",
        ),
        &f,
    );
    assert!(
        p[0].ends_with(
            "Analyzer2D.ComputeYScale: 'Maybe' must be True or False (histogram silently lost)"
        ),
        "{p:#?}"
    );
}

#[test]
fn objects_and_levels_must_exist_in_the_trace() {
    let f = small_facts();
    let text = read_cfg("gpu_useful.cfg").replace(
        "window_object appl { 1, { All } }",
        "window_object appl { 2, { All, All } }",
    );
    let at = line_of(&text, "window_object");
    assert_eq!(
        problems_of(&text, &f),
        [format!("window 1 'GPU useful': window_object appl (line {at}) lists 2 object(s), the trace has 1 (Paraver ignores the line)")]
    );
    let p = problems_of(
        &read_cfg("gpu_useful.cfg").replace(
            "window_object appl { 1, { All } }",
            "window_object task { 0, 2, { 0, 0 } }",
        ),
        &f,
    );
    assert_eq!(p, ["window 1 'GPU useful': no object selected at its level (paramedir: 'Some timeline has 0 objects selected')"]);
    let p = problems_of(
        &read_cfg("gpu_useful.cfg").replace(
            "window_object appl { 1, { All } }",
            "window_object task { 0, 2, { All, All } }",
        ),
        &f,
    );
    assert!(p[0].ends_with("window_object at the window's own level task needs 1/0, not 'All' (Paraver drops the window)"), "{p:#?}");
    let no_resources = TraceFacts {
        nodes: vec![],
        ..small_facts()
    };
    let p = problems_of(
        &read_cfg("gpu_kernels.cfg").replace("window_level thread", "window_level cpu"),
        &no_resources,
    );
    assert_eq!(p, ["window 1 'GPU kernels': level cpu needs a resource model, but the trace header has none"]);
}

#[test]
fn applicability_on_the_shipped_sample_export() {
    // 4 kernels, memcpys and API calls; no NCCL, no NVTX (tests/data/README.md).
    let p = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/testcuda_report1.sqlite"
    ));
    if !p.is_file() {
        eprintln!("SKIP: tests/data/testcuda_report1.sqlite is missing");
        return;
    }
    let facts = facts_of(&p);
    let not_applicable = [
        "comm_compute_overlap.cfg",
        "nccl_kernels.cfg",
        "nvtx_pushpop.cfg",
        "nvtx_startend.cfg",
    ];
    for name in CFGS {
        let c = cfg::parse(&read_cfg(name));
        assert_eq!(
            cfg::cfg_applies(&c, &facts),
            !not_applicable.contains(name),
            "{name}: {:#?}",
            cfg::assess_cfg(&c, &facts)
        );
    }
    // Without NCCL, views that also list other GPU work still load: warnings only.
    let c = cfg::parse(&read_cfg("gpu_active.cfg"));
    assert_eq!(
        cfg::assess_cfg(&c, &facts),
        [
            Finding {
                severity: Severity::Warning,
                message:
                    "window 1 'GPU active': event type 63000007 is not declared in the trace's .pcf"
                        .into()
            },
            Finding {
                severity: Severity::Warning,
                message: "window 1 'GPU active': event type 63000007 does not occur in the trace"
                    .into()
            },
        ]
    );
    // A view of NCCL kernels alone has nothing to show: errors, and paramedir aborts.
    let c = cfg::parse(&read_cfg("nccl_kernels.cfg"));
    let f = cfg::assess_cfg(&c, &facts);
    assert_eq!(f.len(), 3);
    assert!(f.iter().all(|x| x.severity == Severity::Error), "{f:#?}");
}

#[test]
fn ignored_lines_are_warnings_and_refused_lines_errors() {
    let f = small_facts();
    let text =
        read_cfg("gpu_kernels.cfg").replace("window_units Nanoseconds", "window_units Fortnights");
    let c = cfg::parse(&text);
    assert!(c.problems.is_empty());
    assert_eq!(c.warnings.len(), 1);
    assert!(cfg::cfg_applies(&c, &f));
    let text =
        read_cfg("gpu_kernels.cfg").replace("{thread, Last Evt Val}", "{thread, Last Event Value}");
    let c = cfg::parse(&text);
    assert_eq!((c.problems.len(), c.warnings.len()), (1, 0));
    assert!(!cfg::cfg_applies(&c, &f));
}

#[test]
fn mutated_cfgs_never_panic() {
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    const BYTES: &[u8] = b"{}, \n\"0123456789-.:<>#\xc3\xa9";
    let facts = small_facts();
    for name in CFGS {
        let text = read_cfg(name);
        for _ in 0..150 {
            let mut b = text.as_bytes().to_vec();
            for _ in 0..1 + next() % 8 {
                let at = (next() % b.len() as u64) as usize;
                let c = BYTES[(next() % BYTES.len() as u64) as usize];
                match next() % 3 {
                    0 => b[at] = c,
                    1 => {
                        b.remove(at);
                    }
                    _ => b.insert(at, c),
                }
            }
            let text = String::from_utf8_lossy(&b);
            let _ = check_cfg(&cfg::parse(&text), &facts);
        }
    }
}
