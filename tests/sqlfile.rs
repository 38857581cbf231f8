//! The direct reader of SQLite's file format (src/sqlfile) against SQLite itself: every value of
//! every row, in rowid order, from any rowid on, over page sizes, overflow chains, every serial
//! type, columns added later, rowid aliases, deleted rows; what it declines; damaged files.

/// The CLI's memory map of small inputs (the library maps nothing by itself).
#[cfg(target_os = "linux")]
#[path = "../src/bin/prvsight/mapped.rs"]
mod mapped;

use prvsight::sqlfile::{leaf_pages, Pager, Record, Table, TableCursor};
use rusqlite::types::{Value, ValueRef};
use rusqlite::Connection;

fn owned(v: ValueRef<'_>) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(x) => Value::Integer(x),
        ValueRef::Real(x) => Value::Real(x),
        ValueRef::Text(t) => Value::Text(String::from_utf8(t.to_vec()).unwrap()),
        ValueRef::Blob(b) => Value::Blob(b.to_vec()),
    }
}

/// Every row of `table` with rowid ≥ `from` through the direct reader: (rowid, values).
fn direct_rows(conn: &Connection, table: &str, from: i64) -> Vec<(i64, Vec<Value>)> {
    let pager = Pager::new(conn).unwrap().expect("a pager");
    let t = Table::read(conn, table).unwrap().expect("a readable table");
    let mut cursor = TableCursor::new(t.root);
    cursor.seek(&pager, from).unwrap();
    let mut rec = Record::default();
    let mut out = Vec::new();
    while let Some((rowid, payload)) = cursor.next(&pager).unwrap() {
        rec.parse(payload, t.columns.len()).unwrap();
        let values = (0..t.columns.len())
            .map(|i| owned(t.value(&rec, payload, rowid, i)))
            .collect();
        out.push((rowid, values));
    }
    out
}

/// The same through SQL.
fn sql_rows(conn: &Connection, table: &str, from: i64) -> Vec<(i64, Vec<Value>)> {
    let mut st = conn
        .prepare(&format!(
            "SELECT rowid, * FROM {table} WHERE rowid >= ?1 ORDER BY rowid"
        ))
        .unwrap();
    let n = st.column_count();
    let rows = st
        .query_map([from], |r| {
            let values = (1..n)
                .map(|i| r.get::<_, Value>(i))
                .collect::<Result<_, _>>()?;
            Ok((r.get(0)?, values))
        })
        .unwrap();
    rows.collect::<Result<_, _>>().unwrap()
}

fn same_everywhere(conn: &Connection, table: &str) {
    let all = sql_rows(conn, table, i64::MIN);
    assert!(!all.is_empty());
    assert_eq!(
        direct_rows(conn, table, i64::MIN),
        all,
        "whole table {table}"
    );
    // From rowids on every side of the stored ones (gaps, the ends, beyond).
    let mut starts: Vec<i64> = all.iter().step_by(97).map(|(r, _)| *r).collect();
    starts.extend(starts.clone().iter().map(|r| r + 1));
    starts.extend([i64::MAX, all[all.len() - 1].0, all[0].0 - 1]);
    for from in starts {
        let want: Vec<_> = all.iter().filter(|(r, _)| *r >= from).cloned().collect();
        assert_eq!(
            direct_rows(conn, table, from),
            want,
            "{table} from rowid {from}"
        );
    }
}

/// Values of every serial type, lengths around the overflow thresholds, NULLs.
fn value_of(i: i64) -> Value {
    let ints = [
        0,
        1,
        -1,
        127,
        -128,
        128,
        32767,
        -32769,
        1 << 23,
        -(1 << 23) - 1,
        1 << 31,
        -(1 << 31) - 1,
        1 << 47,
        -(1 << 47) - 1,
        i64::MAX,
        i64::MIN,
    ];
    match i % 7 {
        0 => Value::Integer(ints[(i / 7) as usize % ints.len()]),
        1 => Value::Real(i as f64 * 0.25 - 1000.0),
        2 => Value::Text("x".repeat((i * 37 % 9000) as usize)),
        3 => Value::Blob((0..(i * 53 % 7000)).map(|b| b as u8).collect()),
        4 => Value::Null,
        5 => Value::Text(format!("é{i}∑")),
        _ => Value::Real(f64::from(i as i32)),
    }
}

/// The database as a file image, opened through SQLite's in-memory file (as `Export::from_bytes`
/// does): a plain `:memory:` database has no file to read pages from.
fn as_file(mut conn: Connection) -> Connection {
    let image = conn.serialize(rusqlite::MAIN_DB).unwrap();
    let mut c = Connection::open_in_memory().unwrap();
    c.deserialize_read_exact(rusqlite::MAIN_DB, &image[..], image.len(), true)
        .unwrap();
    c
}

fn filled(page_size: u32, rows: i64) -> Connection {
    let conn = Connection::open_in_memory().unwrap();
    conn.execute_batch(&format!(
        "PRAGMA page_size = {page_size};
         CREATE TABLE t (a INTEGER, b REAL, c TEXT, d BLOB, e, f NUMERIC);"
    ))
    .unwrap();
    let mut ins = conn
        .prepare("INSERT INTO t (a, b, c, d, e, f) VALUES (?1, ?2, ?3, ?4, ?5, ?6)")
        .unwrap();
    for i in 0..rows {
        let v = |k: i64| value_of(i * 6 + k);
        ins.execute([v(0), v(1), v(2), v(3), v(4), v(5)]).unwrap();
    }
    drop(ins);
    as_file(conn)
}

#[test]
fn every_value_of_every_row_as_sqlite_reads_it_at_every_page_size() {
    for page_size in [512, 4096, 65536] {
        let conn = filled(page_size, 3000);
        same_everywhere(&conn, "t");
    }
}

#[test]
fn integral_reals_come_back_as_reals() {
    let conn = Connection::open_in_memory().unwrap();
    conn.execute_batch(
        "CREATE TABLE r (x REAL, y DOUBLE, z FLOAT, n INTEGER);
         INSERT INTO r VALUES (3, 2.0, -7, 4.0), (0.5, 1e300, 0, '12'), (NULL, -0.0, 1, 'a');",
    )
    .unwrap();
    let conn = as_file(conn);
    let rows = direct_rows(&conn, "r", i64::MIN);
    assert_eq!(rows[0].1[0], Value::Real(3.0));
    assert_eq!(rows[0].1[3], Value::Integer(4));
    assert_eq!(rows[1].1[3], Value::Integer(12));
    assert_eq!(rows, sql_rows(&conn, "r", i64::MIN));
}

#[test]
fn columns_added_later_and_rowid_aliases_and_deleted_rows() {
    let conn = Connection::open_in_memory().unwrap();
    conn.execute_batch(
        "PRAGMA page_size = 1024;
         CREATE TABLE k (id INTEGER PRIMARY KEY, v TEXT);",
    )
    .unwrap();
    for i in 0..5000 {
        conn.execute(
            "INSERT INTO k (id, v) VALUES (?1, ?2)",
            rusqlite::params![i * 3 - 7000, format!("row {i}")],
        )
        .unwrap();
    }
    conn.execute_batch(
        "ALTER TABLE k ADD COLUMN later INTEGER;
         UPDATE k SET later = id WHERE id % 2 = 0;
         DELETE FROM k WHERE id % 5 = 0 OR (id > 100 AND id < 4000);",
    )
    .unwrap();
    let conn = as_file(conn);
    let t = Table::read(&conn, "k").unwrap().unwrap();
    assert!(t.columns[0].rowid_alias);
    assert!(!t.columns[1].rowid_alias);
    same_everywhere(&conn, "k");
}

#[test]
fn what_it_does_not_read_is_declined() {
    let conn = Connection::open_in_memory().unwrap();
    conn.execute_batch(
        "CREATE TABLE w (a INTEGER PRIMARY KEY, b) WITHOUT ROWID;
         CREATE TABLE g (a INTEGER, b INTEGER GENERATED ALWAYS AS (a * 2));
         CREATE TABLE d (a INTEGER PRIMARY KEY DESC, b);
         CREATE VIEW v AS SELECT 1;
         CREATE TABLE plain (a, b DEFAULT 3);",
    )
    .unwrap();
    for declined in ["w", "g", "d", "v", "missing"] {
        assert!(
            Table::read(&conn, declined).unwrap().is_none(),
            "{declined}"
        );
    }
    let plain = Table::read(&conn, "plain").unwrap().unwrap();
    assert!(plain.columns[1].has_default && !plain.columns[0].has_default);

    // A WAL-mode database and a UTF-16 one: no pager.
    let dir = std::env::temp_dir().join(format!("prvsight-sqlfile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let wal = dir.join("wal.sqlite");
    let _ = std::fs::remove_file(&wal);
    let c = Connection::open(&wal).unwrap();
    c.execute_batch("PRAGMA journal_mode = WAL; CREATE TABLE t (a); INSERT INTO t VALUES (1);")
        .unwrap();
    assert!(Pager::new(&c).unwrap().is_none());
    drop(c);
    let utf16 = Connection::open_in_memory().unwrap();
    utf16
        .execute_batch(
            "PRAGMA encoding = 'UTF-16le'; CREATE TABLE t (a); INSERT INTO t VALUES ('x');",
        )
        .unwrap();
    assert!(Pager::new(&utf16).unwrap().is_none());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_truncated_file_is_an_error_not_a_panic() {
    // Small files mapped, as the CLI has them.
    #[cfg(target_os = "linux")]
    mapped::enable();
    let dir = std::env::temp_dir().join(format!("prvsight-sqlfile-trunc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("t.sqlite");
    let _ = std::fs::remove_file(&path);
    {
        let c = Connection::open(&path).unwrap();
        c.execute_batch("PRAGMA page_size = 1024; CREATE TABLE t (a INTEGER, b TEXT);")
            .unwrap();
        let tx = c.unchecked_transaction().unwrap();
        for i in 0..20000i64 {
            tx.execute(
                "INSERT INTO t VALUES (?1, ?2)",
                rusqlite::params![i, "y".repeat((i % 3000) as usize)],
            )
            .unwrap();
        }
        tx.commit().unwrap();
    }
    let full = std::fs::read(&path).unwrap();
    // The file is cut while open (SQLite itself refuses to open a file shorter than its header
    // says): every page past the cut is unreadable, and the scan must say so.
    // The last cut ends on a memory page's end (64 KiB: a multiple of every page size).
    let on_a_page_end = full.len() / 2 / 65536 * 65536;
    for keep in [
        full.len() / 2,
        full.len() / 5,
        full.len() - 1024,
        on_a_page_end,
    ] {
        std::fs::write(&path, &full).unwrap();
        let c =
            Connection::open_with_flags(&path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
        let t = Table::read(&c, "t").unwrap().unwrap();
        let pager = Pager::new(&c).unwrap().unwrap();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(keep as u64)
            .unwrap();
        let mut cursor = TableCursor::new(t.root);
        let mut outcome = cursor.seek(&pager, i64::MIN).map(|()| 0u64);
        while let Ok(n) = outcome {
            match cursor.next(&pager) {
                Ok(Some(_)) => outcome = Ok(n + 1),
                Ok(None) => break,
                Err(e) => outcome = Err(e),
            }
        }
        let err = outcome.expect_err("a truncated table cannot be read to its end");
        assert!(err.to_string().contains("damaged or truncated"), "{err}");
        // On Linux a file this small is read through a memory map (src/bin/prvsight/mapped.rs): the
        // pages cut off under it are reported, not a SIGBUS that ends the process (within the
        // page the cut lies in, the bytes past it read as zeros, which break the format).
        #[cfg(target_os = "linux")]
        if keep == on_a_page_end {
            assert!(
                err.to_string()
                    .contains("the file shrank while it was read"),
                "{err}"
            );
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// On a real export: every table the converter reads, the same through both.
#[test]
fn the_bundled_real_export_reads_the_same_both_ways() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/testcuda_report1.sqlite");
    let conn =
        Connection::open_with_flags(&path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let mut read = 0;
    for t in &tables {
        let Some(table) = Table::read(&conn, t).unwrap() else {
            continue;
        };
        if table.columns.iter().any(|c| c.has_default) {
            continue;
        }
        let want = sql_rows(&conn, t, i64::MIN);
        assert_eq!(direct_rows(&conn, t, i64::MIN), want, "{t}");
        read += want.len();
    }
    assert!(read > 7_000, "read {read} rows");
}

/// A table's size in leaf pages, read from its interior pages (to share table passes between
/// threads, engine/prepass.rs): as SQLite's own `dbstat` counts them, at every page size and depth.
#[test]
fn leaf_pages_are_counted_from_the_interior_pages() {
    for (page_size, rows) in [
        (512, 1),
        (512, 3000),
        (512, 40000),
        (4096, 3000),
        (65536, 3000),
    ] {
        let conn = filled(page_size, rows);
        let root = Table::read(&conn, "t").unwrap().unwrap().root;
        let pager = Pager::new(&conn).unwrap().unwrap();
        let dbstat: i64 = conn
            .query_row(
                "SELECT count(*) FROM dbstat WHERE name = 't' AND pagetype = 'leaf'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        let dbstat = dbstat as u64;
        // A one-page table is its own leaf (dbstat calls the root 'leaf' too).
        assert_eq!(
            leaf_pages(&pager, root, 4096),
            dbstat.max(1),
            "{page_size}, {rows} rows"
        );
        // Bounded: after the root alone, the count is the root's children — the leaves
        // themselves where the tree is two levels deep, fewer where it is deeper.
        let partial = leaf_pages(&pager, root, 1);
        assert!(partial <= dbstat.max(1), "{partial} of {dbstat}");
        if page_size == 512 && rows > 1 {
            assert!(
                partial > 1 && partial < dbstat / 10,
                "{partial} of {dbstat}"
            );
        }
    }
}

/// A damaged tree whose interior pages point back up (a loop) or at pages of another kind:
/// the count stops, bounded, instead of looping or failing (the pass itself reports the damage).
#[test]
fn leaf_pages_of_a_damaged_tree_stop() {
    let mut conn = filled(512, 3000);
    let root = Table::read(&conn, "t").unwrap().unwrap().root;
    let mut image = conn.serialize(rusqlite::MAIN_DB).unwrap().to_vec();
    let page = |n: u32| (n as usize - 1) * 512;
    assert_eq!(image[page(root)], 0x05, "an interior root");
    let open = |image: &[u8]| {
        let mut c = Connection::open_in_memory().unwrap();
        c.deserialize_read_exact(rusqlite::MAIN_DB, image, image.len(), true)
            .unwrap();
        c
    };
    // The root's right-most child is the root itself: every level holds the root again.
    image[page(root) + 8..page(root) + 12].copy_from_slice(&root.to_be_bytes());
    let looped = open(&image);
    let pager = Pager::new(&looped).unwrap().unwrap();
    let n = leaf_pages(&pager, root, 4096);
    assert!(n <= u64::from(pager.page_count()) + 512, "bounded: {n}");
    // The root's first child is page 1 (the schema's page, a leaf of another kind of tree
    // behind the file header): counted as a level of leaves or stopped, never a panic.
    let mut image = conn.serialize(rusqlite::MAIN_DB).unwrap().to_vec();
    let first_cell = u16::from_be_bytes([image[page(root) + 12], image[page(root) + 13]]);
    let at = page(root) + usize::from(first_cell);
    image[at..at + 4].copy_from_slice(&1u32.to_be_bytes());
    let odd = open(&image);
    let pager = Pager::new(&odd).unwrap().unwrap();
    let _ = leaf_pages(&pager, root, 4096);
}
