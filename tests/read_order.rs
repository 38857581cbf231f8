//! The sort-free readers (engine/partitioned.rs, the link merge join in nsys/links.rs) must give
//! exactly what the SQL reference path (`ORDER BY`, `LEAD`, the correlation-id join) gives: the
//! same bytes, on every real export and on exports edited to break the orders they rely on —
//! whether they read table pages themselves (src/sqlfile, engine/page_reader.rs) or through SQLite.

mod common;

use std::path::PathBuf;

use common::{assert_same_output, convert, data, shared_inputs, sql_count, Converted};
use prvsight::options::{ReadOrder, ReadPages};
use prvsight::Options;

/// The default conversion and the SQL path's; the sort-free readers reading every row through
/// SQLite must give the default's bytes too.
fn both(paths: &[PathBuf]) -> (Converted, Converted) {
    let fast = convert(paths, &Options::default()).unwrap();
    let through_sqlite = convert(
        paths,
        &Options {
            read_pages: ReadPages::Sqlite,
            ..Options::default()
        },
    )
    .unwrap();
    assert_same_output(
        &fast,
        &through_sqlite,
        "sort-free readers: pages read directly against rows read through SQLite",
    );
    assert_eq!(
        fast.summary.sorted_by_sql,
        through_sqlite.summary.sorted_by_sql
    );
    let sql = convert(
        paths,
        &Options {
            read_order: ReadOrder::Sql,
            ..Options::default()
        },
    )
    .unwrap();
    (fast, sql)
}

fn assert_same(fast: &Converted, sql: &Converted, what: &str) {
    assert_same_output(
        fast,
        sql,
        &format!("{what} (sort-free readers against SQL)"),
    );
    assert!(
        sql.summary.sorted_by_sql.is_empty(),
        "the SQL path reports no fallback"
    );
}

/// The host calls, and nothing else, were left to SQL's sort (the sort-free reader declined).
fn assert_only_host_calls_sorted_by_sql(fast: &Converted) {
    let sorted = &fast.summary.sorted_by_sql;
    assert_eq!(sorted.len(), 1, "{sorted:?}");
    assert!(sorted[0].contains("host calls"), "{sorted:?}");
}

/// A copy of the bundled sample, edited by `sql`.
fn edited(name: &str, sql: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("read-order-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.sqlite"));
    std::fs::copy(data("testcuda_report1.sqlite"), &path).unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(sql).unwrap();
    path
}

/// Rewrites the rows of `table` that match `filter` in the rowid order `order`.
fn rewritten(table: &str, filter: &str, order: &str) -> String {
    format!(
        "CREATE TABLE tmp AS SELECT * FROM {table} WHERE {filter};
         DELETE FROM {table} WHERE {filter};
         INSERT INTO {table} SELECT * FROM tmp ORDER BY {order};
         DROP TABLE tmp;"
    )
}

/// Rewrites `table` with its rows in a scrambled (but fixed) rowid order: 101 sorted runs.
fn scramble(table: &str, filter: &str) -> String {
    rewritten(table, filter, "(rowid * 37) % 101, rowid")
}

const LINKS: &str = "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN \
     (SELECT correlationId c FROM CUPTI_ACTIVITY_KIND_KERNEL UNION ALL SELECT correlationId FROM CUPTI_ACTIVITY_KIND_MEMCPY) g \
     ON g.c = r.correlationId";

fn links(c: &Converted) -> u64 {
    c.summary.counts.get("link-launch").copied().unwrap_or(0)
        + c.summary.counts.get("link-memory").copied().unwrap_or(0)
}

#[test]
fn bundled_sample_reads_without_sql_sorting_and_gives_the_same_bytes() {
    let path = data("testcuda_report1.sqlite");
    let (fast, sql) = both(std::slice::from_ref(&path));
    assert_same(&fast, &sql, "testcuda_report1");
    assert_eq!(
        fast.summary.sorted_by_sql,
        Vec::<String>::new(),
        "every family is read as sorted runs"
    );
    assert_eq!(links(&fast), sql_count(&path, LINKS));
    assert_eq!(links(&fast), 16);
    assert_eq!(
        fast.summary.links_from_host_calls,
        vec![path.display().to_string()],
        "the CUDA calls are read once, for the calls and their links"
    );
}

#[test]
fn every_shared_export_gives_the_same_bytes_both_ways() {
    let Some(inputs) = shared_inputs() else {
        return;
    };
    assert!(inputs.len() >= 11, "the shared exports are all found");
    for paths in &inputs {
        let what = paths[0].display().to_string();
        let (fast, sql) = both(paths);
        assert_same(&fast, &sql, &what);
        // The real exports are all in per-resource runs: nothing needs SQL sorting.
        assert_eq!(fast.summary.sorted_by_sql, Vec::<String>::new(), "{what}");
        // Nor a second read of the CUDA calls for their links, wherever there are links.
        for path in paths {
            let has_links = sql_count(
                path,
                "SELECT count(*) FROM sqlite_master WHERE name = 'CUPTI_ACTIVITY_KIND_RUNTIME'",
            ) == 1
                && sql_count(
                    path,
                    "SELECT count(*) FROM sqlite_master WHERE name IN \
                     ('CUPTI_ACTIVITY_KIND_KERNEL', 'CUPTI_ACTIVITY_KIND_MEMCPY', 'CUPTI_ACTIVITY_KIND_MEMSET')",
                ) > 0;
            let label = path.display().to_string();
            assert_eq!(
                fast.summary.links_from_host_calls.contains(&label),
                has_links,
                "{label}: links taken from the host calls' reader"
            );
        }
    }
}

/// The sample edited by `edit` converts to the same bytes both ways, with every family read as
/// runs (none left to SQL sorting).
fn read_as_runs(name: &str, edit: &str, what: &str) -> Converted {
    path_read_as_runs(&edited(name, edit), what)
}

/// [`read_as_runs`] of an export already edited.
fn path_read_as_runs(path: &std::path::Path, what: &str) -> Converted {
    let (fast, sql) = both(&[path.to_path_buf()]);
    assert_same(&fast, &sql, what);
    assert_eq!(
        fast.summary.sorted_by_sql,
        Vec::<String>::new(),
        "{what}: still read as runs"
    );
    fast
}

#[test]
fn many_short_runs_are_merged_in_time_order() {
    // 44 API calls in a scrambled rowid order: dozens of one- or two-row runs on one thread.
    let fast = read_as_runs(
        "scrambled-api",
        &scramble("CUPTI_ACTIVITY_KIND_RUNTIME", "1"),
        "scrambled API calls",
    );
    assert_eq!(links(&fast), 16);
}

#[test]
fn small_pages_deep_b_trees_and_overflowing_rows_read_the_same() {
    // 512-byte pages: B-trees several levels deep; half the kernels with 3 000 bytes in a
    // column before the launch parameters read, so their records continue on chains of overflow
    // pages — reached by the direct reader's seeks and scans.
    read_as_runs(
        "small-pages",
        "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET cacheConfig = printf('%.3000c', 'k') WHERE rowid % 2 = 0;
         PRAGMA page_size = 512; VACUUM;",
        "512-byte pages and overflowing kernel rows",
    );
}

/// Rewrites `table` with its rows in reverse rowid order: every row starts a run of its own.
fn reverse(table: &str, filter: &str) -> String {
    rewritten(table, filter, "rowid DESC")
}

#[test]
fn a_table_with_too_many_runs_falls_back_to_sql_sorting() {
    // 880 OS runtime calls of the main thread backwards: 880 runs of one row, cheaper to sort.
    let path = edited(
        "reversed-osrt",
        &reverse("OSRT_API", "globalTid = 281761330250412"),
    );
    let (fast, sql) = both(std::slice::from_ref(&path));
    assert_same(&fast, &sql, "scrambled OS runtime calls");
    assert_only_host_calls_sorted_by_sql(&fast);
}

#[test]
fn a_resource_with_hundreds_of_runs_is_read_as_runs() {
    // The same 880 calls in 101 sorted runs (~9 rows each), as long traces written in blocks
    // have: more runs than a resource had to stay under before, read as runs.
    let fast = read_as_runs(
        "scrambled-osrt",
        &scramble("OSRT_API", "globalTid = 281761330250412"),
        "scrambled OS runtime calls",
    );
    // The sample's OS runtime calls, all converted (its other two rows are the tracer's
    // start/stop markers, eventClass 31/32).
    assert_eq!(fast.summary.counts.get("osrt"), Some(&904));
}

#[test]
fn calls_out_of_correlation_order_across_threads_still_find_their_operations() {
    // Two calls of one process, on two threads, whose correlation ids run against time: the
    // memcpy call at 1453590649 (thread A) takes id 137, the launch at 1453605243 (moved to a
    // new thread B) takes id 136 — so the join meets the kernel (136) before its call. Plus two
    // operations without a call (ids 5 and 99999), which the join drops.
    let edit = "
        UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET correlationId = -137 WHERE correlationId = 136;
        UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET correlationId = 136, globalTid = 281761330250499 WHERE correlationId = 137;
        UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET correlationId = 137 WHERE correlationId = -137;
        UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET correlationId = 137 WHERE correlationId = 136;
        UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET correlationId = 136 WHERE correlationId = 137;
        INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY SELECT * FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE rowid = 1;
        UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET correlationId = 5 WHERE rowid = (SELECT max(rowid) FROM CUPTI_ACTIVITY_KIND_MEMCPY);
        INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid = 4;
        UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET correlationId = 99999 WHERE rowid = (SELECT max(rowid) FROM CUPTI_ACTIVITY_KIND_KERNEL);
    ";
    let path = edited("crossed-correlation", edit);
    let (fast, sql) = both(std::slice::from_ref(&path));
    assert_same(&fast, &sql, "crossed correlation ids");
    assert_eq!(
        fast.summary.sorted_by_sql,
        Vec::<String>::new(),
        "the join runs without SQL sorting"
    );
    assert_eq!(
        fast.summary.links_from_host_calls.len(),
        1,
        "on the host calls' reader: each thread's ids still increase"
    );
    assert_eq!(links(&fast), sql_count(&path, LINKS));
    assert_eq!(
        links(&fast),
        16,
        "every call finds its operation; the two orphans find none"
    );
    // The launch on thread B points at the kernel that now carries its id.
    assert_eq!(
        sql_count(
            &path,
            "SELECT count(DISTINCT globalTid) FROM CUPTI_ACTIVITY_KIND_RUNTIME"
        ),
        2
    );
}

#[test]
fn correlation_ids_that_fall_along_a_thread_make_the_join_use_sql() {
    // A thread whose calls do not take increasing ids: the merge join's precondition fails.
    let edit =
        "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET correlationId = 1000 WHERE correlationId = 135;";
    let path = edited("falling-correlation", edit);
    let (fast, sql) = both(std::slice::from_ref(&path));
    assert_same(&fast, &sql, "falling correlation ids");
    assert_eq!(fast.summary.sorted_by_sql.len(), 1);
    assert!(
        fast.summary.sorted_by_sql[0].contains("API-to-GPU"),
        "{:?}",
        fast.summary.sorted_by_sql
    );
    assert_eq!(
        fast.summary.links_from_host_calls,
        Vec::<String>::new(),
        "the host calls are still read as runs, but their ids cannot feed the join"
    );
    assert_eq!(links(&fast), sql_count(&path, LINKS));
}

#[test]
fn a_call_without_correlation_id_before_others_makes_the_join_read_the_calls_itself() {
    // Rowid 19 (id 135) is in the middle of the main thread's calls: once it has no id, the
    // host calls' reader cannot say which ids its thread still holds while that row is next
    // (it would leave the thread out of the floor, and drop operations still to be called). The
    // join then reads the calls itself, without that row (the SQL join drops it too).
    let edit = "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET correlationId = NULL WHERE rowid = 19;";
    let path = edited("null-correlation-inside", edit);
    let (fast, sql) = both(std::slice::from_ref(&path));
    assert_same(&fast, &sql, "a call without id among others");
    assert_eq!(fast.summary.sorted_by_sql, Vec::<String>::new());
    assert_eq!(fast.summary.links_from_host_calls, Vec::<String>::new());
    assert_eq!(links(&fast), sql_count(&path, LINKS));
    assert_eq!(
        links(&fast),
        15,
        "the operation of id 135 has no call any more"
    );
}

#[test]
fn calls_without_correlation_id_after_the_last_one_still_feed_the_join() {
    // The thread's last calls without an id: nothing after them, so the floor stays right.
    let edit = "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET correlationId = NULL WHERE rowid >= 43;";
    let path = edited("null-correlation-last", edit);
    let (fast, sql) = both(std::slice::from_ref(&path));
    assert_same(&fast, &sql, "calls without id at the end");
    assert_eq!(fast.summary.links_from_host_calls.len(), 1);
    assert_eq!(links(&fast), sql_count(&path, LINKS));
}

#[test]
fn a_damaged_table_whose_rowids_come_out_of_order_is_left_to_sql() {
    // Found by the fuzz target: on this file a scan gives rowids out of order, so rowid ranges
    // would read rows twice. The survey notices; the trace is the SQL path's and it is valid.
    let path = data("fuzz/rowids-out-of-order.sqlite");
    let (fast, sql) = both(std::slice::from_ref(&path));
    assert_same(&fast, &sql, "damaged rowid order");
    assert!(
        !fast.summary.sorted_by_sql.is_empty(),
        "the damaged table is sorted by SQL"
    );
    let opts = prvsight::paraver::check::CheckOptions::default();
    let report =
        prvsight::paraver::check::check_readers(fast.prv.as_bytes(), &fast.pcf, &fast.row, &opts);
    assert!(report.is_ok(), "{}", report.problem_count());
}

/// The bundled sample (which has no NVTX) with an NVTX_EVENTS table of nsys's columns, holding
/// `rows` as `(start offset, end offset or NULL, eventType, text)` in the order given (nsys
/// writes push/pop ranges when they end), on the main thread, from the sample's first OS call.
fn with_nvtx(name: &str, rows: &[(i64, Option<&str>, i64, &str)]) -> PathBuf {
    let mut sql = String::from(
        "CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
           rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,
           endGlobalTid INTEGER, textId INTEGER, domainId INTEGER, jsonTextId INTEGER, jsonText TEXT);
         CREATE TEMP TABLE base AS SELECT min(start) AS t FROM OSRT_API;",
    );
    for (start, end, ty, text) in rows {
        let end = end.map_or("NULL".to_owned(), |e| format!("(SELECT t FROM base) + {e}"));
        sql.push_str(&format!(
            "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId)
             VALUES ((SELECT t FROM base) + {start}, {end}, {ty}, '{text}', 281761330250412, 0);"
        ));
    }
    edited(name, &sql)
}

/// Nested ranges in end order, ties on start (the longer range first, then by rowid), ranges
/// never ended or ending before they start (first among equal starts), a mark, a start/end range.
const NVTX_ROWS: &[(i64, Option<&str>, i64, &str)] = &[
    (100, Some("200"), 59, "inner a"),
    (300, Some("400"), 59, "inner b"),
    (100, Some("500"), 59, "outer"),
    (600, Some("700"), 59, "twin 1"),
    (600, Some("700"), 59, "twin 2"),
    (600, Some("550"), 59, "ends before it starts"),
    (650, None, 34, "mark"),
    (120, Some("900"), 60, "start/end"),
    (600, None, 59, "never ended"),
];

#[test]
fn nvtx_ranges_sorted_by_narrow_keys_come_in_the_sql_order() {
    let path = with_nvtx("nvtx-keys", NVTX_ROWS);
    let (fast, sql) = both(std::slice::from_ref(&path));
    assert_same(&fast, &sql, "NVTX from sorted keys");
    assert_eq!(fast.summary.sorted_by_sql, Vec::<String>::new());
    let count = |k: &str| fast.summary.counts.get(k).copied().unwrap_or(0);
    assert_eq!(
        (
            count("nvtx-push-pop"),
            count("nvtx-start-end"),
            count("nvtx-mark")
        ),
        (7, 1, 1)
    );
}

#[test]
fn an_nvtx_end_that_is_not_an_integer_gives_the_sql_paths_error() {
    // With INTEGER affinity only a fractional (or non-numeric) end stays non-integer: such a file
    // stops with the same error either way (discovery already names the column's type).
    let mut rows = NVTX_ROWS.to_vec();
    rows.push((300, Some("350.5"), 59, "fractional end"));
    let path = with_nvtx("nvtx-real-end", &rows);
    let paths = std::slice::from_ref(&path);
    let fast = convert(paths, &Options::default()).err().expect("an error");
    let sql = convert(
        paths,
        &Options {
            read_order: ReadOrder::Sql,
            ..Options::default()
        },
    )
    .err()
    .expect("an error");
    assert_eq!(fast.to_string(), sql.to_string());
    assert!(
        fast.to_string().contains("NVTX_EVENTS") && fast.to_string().contains("Real"),
        "{fast}"
    );
}

/// The sample with an `MPI_START_WAIT_EVENTS` table (as nsys writes it: a row per request, all
/// with the call's start and end) of `calls` wait calls of three requests each, on one of its
/// OS runtime threads and among its calls there.
fn with_mpi_waits(name: &str, calls: usize) -> PathBuf {
    edited(
        name,
        &format!(
            "CREATE TABLE MPI_START_WAIT_EVENTS (start INTEGER NOT NULL, end INTEGER, \
                 globalTid INTEGER, textId INTEGER, requestHandle INTEGER);
             INSERT INTO StringIds (id, value) VALUES (100000, 'MPI_Waitall');
             WITH RECURSIVE call(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM call WHERE i < {last}),
                  request(k) AS (VALUES (0), (1), (2)),
                  span(lo, step, tid) AS (SELECT MIN(start), (MAX(start) - MIN(start)) / {calls},
                      (SELECT globalTid FROM OSRT_API GROUP BY globalTid ORDER BY COUNT(*) DESC LIMIT 1)
                      FROM OSRT_API)
             INSERT INTO MPI_START_WAIT_EVENTS
                 SELECT lo + i * step + 3, lo + i * step + 503, tid, 100000, 7000 + k
                 FROM call, request, span ORDER BY i, k;",
            last = calls - 1
        ),
    )
}

/// The MPI waits' member groups its rows (a call per group, its requests counted), which only
/// SQL does; the other host calls still go sort-free around it, with the SQL path's bytes.
#[test]
fn mpi_waits_grouped_by_sql_leave_the_other_host_calls_sort_free() {
    let path = with_mpi_waits("mpi-waits", 40);
    // The host calls read as runs, the waits among them.
    let fast = path_read_as_runs(&path, "40 MPI wait calls of 3 requests");
    // Which the link join shows: it takes the CUDA calls from the host calls' sort-free reader
    // (through SQL's sort, it read them again itself).
    assert_eq!(
        fast.summary.links_from_host_calls,
        vec![path.display().to_string()]
    );
    assert_eq!(links(&fast), 16);
    assert_eq!(
        fast.summary.counts.get("mpi"),
        Some(&40),
        "a record per call"
    );
    assert!(fast.pcf.contains("MPI_Waitall"), "the calls are named");
}

/// Where the wait calls times eight (each of a run's eight fetches groups the waits again)
/// outnumber the other host calls (the sample's 948), the host calls go through SQL's sort
/// instead, with the same bytes.
#[test]
fn many_wait_calls_beside_few_others_are_sorted_by_sql_with_the_same_bytes() {
    let calls = 200;
    let path = with_mpi_waits("mpi-waits-many", calls);
    let (fast, sql) = both(std::slice::from_ref(&path));
    assert_same(&fast, &sql, "many MPI wait calls");
    assert_only_host_calls_sorted_by_sql(&fast);
    assert_eq!(fast.summary.counts.get("mpi"), Some(&(calls as u64)));
}
