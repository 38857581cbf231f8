//! The SQL path: the rows of a query that sorts (and gives the lookahead) itself.

use rusqlite::Statement;

/// A query's rows, stepped one call at a time without anything borrowing the statement between
/// calls: each call steps through a fresh `Rows` that is forgotten, not dropped, since dropping
/// it would reset the statement (a cursor is kept between calls: the browser's reader gives its
/// records a batch at a time).
pub struct SqlRows<'c> {
    statement: Statement<'c>,
    /// The last row was read (stepping again would restart the query).
    done: bool,
}

impl<'c> SqlRows<'c> {
    /// The rows of `statement` (no parameters), read from the first call of
    /// [`next_with`](Self::next_with) on.
    pub fn new(statement: Statement<'c>) -> SqlRows<'c> {
        SqlRows {
            statement,
            done: false,
        }
    }

    /// Hands the next row to `f` and returns what it gives; `None` after the last row.
    #[inline]
    pub fn next_with<T>(
        &mut self,
        f: impl FnOnce(&rusqlite::Row<'_>) -> T,
    ) -> rusqlite::Result<Option<T>> {
        if self.done {
            return Ok(None);
        }
        let mut rows = self.statement.raw_query();
        match rows.next() {
            Ok(Some(row)) => {
                let out = f(row);
                // Not dropped: that would reset the statement to its first row.
                std::mem::forget(rows);
                Ok(Some(out))
            }
            end => {
                self.done = true;
                end.map(|_| None)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sql_rows_step_on_across_calls_and_stop_at_the_end() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE TABLE t (x INTEGER);
             WITH RECURSIVE i(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM i WHERE n < 300)
             INSERT INTO t SELECT n FROM i;",
        )
        .unwrap();
        let mut rows = SqlRows::new(conn.prepare("SELECT x FROM t ORDER BY x DESC").unwrap());
        let mut got = Vec::new();
        while let Some(x) = rows.next_with(|r| r.get::<_, i64>(0).unwrap()).unwrap() {
            got.push(x);
        }
        assert_eq!(got, (1..=300).rev().collect::<Vec<i64>>());
        // Not again from the first row.
        assert!(rows.next_with(|_| ()).unwrap().is_none());
    }
}
