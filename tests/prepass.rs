//! The scans before the stream (engine/prepass.rs): one pass per table for every scan of it, and,
//! natively, the passes shared with a second thread on a connection of its own. Every scan must
//! get the rows, in the order, that one thread gives — and that SQLite gives.

mod common;

use std::sync::Mutex;
use std::thread::ThreadId;

use common::data;
use prvsight::engine::prepass::{Prepass, Sql};
use prvsight::engine::select::{Cond, Select, Val};
use prvsight::nsys::Export;
use rusqlite::types::{Value, ValueRef};

/// What one scan saw: its rows' values, and the threads it ran on.
#[derive(Default)]
struct Seen {
    rows: Vec<Vec<Value>>,
    threads: Vec<ThreadId>,
}

/// The scans of the test, by table: (table, its outputs). Five scans of SCHED_EVENTS share a
/// pass: two without conditions, two under the same one (they share its test per row) and one
/// under another, each of which leaves rows out.
fn queries() -> Vec<Select> {
    let q = |t: &str, cols: &[&str]| {
        cols.iter()
            .fold(Select::new(t).output("rid", Val::Rowid), |s, c| {
                s.output(c, Val::col(c))
            })
    };
    vec![
        q("SCHED_EVENTS", &["start", "cpu", "globalTid"]),
        q("OSRT_API", &["start", "end", "nameId"]).not_null("end"),
        q("StringIds", &["id", "value"]),
        q("SCHED_EVENTS", &["isSchedIn"]),
        q("ThreadNames", &["nameId", "globalTid"]),
        q("SCHED_EVENTS", &["start"]).when(Cond::In("isSchedIn".into(), vec![1])),
        q("SCHED_EVENTS", &["cpu"]).when(Cond::AtLeast("cpu".into(), 1)),
        q("SCHED_EVENTS", &["globalTid"]).when(Cond::In("isSchedIn".into(), vec![1])),
    ]
}

fn owned(v: ValueRef) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Integer(i),
        ValueRef::Real(x) => Value::Real(x),
        ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Value::Blob(b.to_vec()),
    }
}

/// Runs the test's scans on `ex`'s file: by the direct reader or SQLite, on one or two threads.
fn scan(ex: &Export, direct: bool, two_threads: bool) -> Vec<Seen> {
    let file = ex.path.as_deref().expect("opened from a file");
    scan_with(ex, direct, two_threads.then_some(file))
}

/// [`scan`], the second thread (if any) opening `second`.
fn scan_with(ex: &Export, direct: bool, second: Option<&std::path::Path>) -> Vec<Seen> {
    let queries = queries();
    let seen: Vec<Mutex<Seen>> = queries.iter().map(|_| Mutex::default()).collect();
    let mut set = Prepass::new(&ex.conn, direct);
    if let Some(file) = second {
        set = set.second_thread(file);
    }
    for (q, seen) in queries.iter().zip(&seen) {
        set.add(
            Some(q),
            Sql::Query,
            Box::new(move |row| {
                let row = row.expect("a sound file");
                let values = (0..q.outputs.len())
                    .map(|i| Ok(owned(row.value(i)?)))
                    .collect::<rusqlite::Result<Vec<Value>>>()?;
                let mut seen = seen.lock().unwrap();
                seen.rows.push(values);
                let here = std::thread::current().id();
                if !seen.threads.contains(&here) {
                    seen.threads.push(here);
                }
                Ok(true)
            }),
        );
    }
    for ended in set.run() {
        ended.unwrap();
    }
    seen.into_iter().map(|s| s.into_inner().unwrap()).collect()
}

#[test]
fn passes_shared_with_a_second_thread_give_every_scan_what_one_thread_and_sqlite_give() {
    let ex = Export::open_path(&data("testcuda_report1.sqlite")).unwrap();
    let sqlite = scan(&ex, false, false);
    let one = scan(&ex, true, false);
    let two = scan(&ex, true, true);
    let this_thread = std::thread::current().id();
    for (i, ((s, o), t)) in sqlite.iter().zip(&one).zip(&two).enumerate() {
        assert!(!s.rows.is_empty(), "scan {i} has rows");
        assert_eq!(
            o.rows, s.rows,
            "scan {i}: direct reader, one thread, against SQLite"
        );
        assert_eq!(t.rows, s.rows, "scan {i}: two threads against SQLite");
        assert_eq!(o.threads, [this_thread], "scan {i}: one thread");
        assert_eq!(t.threads.len(), 1, "scan {i}: one pass, on one thread");
    }
    // The biggest table (SCHED_EVENTS, 15 leaf pages) stays on the calling thread with all
    // its scans; the next (StringIds, 13) goes to the second thread; the smaller ones
    // (OSRT_API, ThreadNames) to whichever thread is free first (their rows checked above).
    assert_eq!(two[0].rows.len(), 2424);
    assert_eq!(two[0].threads, [this_thread]);
    assert_eq!(two[3].threads, [this_thread]);
    assert_ne!(
        two[2].threads,
        [this_thread],
        "StringIds on the second thread"
    );
    // Conditions: each scan its own rows, whether it shares its test with another or not.
    assert_eq!(two[5].rows.len(), 1212, "isSchedIn IN (1)");
    assert_eq!(two[6].rows.len(), 2412, "cpu >= 1");
    assert_eq!(
        two[7].rows.len(),
        1212,
        "isSchedIn IN (1), the same test as scan 5"
    );
}

#[test]
fn scans_through_sqlite_stay_on_the_calling_thread() {
    // Without the direct reader there are no table passes to share: no second thread.
    let ex = Export::open_path(&data("testcuda_report1.sqlite")).unwrap();
    let this_thread = std::thread::current().id();
    for s in scan(&ex, false, true) {
        assert_eq!(s.threads, [this_thread]);
    }
}

#[test]
fn a_second_thread_that_cannot_open_the_file_leaves_every_pass_here() {
    // The second thread opens its connection itself while this one starts its pass; where the
    // file does not open, the pass given to it comes back: every scan is made here, whole.
    let ex = Export::open_path(&data("testcuda_report1.sqlite")).unwrap();
    let one = scan(&ex, true, false);
    let missing = std::path::Path::new("/nonexistent/prvsight/second.sqlite");
    let two = scan_with(&ex, true, Some(missing));
    let this_thread = std::thread::current().id();
    for (i, (o, t)) in one.iter().zip(&two).enumerate() {
        assert!(!o.rows.is_empty(), "scan {i} has rows");
        assert_eq!(t.rows, o.rows, "scan {i}");
        assert_eq!(t.threads, [this_thread], "scan {i}");
    }
}
