//! The partitioned reader's surveys and reads against what SQL gives.

use rusqlite::types::ValueRef;
use rusqlite::Connection;

use super::reader::most_overlapping;
use super::survey::{combine, MemberSurvey};
use super::*;
use crate::engine::row::Fields;
use crate::engine::select::Expr;
use crate::error::Result;
use crate::sqlfile::Pager;

fn run(first_order: i64, last_order: i64) -> Run {
    Run {
        member: 0,
        partition: 0,
        lo: 0,
        hi: 0,
        first_order,
        first_aux: None,
        last_order,
        rows: 1,
        rowids: None,
    }
}

/// Calls of table `T (start, tid, corr)` by thread, in time order, the correlation id
/// their aux column under `rule`.
fn calls_spec(rule: AuxRule) -> Spec {
    use crate::engine::select::Val;
    Spec {
        what: "calls",
        members: vec![Member {
            fam: 0,
            select: Select::new("T")
                .output("rid", Val::Rowid)
                .output("start", Val::col("start"))
                .output("tid", Val::col("tid"))
                .output("corr", Val::col("corr")),
            present: Vec::new(),
        }],
        partition: vec![Expr::out("tid")],
        columns: Vec::new(),
        order: Expr::out("start"),
        aux: Some(Aux {
            column: Expr::out("corr"),
            rule,
        }),
    }
}

/// Rows of table `T (start, tid, corr, name)` by thread, in time order, read with their
/// correlation id and name (no aux column).
fn named_calls_spec() -> Spec {
    let mut spec = calls_spec(AuxRule::Note);
    spec.members[0].select = spec.members[0]
        .select
        .clone()
        .output("name", crate::engine::select::Val::col("name"));
    spec.columns = vec![Expr::out("corr"), Expr::out("name")];
    spec.aux = None;
    spec
}

/// Surveys rows `(thread, start, aux)` (in rowid order) of one member whose aux is the
/// correlation id, under `rule`: the survey's outcome and, if any, whether its aux is sound.
fn surveyed(rule: AuxRule, rows: &[(i64, i64, Option<i64>)]) -> Option<bool> {
    let spec = calls_spec(rule);
    let mut scan = MemberSurvey::new(&spec, 0);
    for (rid, &(tid, start, aux)) in rows.iter().enumerate() {
        let aux = aux.map_or(ValueRef::Null, ValueRef::Integer);
        let key = [
            ValueRef::Integer(tid),
            ValueRef::Null,
            ValueRef::Null,
            ValueRef::Null,
        ];
        if !scan.take(rid as i64 + 1, ValueRef::Integer(start), aux, &key) {
            break;
        }
    }
    combine(vec![scan.finish()?]).map(|s| s.aux_sound())
}

#[test]
fn an_aux_column_that_breaks_the_rule_declines_or_is_noted() {
    use AuxRule::{Decline, Note};
    // Two threads, each increasing in start and id: sound either way.
    let good = [
        (1, 10, Some(1)),
        (2, 11, Some(2)),
        (1, 12, Some(3)),
        (2, 13, Some(5)),
    ];
    assert_eq!(surveyed(Decline, &good), Some(true));
    assert_eq!(surveyed(Note, &good), Some(true));
    // An id that falls along a thread's run.
    let falls = [(1, 10, Some(3)), (2, 11, Some(2)), (1, 12, Some(1))];
    assert_eq!(surveyed(Decline, &falls), None);
    assert_eq!(surveyed(Note, &falls), Some(false));
    // Where the start falls the thread's next run begins: its ids start afresh.
    let new_run = [(1, 10, Some(3)), (1, 5, Some(1)), (1, 6, Some(2))];
    assert_eq!(surveyed(Note, &new_run), Some(true));
    // NULL ids: Decline wants an integer on every row. Under Note, NULLs after a run's
    // last id hide nothing; a NULL before an id would hide that id from the floor.
    let null_last = [
        (1, 10, Some(1)),
        (1, 11, None),
        (2, 12, Some(2)),
        (1, 13, None),
    ];
    assert_eq!(surveyed(Decline, &null_last), None);
    assert_eq!(surveyed(Note, &null_last), Some(true));
    let null_first = [(1, 10, None), (1, 11, Some(1))];
    assert_eq!(surveyed(Note, &null_first), Some(false));
    let null_between = [(1, 10, Some(1)), (1, 11, None), (1, 12, Some(2))];
    assert_eq!(surveyed(Note, &null_between), Some(false));
    // ... but a NULL in one run does not concern the thread's next run.
    let null_then_new_run = [(1, 10, Some(1)), (1, 11, None), (1, 2, Some(2))];
    assert_eq!(surveyed(Note, &null_then_new_run), Some(true));
}

#[test]
fn aux_heads_stay_small_when_no_floor_is_asked() {
    // One thread's 2 000 calls in two runs that overlap in time (the second block starts
    // over), read to the end without asking the floor (as for a process whose calls launch
    // nothing): the heads left behind as the runs move on must not pile up.
    let conn = Connection::open_in_memory().unwrap();
    conn.execute_batch(
        "CREATE TABLE T (start INTEGER, tid INTEGER, corr INTEGER);
         WITH RECURSIVE i(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM i WHERE n < 999)
         INSERT INTO T SELECT 1000 + 2 * n, 1, 1 + n FROM i;
         WITH RECURSIVE i(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM i WHERE n < 999)
         INSERT INTO T SELECT 1001 + 2 * n, 1, 2001 + n FROM i;",
    )
    .unwrap();
    let spec = calls_spec(AuxRule::Note);
    let surveyed = survey(&conn, &spec, false).unwrap().expect("runs");
    assert_eq!(surveyed.runs.len(), 2);
    let mut rows = PartitionedRows::new(&conn, &spec, surveyed, None);
    let (mut read, mut most) = (0, 0);
    while rows.next_row("test").unwrap().is_some() {
        read += 1;
        most = most.max(rows.aux_heads[0].len());
    }
    assert_eq!(read, 2000);
    assert!(most <= 2 * 2 + 1, "{most} heads kept for 2 runs");
}

/// A row handed out: (start, next start, rowid, thread, name).
type Read = (i64, Option<i64>, i64, i64, String);

/// Every row `rows` hands out.
fn read_all(rows: &mut PartitionedRows) -> Result<Vec<Read>> {
    let mut got = Vec::new();
    while let Some(next) = rows.next_row("test")? {
        let row = rows.row(next.row);
        let ValueRef::Text(name) = row.value(1).unwrap() else {
            panic!("a name")
        };
        let tid = rows.keys()[next.partition][0].unwrap();
        let name = String::from_utf8(name.to_vec()).unwrap();
        got.push((next.start, next.next_start, next.rid, tid, name));
    }
    Ok(got)
}

#[test]
fn sparse_runs_are_read_by_their_rowids() {
    // Thread 1 writes 3 000 rows; among them thread 2 has 40, one every 75 rows (sparse:
    // listed), and thread 3 100 rows in the first 200 (half the rows there: not sparse).
    let path = std::env::temp_dir().join(format!("prvsight-sparse-{}.sqlite", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let conn = Connection::open(&path).unwrap();
    conn.execute_batch("CREATE TABLE T (start INTEGER, tid INTEGER, corr INTEGER, name TEXT)")
        .unwrap();
    let tx = conn.unchecked_transaction().unwrap();
    for i in 0..3000i64 {
        let tid = if i % 75 == 74 {
            2
        } else if i < 200 && i % 2 == 1 {
            3
        } else {
            1
        };
        let name = format!("{tid}-{}", "y".repeat((i % 5) as usize));
        tx.execute(
            "INSERT INTO T VALUES (?1, ?2, ?3, ?4)",
            rusqlite::params![10 * i, tid, i, name],
        )
        .unwrap();
    }
    tx.commit().unwrap();
    let spec = named_calls_spec();
    let listed = |s: &Survey| -> Vec<(i64, Option<usize>)> {
        (s.runs.iter())
            .map(|r| {
                (
                    s.keys[r.partition][0].unwrap(),
                    r.rowids.as_ref().map(|l| l.len()),
                )
            })
            .collect()
    };
    let surveyed = survey(&conn, &spec, true).unwrap().expect("runs");
    assert_eq!(listed(&surveyed), [(1, None), (3, None), (2, Some(40))]);
    let pager = Pager::shared(&conn, true).expect("a file's pages");
    let mut direct = PartitionedRows::new(&conn, &spec, surveyed, Some(pager.clone()));
    let by_rowids = read_all(&mut direct).unwrap();
    let surveyed = survey(&conn, &spec, false).unwrap().expect("runs");
    let mut by_sql = PartitionedRows::new(&conn, &spec, surveyed, None);
    assert_eq!(by_rowids, read_all(&mut by_sql).unwrap());
    assert_eq!(by_rowids.len(), 3000);
    assert_eq!(by_rowids.iter().filter(|r| r.3 == 2).count(), 40);

    // A listed row gone, or now another thread's, after the survey: an error, not a row
    // less or a row more.
    for change in [
        "DELETE FROM T WHERE corr = 749",
        "UPDATE T SET tid = 1 WHERE corr = 1499",
    ] {
        let surveyed = survey(&conn, &spec, true).unwrap().expect("runs");
        conn.execute_batch(change).unwrap();
        // A pager of its own: the one above caches the pages it read before the change.
        let pager = Pager::shared(&conn, true).expect("a file's pages");
        let mut rows = PartitionedRows::new(&conn, &spec, surveyed, Some(pager));
        let err = match read_all(&mut rows) {
            Ok(rows) => panic!("{change}: read {} rows", rows.len()),
            Err(e) => e.to_string(),
        };
        assert!(
            err.contains("reads differently by rowid range"),
            "{change}: {err}"
        );
    }
    drop((direct, by_sql, pager));
    drop(conn);
    let _ = std::fs::remove_file(&path);
}

#[test]
fn every_row_handed_out_reads_its_own_values() {
    // Three threads whose runs end at, just past and well past the ends of fetches (16 rows,
    // then 32, 64, …): a run of 48 rows ends exactly at its second fetch's end (its last row
    // is read from the batch before an empty fetch), one of 17 just past its first. Each row
    // handed out must read as its own, with text of varying length.
    let conn = Connection::open_in_memory().unwrap();
    conn.execute_batch("CREATE TABLE T (start INTEGER, tid INTEGER, corr INTEGER, name TEXT)")
        .unwrap();
    let runs: [(i64, &[i64]); 3] = [(1, &[48, 1, 16]), (2, &[17, 100]), (3, &[5, 48, 48])];
    let mut want = Vec::new();
    for (tid, lengths) in runs {
        for (k, &n) in lengths.iter().enumerate() {
            for i in 0..n {
                // Each run starts earlier than the one before: a new run.
                let start = 1000 * (3 - k as i64) + 3 * i + tid;
                let name = "x".repeat((start % 7) as usize) + &start.to_string();
                conn.execute(
                    "INSERT INTO T VALUES (?1, ?2, ?3, ?4)",
                    rusqlite::params![start, tid, 10 * start + tid, name],
                )
                .unwrap();
                want.push((start, conn.last_insert_rowid(), name));
            }
        }
    }
    want.sort();
    let spec = named_calls_spec();
    let surveyed = survey(&conn, &spec, false).unwrap().expect("runs");
    assert_eq!(surveyed.runs.len(), 8);
    let mut rows = PartitionedRows::new(&conn, &spec, surveyed, None);
    let mut got = Vec::new();
    while let Some(next) = rows.next_row("test").unwrap() {
        let row = rows.row(next.row);
        let tid = rows.keys()[next.partition][0].unwrap();
        assert_eq!(
            row.value(0).unwrap(),
            ValueRef::Integer(10 * next.start + tid)
        );
        let ValueRef::Text(name) = row.value(1).unwrap() else {
            panic!("a name")
        };
        got.push((
            next.start,
            next.rid,
            String::from_utf8(name.to_vec()).unwrap(),
        ));
    }
    assert_eq!(got, want);
}

#[test]
fn overlapping_runs_are_counted_where_most_are_open_at_once() {
    assert_eq!(most_overlapping(&[]), 0);
    // Runs one after the other (a long trace written in blocks): one open at a time.
    let blocks: Vec<Run> = (0..100).map(|i| run(i * 10, i * 10 + 9)).collect();
    assert_eq!(most_overlapping(&blocks), 1);
    // Touching runs overlap at the shared value; nested and crossing ones too.
    assert_eq!(most_overlapping(&[run(0, 5), run(5, 9)]), 2);
    assert_eq!(
        most_overlapping(&[
            run(0, 100),
            run(10, 20),
            run(15, 30),
            run(25, 40),
            run(50, 60)
        ]),
        3
    );
}
