//! Cutting a trace (NVTX range, time window) and leaving short regions out: every family is cut the
//! same way, the result is a valid trace, and what is kept matches the export.

mod common;

use std::path::PathBuf;

use common::{convert, count_prv, data, shared_traces, sql_count};
use prvsight::options::{parse_min_durations, Chop};
use prvsight::paraver::check::{check_readers, CheckOptions};
use prvsight::{Error, Options};

fn valid(out: &common::Converted) {
    let report = check_readers(
        out.prv.as_bytes(),
        &out.pcf,
        &out.row,
        &CheckOptions::default(),
    );
    assert!(report.is_ok(), "{report}");
}

fn header_end(prv: &str) -> u64 {
    let h = prv.lines().next().unwrap();
    h.split("):")
        .nth(1)
        .unwrap()
        .split("_ns")
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn nvtx_range_instance_chop_keeps_exactly_that_span_on_every_rank() {
    let Some(dir) = shared_traces() else { return };
    let ranks: Vec<PathBuf> = (0..4)
        .map(|r| dir.join(format!("generated/mpi4/rank{r}.sqlite")))
        .collect();
    let opts = Options {
        chop: Some(Chop::parse_nvtx("iteration:3").unwrap()),
        ..Options::default()
    };
    let out = convert(&ranks, &opts).unwrap();
    valid(&out);
    // Independently: the 3rd `iteration` of each rank, on the wall clock (utcEpochNs + t).
    let mut lo = i64::MAX;
    let mut hi = i64::MIN;
    for p in &ranks {
        let c = rusqlite::Connection::open(p).unwrap();
        let utc: i64 = c
            .query_row(
                "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME",
                [],
                |r| r.get(0),
            )
            .unwrap();
        let (a, b): (i64, i64) = c
            .query_row(
                "SELECT e.start, e.end FROM NVTX_EVENTS e LEFT JOIN StringIds s ON s.id = e.textId \
                 WHERE e.eventType = 59 AND COALESCE(e.text, s.value) = 'iteration' ORDER BY e.start LIMIT 1 OFFSET 2",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        lo = lo.min(utc + a);
        hi = hi.max(utc + b);
    }
    assert_eq!(header_end(&out.prv), (hi - lo) as u64);
    let c = count_prv(&out.prv);
    // Regions overlapping the cut (re-opened at 0 when they started earlier), counted with SQL.
    let overlapping = |sql: &str| -> u64 {
        ranks
            .iter()
            .map(|p| {
                let c = rusqlite::Connection::open(p).unwrap();
                let utc: i64 = c
                    .query_row(
                        "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME",
                        [],
                        |r| r.get(0),
                    )
                    .unwrap();
                c.query_row(sql, [utc, lo, hi], |r| r.get::<_, i64>(0))
                    .unwrap() as u64
            })
            .sum()
    };
    let iterations = overlapping(
        "SELECT count(*) FROM NVTX_EVENTS e LEFT JOIN StringIds s ON s.id = e.textId WHERE e.eventType = 59 \
         AND COALESCE(e.text, s.value) = 'iteration' AND ?1 + e.start <= ?3 AND ?1 + e.end >= ?2",
    );
    let allreduces = overlapping(
        "SELECT count(*) FROM MPI_COLLECTIVES_EVENTS e JOIN StringIds s ON s.id = e.textId \
         WHERE s.value = 'MPI_Allreduce' AND ?1 + e.start <= ?3 AND ?1 + e.end >= ?2",
    );
    assert!(iterations >= 4, "every rank's 3rd iteration at least");
    let iteration_value = out
        .pcf
        .lines()
        .find(|l| l.ends_with(" iteration"))
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .parse::<u64>()
        .unwrap();
    assert_eq!(
        c.values.get(&(9601, iteration_value)).copied(),
        Some(iterations)
    );
    assert_eq!(c.values.get(&(50_000_002, 10)).copied(), Some(allreduces));
}

#[test]
fn window_keeps_overlapping_kernels_and_only_inner_communications() {
    let path = data("testcuda_report1.sqlite");
    let full = convert(std::slice::from_ref(&path), &Options::default()).unwrap();
    // Cut from 10 µs after the first kernel starts (it is re-opened at 0) for 25 ms.
    let first_kernel: u64 = full
        .prv
        .lines()
        .find(|l| l.contains(":63000006:") && !l.contains(":63000006:0"))
        .unwrap()
        .split(':')
        .nth(5)
        .unwrap()
        .parse()
        .unwrap();
    let (lo, hi) = (first_kernel + 10_000, first_kernel + 10_000 + 25_000_000);
    let opts = Options {
        chop: Some(Chop::Window { start: lo, end: hi }),
        ..Options::default()
    };
    let out = convert(std::slice::from_ref(&path), &opts).unwrap();
    valid(&out);
    assert_eq!(header_end(&out.prv), 25_000_000);
    // Kernels overlapping the window, counted from the uncut trace's own begin/end lines.
    let mut open = std::collections::BTreeMap::new();
    let mut overlapping = 0;
    for line in full
        .prv
        .lines()
        .skip(1)
        .filter(|l| l.starts_with("2:") && l.contains(":63000006:"))
    {
        let f: Vec<u64> = line.split(':').map(|x| x.parse().unwrap()).collect();
        let (thread, t, v) = (
            f[4],
            f[5],
            f[f.iter().position(|x| *x == 63_000_006).unwrap() + 1],
        );
        if v != 0 {
            open.insert(thread, t);
        } else if let Some(s) = open.remove(&thread) {
            if s <= hi && t >= lo {
                overlapping += 1;
            }
        }
    }
    let c = count_prv(&out.prv);
    assert!(overlapping > 0);
    assert_eq!(c.begins.get(&63_000_006).copied().unwrap_or(0), overlapping);
    for line in out.prv.lines().filter(|l| l.starts_with("3:")) {
        let f: Vec<u64> = line.split(':').map(|x| x.parse().unwrap()).collect();
        assert!(f[12] <= 25_000_000, "{line}");
    }
}

#[test]
fn min_duration_drops_short_regions_but_keeps_states() {
    let path = data("testcuda_report1.sqlite");
    let full = convert(std::slice::from_ref(&path), &Options::default()).unwrap();
    let opts = Options {
        min_duration: parse_min_durations("cuda-api=1ms,osrt=50us").unwrap(),
        ..Options::default()
    };
    let out = convert(std::slice::from_ref(&path), &opts).unwrap();
    valid(&out);
    let c = count_prv(&out.prv);
    let long_api = sql_count(
        &path,
        "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE end - start >= 1000000",
    );
    let long_os = sql_count(
        &path,
        "SELECT count(*) FROM OSRT_API WHERE end - start >= 50000 AND eventClass NOT IN (31, 32)",
    );
    assert_eq!(c.begins.get(&63_000_000).copied().unwrap_or(0), long_api);
    assert_eq!(c.begins.get(&64_000_000).copied().unwrap_or(0), long_os);
    // Kernels untouched, and the state timeline is the full one.
    assert_eq!(c.begins.get(&63_000_006).copied(), Some(4));
    assert_eq!(c.states, count_prv(&full.prv).states);
}

#[test]
fn chop_to_a_missing_range_is_a_clear_error() {
    let opts = Options {
        chop: Some(Chop::parse_nvtx("no_such_range").unwrap()),
        ..Options::default()
    };
    let e = convert(&[data("testcuda_report1.sqlite")], &opts)
        .err()
        .unwrap();
    assert!(
        matches!(e, Error::Usage(_)) && e.to_string().contains("no_such_range"),
        "{e}"
    );
    assert!(Chop::parse_window("2s..1s").is_err());
    assert!(Chop::parse_nvtx("step:0").is_err());
    assert!(parse_min_durations("kernel=5 lightyears").is_err());
}

#[test]
fn a_window_leaves_out_messages_whose_receive_was_posted_before_it() {
    let Some(dir) = common::shared_traces() else {
        return;
    };
    let ranks: Vec<PathBuf> = (0..4)
        .map(|i| dir.join(format!("generated/mpi4/rank{i}.sqlite")))
        .collect();
    // A window that starts between an MPI_Irecv's posting and its message's send.
    let opts = Options {
        chop: Some(Chop::Window {
            start: 397_200_000,
            end: 600_000_000,
        }),
        ..Options::default()
    };
    let out = convert(&ranks, &opts).unwrap();
    valid(&out);
    let end = header_end(&out.prv);
    for line in out.prv.lines().filter(|l| l.starts_with("3:")) {
        let f: Vec<u64> = line.split(':').map(|x| x.parse().unwrap()).collect();
        for i in [5, 6, 11, 12] {
            assert!(f[i] <= end, "{line}");
        }
    }
}
