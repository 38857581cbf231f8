//! The engine's one interface: [`Readers::open`] takes a description of what to read ([`Read`])
//! and gives [`Rows`], a table's rows in the SQL path's order whichever reader reads them (the
//! SQL path, the partitioned reader here or on a helper thread, the sort-keys reader). Each row
//! goes to a [`RowSink`], as ripgrep's searcher hands its matches to a sink: the caller decodes
//! rows and never learns which reader read them, nor where.
//!
//! The readers are made where they run best: per input one pager for all its page readers (its
//! cache holds the B-trees' interior pages) and, natively where allowed, a helper thread for the
//! runs whose aux floors nobody asks.

use std::rc::Rc;

#[cfg(not(target_family = "wasm"))]
use super::helper_threads::{HelperRows, Helpers};
use super::partitioned::{Key, NextRow, PartitionedRows, Spec, Survey};
use super::row::Fields;
use super::sort_keys::{KeyOrderRows, KeySpec, Keys};
use super::sql_rows::SqlRows;
use super::Input;
use crate::error::{Error, Result};
use crate::sqlfile::Pager;

/// What [`Readers::open`] reads.
pub enum Read<'a> {
    /// `spec`'s surveyed runs, merged (partitioned.rs). With `true` (floors), the sink reads the
    /// runs' aux floors as rows come ([`RowSink::placed`]), which only a reader on this thread has;
    /// otherwise the runs are read on the input's helper thread where it has one.
    Runs(&'a Spec, Survey, bool),
    /// `spec`'s rows in the order of `keys`, a scan of `spec` (sort_keys.rs).
    SortKeys {
        what: &'static str,
        spec: &'a KeySpec,
        keys: Keys,
    },
    /// The rows of `sql`, a query that sorts them (and gives the lookahead) itself.
    Sql { what: &'static str, sql: &'a str },
}

/// What a reader hands each row to, in order. Generic over the row, so that a decoder reads
/// each reader's rows without a call through a pointer per column.
pub trait RowSink {
    type Out;
    /// Takes the next row; `next`: where merged runs read it, its order value and the next
    /// one's on its resource (the SQL path gives that lookahead as columns of the row).
    fn row<R: Fields + ?Sized>(&mut self, row: &R, next: Option<&NextRow>) -> Self::Out;
    /// Sees, before [`row`](Self::row), a row runs read on this thread hand out, with their
    /// reader (its keys and aux floors: what the host calls' tap passes on to the link join).
    fn placed(&mut self, _runs: &mut PartitionedRows, _next: &NextRow) {}
}

/// A table's rows in the SQL path's order (see the module doc).
pub struct Rows<'c> {
    /// The input's label and the family's name, for messages.
    file: &'c str,
    what: &'static str,
    reader: Reader<'c>,
}

enum Reader<'c> {
    Sql(SqlRows<'c>),
    Runs(Box<PartitionedRows<'c>>),
    #[cfg(not(target_family = "wasm"))]
    Helper(Box<HelperRows>),
    SortKeys(Box<KeyOrderRows<'c>>),
}

impl Rows<'_> {
    /// Hands the next row to `sink` and returns what it gives; `None` after the last row.
    #[inline]
    pub fn next_with<S: RowSink>(&mut self, sink: &mut S) -> Result<Option<S::Out>> {
        let (file, what) = (self.file, self.what);
        match &mut self.reader {
            Reader::Sql(rows) => {
                (rows.next_with(|row| sink.row(row, None))).map_err(|e| Error::read(file, what, e))
            }
            Reader::Runs(p) => {
                let Some(next) = p.next_row(file)? else {
                    return Ok(None);
                };
                sink.placed(p, &next);
                Ok(Some(sink.row(&p.row(), Some(&next))))
            }
            #[cfg(not(target_family = "wasm"))]
            Reader::Helper(h) => {
                let Some(next) = h.next_row(file)? else {
                    return Ok(None);
                };
                Ok(Some(sink.row(&h.row(), Some(&next))))
            }
            Reader::SortKeys(k) => {
                let Some(row) = k.next_row(file)? else {
                    return Ok(None);
                };
                let out = sink.row(&row, None);
                k.recycle(row);
                Ok(Some(out))
            }
        }
    }

    /// The resources' keys, by [`NextRow::partition`]: none where no runs are read.
    pub fn keys(&self) -> &[Key] {
        match &self.reader {
            Reader::Runs(p) => p.keys(),
            #[cfg(not(target_family = "wasm"))]
            Reader::Helper(h) => h.keys(),
            Reader::Sql(_) | Reader::SortKeys(_) => &[],
        }
    }

    /// Whether [`RowSink::placed`] sees runs whose aux floors are right (see
    /// [`AuxRule`](super::partitioned::AuxRule)).
    pub fn aux_floors(&self) -> bool {
        matches!(&self.reader, Reader::Runs(p) if p.aux_sound())
    }
}

/// Makes the readers of the inputs' tables (see the module doc).
pub struct Readers<'c> {
    inputs: Vec<Input<'c>>,
    /// The inputs read together, these or more: each keeps a share of fixed budgets.
    together: usize,
    /// Per input, its pager once a reader of it asks (a reader of a group of inputs opens
    /// none of the others: a pager reads its file's header).
    pagers: Vec<std::cell::OnceCell<Option<Rc<Pager<'c>>>>>,
    page_reader: bool,
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
            pagers: inputs.iter().map(|_| std::cell::OnceCell::new()).collect(),
            page_reader,
            #[cfg(not(target_family = "wasm"))]
            helpers: (helper_threads > 0)
                .then(|| Helpers::new(&inputs, helper_threads, page_reader)),
            inputs,
        }
    }

    /// The rows `read` describes, of input `source`.
    pub fn open(&mut self, source: usize, read: Read) -> rusqlite::Result<Rows<'c>> {
        let Input { conn, label, .. } = self.inputs[source];
        let pager = self.pager(source);
        let (what, reader) = match read {
            Read::Runs(spec, survey, floors) => {
                (spec.what, self.runs(source, spec, survey, floors))
            }
            Read::SortKeys { what, spec, keys } => {
                let rows = KeyOrderRows::from_keys(conn, pager, what, spec, keys)?;
                (what, Reader::SortKeys(Box::new(rows)))
            }
            Read::Sql { what, sql } => (what, Reader::Sql(SqlRows::new(conn.prepare(sql)?))),
        };
        Ok(Rows {
            file: label,
            what,
            reader,
        })
    }

    /// The reader of `spec`'s runs in input `source`: on its helper thread where it has one and
    /// no `floors` are asked (the same rows in the same order), else on this thread.
    fn runs(&mut self, source: usize, spec: &Spec, survey: Survey, floors: bool) -> Reader<'c> {
        #[cfg(not(target_family = "wasm"))]
        let survey = match &mut self.helpers {
            Some(helpers) if !floors => match helpers.rows(source, spec, survey) {
                Ok(rows) => return Reader::Helper(Box::new(rows)),
                Err(survey) => survey,
            },
            _ => survey,
        };
        #[cfg(target_family = "wasm")]
        let _ = floors;
        let (conn, pager) = (self.inputs[source].conn, self.pager(source));
        let runs = PartitionedRows::new(conn, spec, survey, pager).among(self.together);
        Reader::Runs(Box::new(runs))
    }

    /// Input `source`'s pager, made at the first ask.
    fn pager(&self, source: usize) -> Option<Rc<Pager<'c>>> {
        let input = &self.inputs[source];
        (self.pagers[source]
            .get_or_init(|| Pager::shared_among(input.conn, self.page_reader, self.together)))
        .clone()
    }

    /// Lets go of what only opening readers needed, once every reader is open: each input's
    /// cached statements (those that looked its tables up, a few KiB each) and its pager's list
    /// of tables (the readers hold the tables they read).
    pub fn opened(&mut self) {
        for input in &self.inputs {
            input.conn.flush_prepared_statement_cache();
        }
        for pager in self.pagers.iter().filter_map(|p| p.get()).flatten() {
            pager.forget_tables();
        }
    }

    /// Input `source`'s label.
    pub fn label(&self, source: usize) -> &'c str {
        self.inputs[source].label
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
