//! The readers of a conversion's inputs, made where they run best: per input one pager for all its
//! page readers (its cache holds the B-trees' interior pages) and, natively where allowed, a
//! helper thread for the readers whose rows feed nothing but their own cursor.

use std::rc::Rc;

#[cfg(not(target_family = "wasm"))]
use super::helper_threads::Helpers;
use super::partitioned::{OrderedRows, PartitionedRows, Spec, Survey};
use super::sort_keys::{KeyOrderRows, KeySpec, Keys};
use super::sql_rows::SqlRows;
use super::Input;
use crate::sqlfile::Pager;

/// Makes the readers of the inputs' tables (see the module doc).
pub struct Readers<'c> {
    inputs: Vec<Input<'c>>,
    /// The inputs read together, these or more: each keeps a share of fixed budgets.
    together: usize,
    pagers: Vec<Option<Rc<Pager<'c>>>>,
    #[cfg(not(target_family = "wasm"))]
    helpers: Option<Helpers>,
}

impl<'c> Readers<'c> {
    /// Readers of `inputs`, by the page reader where `page_reader` and a query allow it, with up
    /// to `helper_threads` helpers (native builds; none for 0).
    pub fn new(inputs: Vec<Input<'c>>, page_reader: bool, helper_threads: usize) -> Readers<'c> {
        let together = inputs.len();
        Self::among(inputs, page_reader, helper_threads, together)
    }

    /// [`new`](Self::new) for some of `together` inputs read together.
    pub fn among(
        inputs: Vec<Input<'c>>,
        page_reader: bool,
        helper_threads: usize,
        together: usize,
    ) -> Readers<'c> {
        #[cfg(target_family = "wasm")]
        let _ = helper_threads;
        Readers {
            together,
            pagers: (inputs.iter())
                .map(|input| Pager::shared_among(input.conn, page_reader, together))
                .collect(),
            #[cfg(not(target_family = "wasm"))]
            helpers: (helper_threads > 0)
                .then(|| Helpers::new(&inputs, helper_threads, page_reader)),
            inputs,
        }
    }

    /// The reader of `spec`'s runs in input `source`, on this thread.
    pub fn here(&self, source: usize, spec: &Spec, runs: Survey) -> PartitionedRows<'c> {
        let conn = self.inputs[source].conn;
        PartitionedRows::new(conn, spec, runs, self.pagers[source].clone()).among(self.together)
    }

    /// The reader of `spec`'s runs in input `source`, for rows that feed nothing but their own
    /// cursor: on the input's helper thread where it has one (the same rows in the same order),
    /// else on this thread.
    pub fn anywhere(
        &mut self,
        source: usize,
        spec: &Spec,
        runs: Survey,
    ) -> Box<dyn OrderedRows + 'c> {
        #[cfg(not(target_family = "wasm"))]
        let runs = match &mut self.helpers {
            Some(helpers) => match helpers.rows(source, spec, runs) {
                Ok(rows) => return Box::new(rows),
                Err(runs) => runs,
            },
            None => runs,
        };
        Box::new(self.here(source, spec, runs))
    }

    /// The reader of `spec`'s rows in input `source` in the order of `keys` (a scan of `spec`).
    pub fn by_sort_keys(
        &self,
        source: usize,
        what: &'static str,
        spec: &KeySpec,
        keys: Keys,
    ) -> rusqlite::Result<KeyOrderRows<'c>> {
        let (conn, pager) = (self.inputs[source].conn, self.pagers[source].clone());
        KeyOrderRows::from_keys(conn, pager, what, spec, keys)
    }

    /// The rows of `sql`, a query of input `source` that sorts them itself.
    pub fn sql(&self, source: usize, sql: &str) -> rusqlite::Result<SqlRows<'c>> {
        Ok(SqlRows::new(self.inputs[source].conn.prepare(sql)?))
    }

    /// Input `source`'s connection and pager.
    pub fn input(&self, source: usize) -> (Input<'c>, Option<Rc<Pager<'c>>>) {
        (self.inputs[source], self.pagers[source].clone())
    }

    /// Helper threads started.
    pub fn helpers_started(&self) -> usize {
        #[cfg(not(target_family = "wasm"))]
        if let Some(h) = &self.helpers {
            return h.started();
        }
        0
    }
}
