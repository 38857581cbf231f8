//! The checker on small hand-written traces: good ones pass, each defect is caught and named.

use super::*;

#[test]
fn the_reference_trace_passes_with_exact_statistics() {
    let r = check(PRV, PCF, ROW);
    assert!(r.is_ok(), "{r}");
    assert_eq!(r.ftime(), 1000);
    assert_eq!((r.appls(), r.tasks(), r.threads()), (1, 2, 2));
    assert_eq!((r.nodes(), r.cpus()), (1, 2));
    let s = &r.stats;
    assert_eq!(
        (
            s.state_records,
            s.event_records,
            s.event_pairs,
            s.comm_records
        ),
        (3, 2, 4, 1)
    );
    assert_eq!(
        s.states.iter().collect::<Vec<_>>(),
        [(&0, &1), (&1, &1), (&5, &1)]
    );
    assert_eq!(s.event_types.get(&50000), Some(&2));
    assert_eq!(s.nonzero_events.get(&50000), Some(&1));
    assert_eq!(s.nonzero_events.get(&50001), Some(&1));
    assert_eq!(
        s.values[&50000].iter().collect::<Vec<_>>(),
        [(&0, &1), (&5, &1)]
    );
    assert_eq!(
        s.values[&50001].iter().collect::<Vec<_>>(),
        [(&0, &1), (&64, &1)]
    );
    assert_eq!(s.comm_tags.iter().collect::<Vec<_>>(), [(&7, &1)]);
    assert_eq!(r.pcf.types[&50000].label, "CUDA kernel");
    assert_eq!(r.pcf.types[&50001].values, None);
    assert_eq!(r.pcf.states[&5], "Synchronization");
    assert_eq!(r.to_string().lines().last(), Some("OK: no problem found"));
}

#[test]
fn crlf_line_endings_pass() {
    let prv = PRV.replace('\n', "\r\n");
    let row = ROW.replace('\n', "\r\n");
    let r = check(&prv, PCF, &row);
    assert!(r.is_ok(), "{r}");
    assert_eq!(r.stats.state_records, 3);
}

#[test]
fn two_applications_with_either_separator_and_communicators_pass() {
    for sep in [":", ","] {
        let prv = format!(
            "#Paraver (31/12/2023 at 23:59):100_ns:1(1):2:1(1:1){sep}1(2:1),1\n\
             c:1:1:1:1\n\
             1:0:1:1:1:0:100:1\n1:1:2:1:1:0:100:1\n1:0:2:1:2:0:100:0\n"
        );
        let row = "LEVEL APPL SIZE 2\na\nb\n\nLEVEL THREAD SIZE 3\nt1\nt2\nt3\n";
        let r = check(&prv, PCF, row);
        assert!(r.is_ok(), "separator {sep}: {r}");
        assert_eq!((r.appls(), r.tasks(), r.threads()), (2, 2, 3));
        assert_eq!(r.header.as_ref().unwrap().ncomm, 1);
    }
}

#[test]
fn no_resource_model_with_cpu_zero_passes() {
    let prv =
        "#Paraver (01/01/2024 at 00:00):10_ns:0:1:1(2:1),0\n1:0:1:1:1:0:10:1\n1:0:1:1:2:0:10:0\n";
    let r = check(prv, PCF, "LEVEL THREAD SIZE 2\na\nb\n");
    assert!(r.is_ok(), "{r}");
    assert_eq!((r.nodes(), r.cpus(), r.threads()), (0, 0, 2));
}

#[test]
fn gaps_are_accepted_when_coverage_is_not_required() {
    let prv = with_line(7, "1:0:1:1:1:500:900:5");
    assert!(run(&prv, PCF, ROW, false).is_ok());
    let r = check(&prv, PCF, ROW);
    assert_eq!(r.problems.len(), 2, "{r}");
    assert!(r.problems[0]
        .contains("thread 1.1.1: 1 gap(s) between states, first at line 7 (no state from 400)"));
    assert!(r.problems[1].contains("thread 1.1.1: states end at 900, before the trace end 1000"));
}

// ---------------------------------------------------------------------------------------------
// Header

#[test]
fn header_must_start_with_paraver() {
    only_problem(
        &check(
            &with_header("Paraver (01/01/2024 at 00:00):1000_ns:1(2):1:2(1:1,1:1),0"),
            PCF,
            ROW,
        ),
        "must start with '#Paraver ('",
    );
}

#[test]
fn header_date_must_be_dd_mm_yyyy_at_hh_mm() {
    let r = check(
        &with_header("#Paraver (2024-01-01 00:00):1000_ns:1(2):1:2(1:1,1:1),0"),
        PCF,
        ROW,
    );
    only_problem(&r, "is not 'DD/MM/YYYY at HH:MM'");
    let r = check(
        &with_header("#Paraver (32/01/2024 at 00:00):1000_ns:1(2):1:2(1:1,1:1),0"),
        PCF,
        ROW,
    );
    only_problem(&r, "out-of-range field");
}

#[test]
fn header_end_time_needs_ns_unit() {
    let r = check(
        &with_header("#Paraver (01/01/2024 at 00:00):1000:1(2):1:2(1:1,1:1),0"),
        PCF,
        ROW,
    );
    only_problem(&r, "no '_ns' unit");
    let r = check(
        &with_header("#Paraver (01/01/2024 at 00:00):1000_us:1(2):1:2(1:1,1:1),0"),
        PCF,
        ROW,
    );
    only_problem(&r, "time unit '_us'");
}

#[test]
fn header_end_time_must_be_an_integer() {
    let r = check(
        &with_header("#Paraver (01/01/2024 at 00:00):10.5_ns:1(2):1:2(1:1,1:1),0"),
        PCF,
        ROW,
    );
    assert!(r.header.is_none());
    assert!(
        r.problems.contains(
            &"header: expected ':' after the end time at column 34, found '.'".to_owned()
        ),
        "{r}"
    );
    // Without objects the body is not checked record by record.
    assert_eq!(r.problems.len(), 2, "{r}");
}

#[test]
fn header_node_count_must_match_cpu_list() {
    let r = check(
        &with_header("#Paraver (01/01/2024 at 00:00):1000_ns:2(2):1:2(1:1,1:1),0"),
        PCF,
        ROW,
    );
    // The NODE level of the row (1 label) still matches the one CPU count given.
    assert!(
        r.problems
            .iter()
            .any(|p| p.contains("2 node(s) declared but 1 CPU count(s) given")),
        "{r}"
    );
}

#[test]
fn header_task_on_missing_node_is_caught() {
    let prv = with_header("#Paraver (01/01/2024 at 00:00):1000_ns:1(2):1:2(1:1,1:2),0");
    let r = check(&prv, PCF, ROW);
    assert!(
        r.problems
            .iter()
            .any(|p| p == "header: task 1.2 is on node 2, but the header declares 1 node(s)"),
        "{r}"
    );
}

#[test]
fn header_zero_applications_tasks_or_threads_are_refused() {
    let r = check(
        &with_header("#Paraver (01/01/2024 at 00:00):1000_ns:1(2):0:2(1:1,1:1),0"),
        PCF,
        ROW,
    );
    assert!(r.header.is_none());
    assert!(r.problems[0].contains("0 applications"), "{r}");
    let r = check(
        &with_header("#Paraver (01/01/2024 at 00:00):1000_ns:1(2):1:2(0:1,1:1),0"),
        PCF,
        ROW,
    );
    assert!(r.problems[0].contains("task 1.1 has 0 threads"), "{r}");
}

#[test]
fn header_task_count_must_match_task_list() {
    let r = check(
        &with_header("#Paraver (01/01/2024 at 00:00):1000_ns:1(2):1:3(1:1,1:1),0"),
        PCF,
        ROW,
    );
    // TASK level of the row has 2 labels: still consistent with the 2 listed tasks.
    only_problem(&r, "application 1 declares 3 task(s) but lists 2");
}

#[test]
fn header_trailing_text_is_refused() {
    let r = check(
        &with_header("#Paraver (01/01/2024 at 00:00):1000_ns:1(2):1:2(1:1,1:1),0:"),
        PCF,
        ROW,
    );
    assert!(r.header.is_none());
    assert!(r.problems[0].contains("unexpected text ':'"), "{r}");
}

#[test]
fn header_needs_the_communicator_count() {
    let r = check(
        &with_header("#Paraver (01/01/2024 at 00:00):1000_ns:1(2):1:2(1:1,1:1)"),
        PCF,
        ROW,
    );
    only_problem(&r, "no ',NCOMM' communicator count");
    assert_eq!(r.threads(), 2);
}

#[test]
fn header_object_limit_is_enforced() {
    let prv = "#Paraver (01/01/2024 at 00:00):10_ns:0:1:1(70000:0),0\n";
    let r = run(prv, PCF, "", false);
    assert!(
        r.problems
            .iter()
            .any(|p| p.contains("thread count 70000 exceeds 65535")),
        "{r}"
    );
}

#[test]
fn communicator_lines_must_start_with_c_or_i() {
    let prv = PRV.replacen("1:1),0\n", "1:1),1\nx:1:1:2:1:2\n", 1);
    only_problem(
        &check(&prv, PCF, ROW),
        "line 2: communicator lines start with 'c' or 'i'",
    );
    let prv = PRV.replacen("1:1),0\n", "1:1),1\nc:1:1:2:1:2\n", 1);
    assert!(check(&prv, PCF, ROW).is_ok());
}

// ---------------------------------------------------------------------------------------------
// Body syntax

#[test]
fn fields_must_be_unsigned_integers() {
    only_problem(
        &check(&with_line(4, "2:0:1:1:1:100.5:50000:5:50001:64"), PCF, ROW),
        "line 4: field 6 ('100.5') is not an unsigned integer",
    );
    // A negative value is not an unsigned integer either.
    only_problem(
        &check(&with_line(4, "2:0:1:1:1:100:50000:-5:50001:64"), PCF, ROW),
        "field 8 ('-5')",
    );
}

#[test]
fn trailing_colon_and_empty_fields_are_refused() {
    only_problem(
        &check(&with_line(4, "2:0:1:1:1:100:50000:5:50001:64:"), PCF, ROW),
        "line 4: trailing ':'",
    );
    only_problem(
        &check(&with_line(4, "2:0:1:1:1:100:50000::50001:64"), PCF, ROW),
        "line 4: field 8 is empty",
    );
}

#[test]
fn unknown_and_global_comm_records_are_refused() {
    let prv = PRV.to_owned() + "5:0:1:1:1:900\n";
    only_problem(&check(&prv, PCF, ROW), "line 8: unknown record type");
    let prv = PRV.to_owned() + "4:0:1:1:1:900:1:2:3:4\n";
    only_problem(
        &check(&prv, PCF, ROW),
        "line 8: global communication record",
    );
}

#[test]
fn ids_are_one_based_and_declared() {
    only_problem(
        &check(&with_line(4, "2:0:2:1:1:100:50000:5:50001:64"), PCF, ROW),
        "task 2.1 is not declared",
    );
    only_problem(
        &check(&with_line(4, "2:0:1:3:1:100:50000:5:50001:64"), PCF, ROW),
        "task 1.3 is not declared",
    );
    only_problem(
        &check(&with_line(4, "2:0:1:1:2:100:50000:5:50001:64"), PCF, ROW),
        "thread 1.1.2 is not declared",
    );
    only_problem(
        &check(&with_line(4, "2:0:1:1:0:100:50000:5:50001:64"), PCF, ROW),
        "thread 1.1.0 is not declared",
    );
    only_problem(
        &check(&with_line(4, "2:0:0:1:1:100:50000:5:50001:64"), PCF, ROW),
        "task 0.1 is not declared",
    );
}

#[test]
fn cpu_must_be_zero_or_exist_on_the_tasks_node() {
    only_problem(
        &check(&with_line(4, "2:3:1:1:1:100:50000:5:50001:64"), PCF, ROW),
        "CPU 3 does not exist (the header declares 2",
    );
    let prv = "#Paraver (01/01/2024 at 00:00):10_ns:2(1,1):1:1(1:1),0\n1:1:1:1:1:0:10:1\n1:2:1:1:1:10:10:1\n";
    only_problem(
        &check(prv, PCF, "LEVEL THREAD SIZE 1\nt\n"),
        "CPU 2 is on node 2 but task 1.1 is on node 1",
    );
    let prv =
        "#Paraver (01/01/2024 at 00:00):10_ns:0:1:1(1:1),0\n1:0:1:1:1:0:10:1\n1:1:1:1:1:10:10:1\n";
    only_problem(
        &check(prv, PCF, "LEVEL THREAD SIZE 1\nt\n"),
        "CPU 1 does not exist (the header declares 0",
    );
}

// ---------------------------------------------------------------------------------------------
// States

#[test]
fn state_needs_eight_fields_and_begin_before_end() {
    let prv = PRV.to_owned() + "1:0:1:2:1:1000:1000\n";
    only_problem(
        &check(&prv, PCF, ROW),
        "line 8: a state record has 8 fields",
    );
    let prv = with_line(2, "1:0:1:1:1:500:400:1");
    let r = check(&prv, PCF, ROW);
    assert!(
        r.problems[0].contains("line 2: state begins at 500 after its end 400"),
        "{r}"
    );
}

#[test]
fn overlapping_states_are_caught() {
    let prv = with_line(7, "1:0:1:1:1:300:1000:5");
    only_problem(
        &check(&prv, PCF, ROW),
        "thread 1.1.1: 1 state(s) overlap the previous one, first at line 7 (begin 300)",
    );
    // Overlaps are wrong even when gaps are allowed.
    assert_eq!(run(&prv, PCF, ROW, false).problems.len(), 1);
}

#[test]
fn states_must_start_at_zero_and_reach_the_end() {
    let prv = with_line(3, "1:0:1:2:1:10:1000:0");
    only_problem(
        &check(&prv, PCF, ROW),
        "thread 1.2.1: 1 gap(s) between states, first at line 3 (no state from 0)",
    );
    let prv = with_line(3, "1:0:1:2:1:0:999:0");
    only_problem(
        &check(&prv, PCF, ROW),
        "thread 1.2.1: states end at 999, before the trace end 1000",
    );
    let prv = with_line(3, "2:0:1:2:1:0:50000:0");
    only_problem(&check(&prv, PCF, ROW), "thread 1.2.1: no state record");
}

#[test]
fn states_must_be_declared() {
    only_problem(
        &check(&with_line(3, "1:0:1:2:1:0:1000:13"), PCF, ROW),
        "state 13 is not declared in the .pcf STATES (1 record(s), first at line 3)",
    );
}

// ---------------------------------------------------------------------------------------------
// Events

#[test]
fn event_type_must_fit_in_31_bits() {
    only_problem(
        &check(
            &with_line(4, "2:0:1:1:1:100:2147483648:5:50001:64"),
            PCF,
            ROW,
        ),
        "event type 2147483648 exceeds 2^31-1",
    );
}

#[test]
fn event_pairs_must_be_complete() {
    only_problem(
        &check(&with_line(4, "2:0:1:1:1:100:50000:5:50001"), PCF, ROW),
        "an odd number after the time",
    );
    only_problem(
        &check(&with_line(4, "2:0:1:1:1:100:50000"), PCF, ROW),
        "found 7 field(s)",
    );
}

#[test]
fn event_values_must_stay_exact() {
    only_problem(
        &check(
            &with_line(4, "2:0:1:1:1:100:50000:5:50001:9007199254740993"),
            PCF,
            ROW,
        ),
        "exceeds 2^53",
    );
}

#[test]
fn event_types_and_labelled_values_must_be_declared() {
    let prv = with_line(4, "2:0:1:1:1:100:50000:5:50002:64");
    only_problem(
        &check(&prv, PCF, ROW),
        "event type 50002 is not declared in the .pcf (1 occurrence(s), first at line 4)",
    );
    let prv = with_line(4, "2:0:1:1:1:100:50000:6:50001:64");
    only_problem(&check(&prv, PCF, ROW), "event type 50000: 1 value occurrence(s) have no label in the .pcf VALUES, first at line 4 (value 6)");
    // Types without VALUES take any number.
    assert!(check(
        &with_line(4, "2:0:1:1:1:100:50000:5:50001:123456"),
        PCF,
        ROW
    )
    .is_ok());
}

// ---------------------------------------------------------------------------------------------
// Communications, order, end time

#[test]
fn comm_needs_fifteen_fields_and_valid_objects() {
    only_problem(
        &check(
            &with_line(5, "3:1:1:1:1:150:150:2:1:2:1:300:300:64"),
            PCF,
            ROW,
        ),
        "a communication record has 15 fields, found 14",
    );
    only_problem(
        &check(
            &with_line(5, "3:1:1:1:1:150:150:2:1:3:1:300:300:64:7"),
            PCF,
            ROW,
        ),
        "line 5: receiver: task 1.3 is not declared",
    );
    only_problem(
        &check(
            &with_line(5, "3:1:1:1:2:150:150:2:1:2:1:300:300:64:7"),
            PCF,
            ROW,
        ),
        "line 5: sender: thread 1.1.2 is not declared",
    );
}

#[test]
fn body_must_be_sorted_by_first_time() {
    let prv = with_line(5, "3:1:1:1:1:50:50:2:1:2:1:300:300:64:7");
    only_problem(&check(&prv, PCF, ROW), "1 record(s) start earlier than a record above them (body not sorted by time), first at line 5 (time 50)");
}

#[test]
fn no_record_may_pass_the_end_time() {
    let prv = with_line(5, "3:1:1:1:1:150:150:2:1:2:1:300:1200:64:7");
    only_problem(
        &check(&prv, PCF, ROW),
        "1 record(s) reach past the header's end time 1000, first at line 5 (time 1200)",
    );
    let prv = PRV.to_owned() + "2:0:1:2:1:1001:50001:1\n";
    only_problem(&check(&prv, PCF, ROW), "first at line 8 (time 1001)");
}

#[test]
fn a_body_without_valid_records_is_refused() {
    let r = run(
        "#Paraver (01/01/2024 at 00:00):1000_ns:1(2):1:2(1:1,1:1),0\n",
        PCF,
        ROW,
        false,
    );
    only_problem(&r, "the body has no valid record");
}

#[test]
fn problems_are_capped_but_counted() {
    let mut prv = PRV.to_owned();
    for _ in 0..200 {
        prv.push_str("2:0:9:1:1:900:50001:1\n");
    }
    let r = check(&prv, PCF, ROW);
    assert_eq!(r.problems.len(), 50);
    assert_eq!(r.problems_not_shown, 150);
    assert_eq!(r.problem_count(), 200);
    assert!(!r.is_ok());
    assert!(r.to_string().ends_with("... and 150 more"));
}

// ---------------------------------------------------------------------------------------------
// .pcf

#[test]
fn pcf_numbers_must_fit_paraver_int32() {
    let pcf = PCF.to_owned() + "\nEVENT_TYPE\n0    2147483648    Too big\n";
    only_problem(
        &check(PRV, &pcf, ROW),
        "event type 2147483648 exceeds 2^31-1 (Paraver silently drops the line)",
    );
    let pcf = PCF.replace("5      gemm", "5      gemm\n3000000000      huge");
    only_problem(
        &check(PRV, &pcf, ROW),
        "event value 3000000000 exceeds 2^31-1",
    );
}

#[test]
fn pcf_value_labels_must_be_unique_per_type() {
    let pcf = PCF.replace("5      gemm", "5      gemm\n7      gemm");
    only_problem(
        &check(PRV, &pcf, ROW),
        "label 'gemm' names both value 5 and value 7 of the same type",
    );
}

#[test]
fn pcf_type_line_after_values_is_diagnosed() {
    // The 50001 group written inside the 50000 block: Paraver reads it as a value of 50000.
    let pcf = PCF.replace("5      gemm\n\nEVENT_TYPE\n", "5      gemm\n");
    let r = check(PRV, &pcf, ROW);
    assert_eq!(r.problems.len(), 1, "{r}");
    assert!(r.problems[0].starts_with("event type 50001 is not declared in the .pcf (2 occurrence(s), first at line 4); it appears as value 1 of type 50000: a type line after VALUES needs its own EVENT_TYPE block"), "{r}");
}

#[test]
fn pcf_duplicate_types_and_labels_are_caught() {
    let pcf = PCF.to_owned() + "\nEVENT_TYPE\n0    50000    CUDA kernel again\n";
    only_problem(
        &check(PRV, &pcf, ROW),
        "pcf line 25: event type 50000 is declared again (first at line 16)",
    );
    let pcf = PCF.to_owned() + "\nEVENT_TYPE\n0    50002    Block size\n";
    only_problem(
        &check(PRV, &pcf, ROW),
        "event types [50001, 50002] share the label 'Block size'",
    );
}

#[test]
fn pcf_lines_paraver_drops_are_reported() {
    let pcf = PCF.replace("5      gemm", "5");
    let r = check(PRV, &pcf, ROW);
    assert!(
        r.problems[0].contains("value 5 has no label (Paraver drops the line)"),
        "{r}"
    );
    let pcf = PCF.replace("5    Synchronization", "five    Synchronization");
    let r = check(PRV, &pcf, ROW);
    assert!(
        r.problems[0].contains("state 'five' is not an unsigned integer"),
        "{r}"
    );
    assert!(r.problems[1].contains("state 5 is not declared"), "{r}");
    let pcf = "stray line\n".to_owned() + PCF;
    only_problem(
        &check(PRV, &pcf, ROW),
        "pcf line 1: 'stray line' is outside any section",
    );
    let pcf = PCF.replace("{0,0,255}", "{0,0,256}");
    only_problem(&check(PRV, &pcf, ROW), "colour '{0,0,256}'");
}

// ---------------------------------------------------------------------------------------------
// .row

#[test]
fn row_sizes_must_match_the_header() {
    let r = check(PRV, PCF, &ROW.replace("THREAD SIZE 2", "THREAD SIZE 3"));
    assert_eq!(
        r.problems,
        [
            "row line 12: level THREAD has size 3 but the header declares 2",
            "row line 12: level THREAD announces 3 labels but the file ends after 2"
        ]
    );
    let row = ROW.replace(
        "LEVEL THREAD SIZE 2\nTHREAD 1.1.1\nTHREAD 1.2.1\n",
        "LEVEL THREAD SIZE 1\nTHREAD 1.1.1\n",
    );
    only_problem(
        &check(PRV, PCF, &row),
        "level THREAD has size 1 but the header declares 2",
    );
    let row = ROW.replace(
        "LEVEL TASK SIZE 2\nrank 0\nrank 1\n",
        "LEVEL TASK SIZE 1\nrank 0\n",
    );
    only_problem(
        &check(PRV, PCF, &row),
        "level TASK has size 1 but the header declares 2",
    );
    let row = ROW.replace(
        "LEVEL NODE SIZE 1\nnode0\n",
        "LEVEL NODE SIZE 2\nnode0\nnode1\n",
    );
    only_problem(
        &check(PRV, PCF, &row),
        "level NODE has size 2 but the header declares 1",
    );
}

#[test]
fn row_labels_must_be_unique_and_levels_known() {
    only_problem(
        &check(PRV, PCF, &ROW.replace("THREAD 1.2.1", "THREAD 1.1.1")),
        "label 'THREAD 1.1.1' repeats in level THREAD",
    );
    let row = ROW.replace("LEVEL THREAD SIZE 2\nTHREAD 1.1.1\nTHREAD 1.2.1\n", "");
    only_problem(&check(PRV, PCF, &row), "no 'LEVEL THREAD SIZE n' block");
    let row = ROW.to_owned() + "\nLEVEL STREAM SIZE 0\n";
    only_problem(&check(PRV, PCF, &row), "unknown level 'STREAM'");
    let row = ROW.replace(
        "LEVEL THREAD SIZE 2\nTHREAD 1.1.1\nTHREAD 1.2.1\n",
        "LEVEL THREAD SIZE 2\nTHREAD 1.1.1\n\n",
    );
    only_problem(&check(PRV, PCF, &row), "empty label in level THREAD");
}

// ---------------------------------------------------------------------------------------------
// Files

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("prvsight-check-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn check_files_reads_prv_and_gzip_with_companions() {
    let d = scratch("files");
    std::fs::write(d.join("t.prv"), PRV).unwrap();
    std::fs::write(d.join("t.pcf"), PCF).unwrap();
    std::fs::write(d.join("t.row"), ROW).unwrap();
    let plain = check_files(&d.join("t.prv")).unwrap();
    assert!(plain.is_ok(), "{plain}");

    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(PRV.as_bytes()).unwrap();
    std::fs::write(d.join("z.prv.gz"), gz.finish().unwrap()).unwrap();
    std::fs::write(d.join("z.pcf"), PCF).unwrap();
    std::fs::write(d.join("z.row"), ROW).unwrap();
    let zipped = check_files(&d.join("z.prv.gz")).unwrap();
    assert!(zipped.is_ok(), "{zipped}");
    assert_eq!(zipped.stats, plain.stats);

    std::fs::remove_file(d.join("z.row")).unwrap();
    let r = check_files(&d.join("z.prv.gz")).unwrap();
    assert!(r.problems[0].ends_with("z.row is missing"), "{r}");

    assert!(check_files(&d.join("t.txt")).is_err());
    assert!(check_files(&d.join("absent.prv")).is_err());
    std::fs::remove_dir_all(&d).unwrap();
}
