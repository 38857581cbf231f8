//! The NVTX range names that `prvsight info` and the page's inspection offer
//! (`nsys::nvtx::range_names`): counted over one scan of the table, they are what SQL's
//! `GROUP BY` of the name gives (`range_names_by_sql`), on every real export and on rows that
//! name their range every way a row can; damage gives the same names or an error naming the file.

mod common;

use std::panic::AssertUnwindSafe;

use common::{data, mutated, shared_traces};
use prvsight::nsys::nvtx::{range_names, range_names_by_sql};
use prvsight::nsys::Export;
use prvsight::pipeline::Planned;
use prvsight::Options;

/// The sample (no NVTX of its own) with an NVTX table whose rows name their ranges inline, by a
/// registered string, by both (the inline text wins), by a string id that is not registered, or
/// not at all; marks, which are no ranges; and `extra` rows of `range K` (K < 50) after them.
fn with_named_ranges(extra: u32) -> Vec<u8> {
    let sample = std::fs::read(data("testcuda_report1.sqlite")).unwrap();
    mutated(
        &sample,
        &format!(
            "CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
               rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,
               endGlobalTid INTEGER, textId INTEGER, domainId INTEGER, jsonTextId INTEGER, jsonText TEXT);
             INSERT INTO StringIds (id, value) VALUES (900001, 'a'), (900002, 'b');
             WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 29)
             INSERT INTO NVTX_EVENTS (start, end, eventType, text, textId, globalTid)
             SELECT 1000 + i, 2000 + i, ty, tx, id, 281761330250412 FROM n, (
               SELECT 59 AS ty, 'a' AS tx, NULL AS id, 3 AS k UNION ALL
               SELECT 60, NULL, 900001, 2 UNION ALL
               SELECT 70, NULL, 900002, 5 UNION ALL
               SELECT 71, NULL, 900009, 4 UNION ALL
               SELECT 34, 'mark', NULL, 6 UNION ALL
               SELECT 59, NULL, NULL, 1 UNION ALL
               SELECT 59, '', NULL, 1 UNION ALL
               SELECT 59, 'c', 900001, 7) WHERE i < k;
             WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < {extra} - 1)
             INSERT INTO NVTX_EVENTS (start, end, eventType, text, textId, globalTid)
             SELECT 5000 + i, 6000 + i, 59, CASE WHEN i % 3 = 0 THEN NULL ELSE 'range ' || (i % 50) END,
                    CASE WHEN i % 3 = 0 THEN 900002 END, 281761330250412 FROM n WHERE {extra} > 0;"
        ),
    )
}

fn names(list: &[(String, u64)]) -> Vec<(&str, u64)> {
    list.iter().map(|(n, c)| (n.as_str(), *c)).collect()
}

/// The names as the page's inspection counts them: in discovery's pass over the table.
fn counted_by_discovery(ex: &Export, limit: usize) -> Vec<(String, u64)> {
    let exports = std::slice::from_ref(ex);
    let mut planned = Planned::new(exports, &Options::default(), true).unwrap();
    let texts = planned.take_range_texts(0).expect("counted");
    assert!(planned.take_range_texts(0).is_none(), "taken once");
    texts.names(ex, limit).unwrap()
}

#[test]
fn names_count_inline_texts_and_registered_strings_as_sql_does() {
    let bytes = with_named_ranges(0);
    let ex = Export::from_bytes(&bytes, "named.sqlite").unwrap();
    let got = range_names(&ex, usize::MAX).unwrap();
    assert_eq!(names(&got), [("c", 7), ("a", 5), ("b", 5), ("", 1)]);
    assert_eq!(got, range_names_by_sql(&ex, usize::MAX).unwrap());
    assert_eq!(counted_by_discovery(&ex, usize::MAX), got);
    assert_eq!(names(&range_names(&ex, 2).unwrap()), [("c", 7), ("a", 5)]);
    assert_eq!(range_names(&ex, 0).unwrap(), []);
}

#[test]
fn every_real_export_gives_the_names_sql_gives() {
    let mut files = vec![data("testcuda_report1.sqlite")];
    if let Some(root) = shared_traces() {
        for dir in [
            root.clone(),
            root.join("generated"),
            root.join("generated/mpi4"),
        ] {
            let Ok(list) = std::fs::read_dir(dir) else {
                continue;
            };
            files.extend(
                list.map(|e| e.unwrap().path())
                    .filter(|p| p.extension().is_some_and(|e| e == "sqlite")),
            );
        }
    }
    let mut with_names = 0;
    for path in &files {
        let Ok(ex) = Export::open_path(path) else {
            continue;
        };
        let sql = range_names_by_sql(&ex, usize::MAX).unwrap();
        assert_eq!(
            range_names(&ex, usize::MAX).unwrap(),
            sql,
            "{}",
            path.display()
        );
        let top = range_names(&ex, 12).unwrap();
        assert_eq!(top, sql[..sql.len().min(12)], "{}", path.display());
        if Planned::new(std::slice::from_ref(&ex), &Options::default(), false).is_ok() {
            assert_eq!(
                counted_by_discovery(&ex, usize::MAX),
                sql,
                "{}: by discovery",
                path.display()
            );
        }
        with_names += usize::from(!sql.is_empty());
    }
    if files.len() > 1 {
        assert!(
            with_names >= 3,
            "{with_names} of {} exports name ranges",
            files.len()
        );
    }
}

#[test]
fn damage_to_the_nvtx_table_gives_the_names_sql_reads_or_an_error_naming_the_file() {
    let bytes = with_named_ranges(3000);
    let whole = Export::from_bytes(&bytes, "whole.sqlite").unwrap();
    assert_eq!(range_names(&whole, 3).unwrap()[0], ("b".to_owned(), 1005));
    // The NVTX table's pages are the last ones: cut inside them, and flip bytes there.
    let pages = bytes.len() / 4096;
    let first = pages.saturating_sub(16);
    let mut cases: Vec<Vec<u8>> = (first..pages).map(|p| bytes[..p * 4096].to_vec()).collect();
    let mut state: u64 = 0x5EED_0000_4E56_5458;
    let mut below = |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    for _ in 0..150 {
        let mut b = bytes.clone();
        for _ in 0..1 + below(6) {
            let at = first * 4096 + below(b.len() - first * 4096);
            b[at] ^= 1 << below(8);
        }
        cases.push(b);
    }
    let (mut same, mut refused) = (0, 0);
    for (i, b) in cases.into_iter().enumerate() {
        let label = format!("damaged-{i}.sqlite");
        let run = std::panic::catch_unwind(AssertUnwindSafe(|| {
            let ex = Export::from_bytes(&b, &label)?;
            // As the inspection counts them, where discovery gets through.
            let by_discovery = Planned::new(std::slice::from_ref(&ex), &Options::default(), true)
                .ok()
                .and_then(|mut p| p.take_range_texts(0))
                .map(|texts| texts.names(&ex, usize::MAX));
            Ok::<_, prvsight::Error>((
                range_names(&ex, usize::MAX),
                range_names_by_sql(&ex, usize::MAX),
                by_discovery,
            ))
        }));
        let run = run.unwrap_or_else(|_| panic!("{label}: panicked"));
        if let Ok((_, Ok(sql), Some(by_discovery))) = &run {
            match by_discovery {
                Ok(got) => assert_eq!(got, sql, "{label}: by discovery"),
                Err(e) => assert!(e.to_string().contains(&label), "{label}: {e}"),
            }
        }
        match run.map(|(got, sql, _)| (got, sql)) {
            Ok((Ok(got), Ok(sql))) => {
                assert_eq!(got, sql, "{label}");
                same += 1;
            }
            Ok((Err(e), _)) | Err(e) => {
                assert!(e.to_string().contains(&label), "{label}: {e}");
                refused += 1;
            }
            // SQLite's GROUP BY met damage that the scan did not read (it reads fewer columns).
            Ok((Ok(_), Err(e))) => assert!(e.to_string().contains(&label), "{label}: {e}"),
        }
    }
    eprintln!("damaged NVTX tables: {same} read as SQL reads them, {refused} refused");
    assert!(
        same > 0 && refused > 0,
        "{same} read alike, {refused} refused"
    );
}
