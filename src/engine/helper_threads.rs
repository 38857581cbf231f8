//! Partitioned rows read on helper threads (native builds): the reading thread bounds the
//! conversion, and of its work the B-tree walks and record parsing of the GPU operations'
//! tables — read once in time order for their own cursor and once in correlation-id order for
//! the link join — need nothing it holds. A helper runs those
//! [`PartitionedRows`] on connections of its own and sends their rows in batches; the reading
//! thread decodes them as it decodes its own. The rows and their order are the same, so are the
//! records and the names (interned by the reading thread, in its order).
//!
//! The reading thread asks for each stream's next batch as soon as it starts on the current
//! one, so a helper works one batch ahead per stream; a helper serves its streams in the order
//! asked (it never waits on the reader, so nothing can deadlock). A conversion has a few
//! helpers at most, each reading the inputs given to it in turn (with one input per rank there
//! are many more inputs than cores), and its batches shrink as inputs add streams: memory
//! stays at two small batches per stream.

use std::cell::{OnceCell, RefCell};
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::thread::JoinHandle;

use rusqlite::Connection;

use super::block::{RowBlock, RowView};
use super::partitioned::{Key, NextRow, PartitionedRows, Spec, Survey};
use super::{open_read_only, Input};
use crate::error::{Error, Result};
use crate::sqlfile::Pager;

/// Rows sent at most in one batch: large enough that a hand-over (a wake-up of the other
/// thread) is rare per row, small enough that the first rows come soon.
const MAX_BATCH_ROWS: usize = 1024;
/// ... and at least.
const MIN_BATCH_ROWS: usize = 64;
/// Rows in flight over every helper's stream of a conversion (two batches a stream): with many
/// inputs (one per rank) the batches shrink, so that memory stays flat.
const ROWS_IN_FLIGHT: usize = 24_576;
/// Helper streams an input has, as a rule: its GPU operations' cursor, the link join's
/// operations (one stream per process) and its CPU scheduling.
const STREAMS_PER_INPUT: usize = 3;

/// What the reading thread asks of a helper.
enum Request {
    /// Start reading a stream (stream ids count up from 0 per helper).
    Open(Box<Job>),
    /// The stream's next batch.
    Fetch(usize),
}

/// A stream to read: `spec`'s rows in `survey`'s runs, of input `source`.
struct Job {
    source: usize,
    spec: Spec,
    survey: Survey,
    batch_rows: usize,
}

/// A stream's rows after the ones sent before, and how it goes on.
struct Batch {
    rows: RowBlock,
    meta: Vec<NextRow>,
    /// `None`: more rows to come; `Some(Ok)`: the stream ends after these; `Some(Err)`: reading
    /// it failed after these.
    end: Option<Result<()>>,
}

impl Batch {
    /// No rows yet (more to come).
    fn empty() -> Batch {
        Batch {
            rows: RowBlock::default(),
            meta: Vec::new(),
            end: None,
        }
    }

    /// No rows, and the reading failed.
    fn failed(e: Error) -> Batch {
        Batch {
            end: Some(Err(e)),
            ..Batch::empty()
        }
    }
}

/// The reading thread's end of a helper thread, shared by the streams it reads.
pub struct Helper {
    requests: Option<Sender<Request>>,
    batches: Receiver<(usize, Batch)>,
    /// Streams opened so far.
    streams: usize,
    /// Batches that came while another stream's was awaited, by stream.
    arrived: Vec<Option<Batch>>,
    thread: Option<JoinHandle<()>>,
}

/// An input a helper reads: its index among the conversion's inputs, its file and label.
type HelperInput = (usize, PathBuf, String);

impl Helper {
    /// Starts a helper reading `inputs` (`direct`: by the direct reader of the file format, as
    /// the reading thread's own readers do).
    fn spawn(inputs: Vec<HelperInput>, page_reader: bool) -> Rc<RefCell<Helper>> {
        let (requests, asked) = channel();
        let (sent, batches) = channel();
        let thread = std::thread::Builder::new()
            .name("prvsight-rows".into())
            .spawn(move || serve(inputs, page_reader, asked, sent));
        let (requests, thread) = match thread {
            Ok(t) => (Some(requests), Some(t)),
            // No thread: every fetch fails below (no helper answers), and says why.
            Err(_) => (None, None),
        };
        Rc::new(RefCell::new(Helper {
            requests,
            batches,
            streams: 0,
            arrived: Vec::new(),
            thread,
        }))
    }

    fn ask(&mut self, request: Request) {
        if let Some(tx) = &self.requests {
            // A failed send means the helper is gone; the next wait says so.
            let _ = tx.send(request);
        }
    }

    /// Stream `stream`'s batch asked for last (`file` names its input in a message).
    fn wait(&mut self, stream: usize, file: &str) -> Result<Batch> {
        if let Some(batch) = self.arrived.get_mut(stream).and_then(Option::take) {
            return Ok(batch);
        }
        loop {
            match self.batches.recv() {
                Ok((s, batch)) if s == stream => return Ok(batch),
                Ok((s, batch)) => {
                    if self.arrived.len() <= s {
                        self.arrived.resize_with(s + 1, || None);
                    }
                    self.arrived[s] = Some(batch);
                }
                Err(_) => {
                    // It stopped without answering: a panic there is a bug, shown as one.
                    if let Some(Err(panic)) = self.thread.take().map(JoinHandle::join) {
                        std::panic::resume_unwind(panic);
                    }
                    return Err(Error::Read {
                        file: file.to_owned(),
                        what: "rows on a helper thread".into(),
                        detail: "the thread stopped (or could not be started)".into(),
                    });
                }
            }
        }
    }
}

impl Drop for Helper {
    fn drop(&mut self) {
        // Its requests end, so it stops after the batch in hand (if any).
        self.requests = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The helper thread: answers requests until the reading thread's end is dropped, opening each
/// of its inputs when a stream first needs it (with one input per rank a helper has many).
fn serve(
    inputs: Vec<HelperInput>,
    page_reader: bool,
    asked: Receiver<Request>,
    sent: Sender<(usize, Batch)>,
) {
    // Opened once each, in place: the streams borrow them.
    let conns: Vec<OnceCell<Result<Connection>>> = inputs.iter().map(|_| OnceCell::new()).collect();
    // One pager per input for all its streams (its cache holds the B-trees' interior pages).
    let pagers: Vec<OnceCell<Option<Rc<Pager>>>> = inputs.iter().map(|_| OnceCell::new()).collect();
    struct Stream<'e> {
        rows: PartitionedRows<'e>,
        width: usize,
        batch_rows: usize,
        file: &'e str,
    }
    let mut streams: Vec<Result<Stream>> = Vec::new();
    for request in asked {
        match request {
            Request::Open(job) => {
                let Job {
                    source,
                    spec,
                    survey,
                    batch_rows,
                } = *job;
                let at = inputs
                    .iter()
                    .position(|(s, ..)| *s == source)
                    .expect("jobs come for this helper's inputs");
                let (_, path, label) = &inputs[at];
                let opened = conns[at].get_or_init(|| {
                    let conn = open_read_only(path).map_err(|e| Error::NotSqlite {
                        file: label.clone(),
                        detail: e.to_string(),
                    })?;
                    crate::engine::share_caches(&conn, inputs.len());
                    Ok(conn)
                });
                streams.push(match opened {
                    Ok(conn) => {
                        let pager = pagers[at]
                            .get_or_init(|| Pager::shared_among(conn, page_reader, inputs.len()));
                        Ok(Stream {
                            rows: PartitionedRows::new(conn, &spec, survey, pager.clone()),
                            width: spec.columns.len(),
                            batch_rows,
                            file: label,
                        })
                    }
                    Err(e) => Err(e.clone()),
                });
            }
            Request::Fetch(s) => {
                let batch = match &mut streams[s] {
                    Ok(st) => next_batch(&mut st.rows, st.width, st.batch_rows, st.file),
                    Err(e) => Batch::failed(e.clone()),
                };
                if sent.send((s, batch)).is_err() {
                    return;
                }
            }
        }
    }
}

/// The next rows of `rows`, copied out (at most `most`).
fn next_batch(rows: &mut PartitionedRows, width: usize, most: usize, file: &str) -> Batch {
    let mut batch = Batch {
        rows: RowBlock::with_capacity(width, most),
        meta: Vec::with_capacity(most),
        end: None,
    };
    while batch.meta.len() < most {
        match rows.next_row(file) {
            Ok(Some(next)) => {
                batch.rows.push_copy(&rows.row());
                batch.meta.push(next);
            }
            Ok(None) => {
                batch.end = Some(Ok(()));
                break;
            }
            Err(e) => {
                batch.end = Some(Err(e));
                break;
            }
        }
    }
    batch
}

/// The helpers of a conversion's reading: up to a given number of threads, each reading the
/// inputs given to it in turn (those opened from a file: a helper opens it again), started
/// when first asked for.
pub struct Helpers {
    /// Per input: its helper, if it can have one.
    helper_of: Vec<Option<usize>>,
    inputs: Vec<Option<(PathBuf, String)>>,
    started: Vec<Option<Rc<RefCell<Helper>>>>,
    page_reader: bool,
    batch_rows: usize,
}

impl Helpers {
    /// At most `threads` helpers (one at least) for these inputs (`direct` as for the reading
    /// thread's readers).
    pub fn new(inputs: &[Input], threads: usize, page_reader: bool) -> Helpers {
        let inputs: Vec<Option<(PathBuf, String)>> = inputs
            .iter()
            .map(|input| input.path.map(|p| (p.to_owned(), input.label.to_owned())))
            .collect();
        let files = inputs.iter().flatten().count();
        let count = threads.clamp(1, files.max(1));
        let mut next = 0;
        let helper_of = inputs
            .iter()
            .map(|input| {
                input.as_ref().map(|_| {
                    next += 1;
                    (next - 1) % count
                })
            })
            .collect();
        let streams = STREAMS_PER_INPUT * files.max(1);
        Helpers {
            helper_of,
            inputs,
            started: (0..count).map(|_| None).collect(),
            page_reader,
            batch_rows: (ROWS_IN_FLIGHT / (2 * streams)).clamp(MIN_BATCH_ROWS, MAX_BATCH_ROWS),
        }
    }

    /// Helpers started so far.
    pub fn started(&self) -> usize {
        self.started.iter().flatten().count()
    }

    /// Input `source`'s helper (started now if it was not), if it can have one.
    fn of(&mut self, source: usize) -> Option<&Rc<RefCell<Helper>>> {
        let h = (*self.helper_of.get(source)?)?;
        let (helper_of, inputs, page_reader) = (&self.helper_of, &self.inputs, self.page_reader);
        Some(self.started[h].get_or_insert_with(|| {
            let mine = inputs
                .iter()
                .enumerate()
                .filter(|&(i, _)| helper_of[i] == Some(h))
                .filter_map(|(i, input)| input.clone().map(|(path, label)| (i, path, label)))
                .collect();
            Helper::spawn(mine, page_reader)
        }))
    }

    /// A reader of `spec`'s runs in input `source` on its helper, if it can have one.
    pub fn rows(
        &mut self,
        source: usize,
        spec: &Spec,
        survey: Survey,
    ) -> Result<HelperRows, Survey> {
        let batch_rows = self.batch_rows;
        match self.of(source) {
            Some(helper) => Ok(HelperRows::new(helper, source, spec, survey, batch_rows)),
            None => Err(survey),
        }
    }
}

/// A partitioned reader run by a helper: the same rows, in the same order, as the
/// [`PartitionedRows`] of its spec and survey.
pub struct HelperRows {
    helper: Rc<RefCell<Helper>>,
    stream: usize,
    keys: Vec<Key>,
    columns: Rc<[String]>,
    batch: Batch,
    /// The next row of `batch` to hand out.
    next: usize,
}

impl HelperRows {
    /// Has `helper` read `spec`'s rows in `survey`'s runs of input `source`, `batch_rows` at a
    /// time; the first batch is asked for now.
    fn new(
        helper: &Rc<RefCell<Helper>>,
        source: usize,
        spec: &Spec,
        survey: Survey,
        batch_rows: usize,
    ) -> HelperRows {
        let keys = survey.keys().to_vec();
        let columns = spec.columns.iter().map(|c| c.name().to_owned()).collect();
        let mut h = helper.borrow_mut();
        let stream = h.streams;
        h.streams += 1;
        h.ask(Request::Open(Box::new(Job {
            source,
            spec: spec.clone(),
            survey,
            batch_rows,
        })));
        h.ask(Request::Fetch(stream));
        drop(h);
        HelperRows {
            helper: helper.clone(),
            stream,
            keys,
            columns,
            batch: Batch::empty(),
            next: 0,
        }
    }
}

impl HelperRows {
    /// The resources' keys, by partition index.
    pub fn keys(&self) -> &[Key] {
        &self.keys
    }

    /// The next row in the SQL path's order, with its lookahead.
    pub fn next_row(&mut self, file: &str) -> Result<Option<NextRow>> {
        loop {
            if let Some(&next) = self.batch.meta.get(self.next) {
                self.next += 1;
                return Ok(Some(next));
            }
            match &self.batch.end {
                Some(Ok(())) => return Ok(None),
                Some(Err(e)) => return Err(e.clone()),
                None => {}
            }
            let mut helper = self.helper.borrow_mut();
            self.batch = helper.wait(self.stream, file)?;
            self.next = 0;
            if self.batch.end.is_none() {
                helper.ask(Request::Fetch(self.stream));
            }
        }
    }

    /// The values of the row handed out last.
    pub fn row(&self) -> RowView<'_> {
        self.batch.rows.row(self.next - 1, &self.columns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` inputs opened from the sample file (each may have a helper).
    fn sample(conn: &Connection, n: usize) -> Vec<Input<'_>> {
        let path = std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/testcuda_report1.sqlite"
        ));
        let input = Input {
            conn,
            label: "sample",
            path: Some(path),
        };
        vec![input; n]
    }

    #[test]
    fn inputs_are_dealt_to_the_helpers_in_turn() {
        let conn = Connection::open_in_memory().unwrap();
        let inputs = sample(&conn, 5);
        let helpers = Helpers::new(&inputs, 2, true);
        assert_eq!(
            helpers.helper_of,
            [Some(0), Some(1), Some(0), Some(1), Some(0)]
        );
        assert_eq!(helpers.started.len(), 2);
        // More threads than inputs: one helper per input.
        assert_eq!(Helpers::new(&inputs[..1], 8, true).started.len(), 1);
        // None asked for is one at least (the caller decides whether to have helpers).
        assert_eq!(Helpers::new(&inputs, 0, true).started.len(), 1);
    }

    #[test]
    fn an_input_held_in_memory_has_no_helper() {
        let conn = Connection::open_in_memory().unwrap();
        let mut inputs = sample(&conn, 1);
        inputs.push(Input {
            conn: &conn,
            label: "in memory",
            path: None,
        });
        inputs.extend(sample(&conn, 1));
        let mut helpers = Helpers::new(&inputs, 2, true);
        assert_eq!(helpers.helper_of, [Some(0), None, Some(1)]);
        assert!(helpers.of(1).is_none());
        assert_eq!(helpers.started(), 0, "nothing started for it");
    }

    #[test]
    fn batches_shrink_as_inputs_add_streams() {
        let conn = Connection::open_in_memory().unwrap();
        let batch_rows = |n| Helpers::new(&sample(&conn, n), 2, true).batch_rows;
        assert_eq!(batch_rows(1), MAX_BATCH_ROWS);
        let eight = batch_rows(8);
        assert_eq!(eight, ROWS_IN_FLIGHT / (2 * STREAMS_PER_INPUT * 8));
        assert!(eight < MAX_BATCH_ROWS);
        assert_eq!(batch_rows(200), MIN_BATCH_ROWS);
    }
}
