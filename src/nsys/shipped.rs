//! Partitioned rows read on a helper thread (native builds): the reading thread bounds the
//! conversion (docs/PERFORMANCE.md), and of its work the B-tree walks and record parsing of
//! the GPU operations' tables — read once in time order for their own cursor and once in
//! correlation-id order for the link join — need nothing it holds. A helper thread per input
//! runs those [`PartitionedRows`] on a connection of its own and ships their rows in batches;
//! the reading thread decodes them as it decodes its own. The rows and their order are the
//! same, so are the records and the names (interned by the reading thread, in its order).
//!
//! The reading thread asks for each stream's next batch as soon as it starts on the current
//! one, so the helper works one batch ahead per stream; a single helper serves every stream of
//! its input in the order asked (it never waits on the reader, so nothing can deadlock), and
//! memory stays at two batches per stream.

use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::thread::JoinHandle;

use super::cursor::{RowBlock, RowView};
use super::partitioned::{Key, NextRow, OrderedRows, PartitionedRows, RowAt, Spec, Survey};
use super::Export;
use crate::error::{Error, Result};
use crate::sqlfile::Pager;

/// Rows shipped at a time: large enough that a hand-over (a wake-up of the other thread) is
/// rare per row, small enough that the first rows come soon.
const SHIPPED_ROWS: usize = 1024;

/// What the reading thread asks of a helper.
enum Request {
    /// Start reading a stream: the spec's rows, in the survey's runs (stream ids count up).
    Open(Box<(Spec, Survey)>),
    /// The stream's next batch.
    Fetch(usize),
}

/// A stream's rows after the ones shipped before, and how it goes on.
struct Batch {
    rows: RowBlock,
    meta: Vec<Meta>,
    /// `None`: more rows to come; `Some(Ok)`: the stream ends after these; `Some(Err)`: reading
    /// it failed after these.
    end: Option<Result<()>>,
}

/// What [`NextRow`] says of a row besides where its values are.
#[derive(Clone, Copy)]
struct Meta {
    start: i64,
    next_start: Option<i64>,
    rid: i64,
    aux: Option<i64>,
    partition: usize,
}

/// The reading thread's end of one input's helper thread, shared by the input's shipped streams.
pub struct Helper {
    requests: Option<Sender<Request>>,
    batches: Receiver<(usize, Batch)>,
    /// Batches that came while another stream's was awaited, by stream.
    arrived: Vec<Option<Batch>>,
    thread: Option<JoinHandle<()>>,
    label: String,
}

impl Helper {
    /// Starts a helper reading the export at `path` (`direct`: by the direct reader of the file
    /// format, as the reading thread's own readers do).
    pub fn spawn(path: PathBuf, label: String, direct: bool) -> Rc<RefCell<Helper>> {
        let (requests, asked) = channel();
        let (shipped, batches) = channel();
        let name = label.clone();
        let thread = std::thread::Builder::new()
            .name("prvsight-rows".into())
            .spawn(move || serve(&path, name, direct, asked, shipped));
        let (requests, thread) = match thread {
            Ok(t) => (Some(requests), Some(t)),
            // No thread: every fetch fails below (no helper answers), and says why.
            Err(_) => (None, None),
        };
        Rc::new(RefCell::new(Helper {
            requests,
            batches,
            arrived: Vec::new(),
            thread,
            label,
        }))
    }

    fn ask(&mut self, request: Request) {
        if let Some(tx) = &self.requests {
            // A failed send means the helper is gone; the next wait says so.
            let _ = tx.send(request);
        }
    }

    /// Stream `stream`'s batch asked for last.
    fn wait(&mut self, stream: usize) -> Result<Batch> {
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
                        file: self.label.clone(),
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

/// The helper thread: opens the export, then answers requests until the reading thread's end
/// is dropped.
fn serve(
    path: &std::path::Path,
    label: String,
    direct: bool,
    asked: Receiver<Request>,
    shipped: Sender<(usize, Batch)>,
) {
    let opened = Export::open_path(path).map(|mut ex| {
        ex.label = label;
        ex
    });
    let ex = match opened {
        Ok(ex) => ex,
        Err(e) => {
            for request in asked {
                if let Request::Fetch(s) = request {
                    let failed = Batch {
                        rows: RowBlock::default(),
                        meta: Vec::new(),
                        end: Some(Err(e.clone())),
                    };
                    if shipped.send((s, failed)).is_err() {
                        return;
                    }
                }
            }
            return;
        }
    };
    let pager = direct
        .then(|| Pager::new(&ex.conn).ok().flatten().map(Rc::new))
        .flatten();
    let mut streams: Vec<(PartitionedRows, usize)> = Vec::new();
    for request in asked {
        match request {
            Request::Open(job) => {
                let (spec, survey) = *job;
                let rows = PartitionedRows::new(&ex.conn, &spec, survey, pager.clone());
                streams.push((rows, spec.columns.len()));
            }
            Request::Fetch(s) => {
                let (rows, width) = &mut streams[s];
                let batch = ship(rows, *width, &ex.label);
                if shipped.send((s, batch)).is_err() {
                    return;
                }
            }
        }
    }
}

/// The next rows of `rows`, copied out (at most [`SHIPPED_ROWS`]).
fn ship(rows: &mut PartitionedRows, width: usize, file: &str) -> Batch {
    let mut batch = Batch {
        rows: RowBlock::with_capacity(width, SHIPPED_ROWS),
        meta: Vec::with_capacity(SHIPPED_ROWS),
        end: None,
    };
    while batch.meta.len() < SHIPPED_ROWS {
        match rows.next_row(file) {
            Ok(Some(next)) => {
                batch.rows.push_copy(&rows.row(next.row));
                batch.meta.push(Meta {
                    start: next.start,
                    next_start: next.next_start,
                    rid: next.rid,
                    aux: next.aux,
                    partition: next.partition,
                });
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

/// One helper per input, started when first asked for: for inputs opened from a file (the helper
/// opens it again).
pub struct Helpers {
    inputs: Vec<Option<(PathBuf, String)>>,
    started: Vec<Option<Rc<RefCell<Helper>>>>,
    direct: bool,
}

impl Helpers {
    /// Helpers for these inputs (`direct` as for [`Helper::spawn`]).
    pub fn new(exports: &[Export], direct: bool) -> Helpers {
        Helpers {
            inputs: exports
                .iter()
                .map(|ex| ex.path.clone().map(|p| (p, ex.label.clone())))
                .collect(),
            started: exports.iter().map(|_| None).collect(),
            direct,
        }
    }

    /// Helpers started so far.
    pub fn started(&self) -> usize {
        self.started.iter().flatten().count()
    }

    /// Input `source`'s helper (started now if it was not), if it can have one.
    pub fn of(&mut self, source: usize) -> Option<&Rc<RefCell<Helper>>> {
        let (path, label) = self.inputs.get(source)?.as_ref()?;
        let direct = self.direct;
        Some(
            self.started[source]
                .get_or_insert_with(|| Helper::spawn(path.clone(), label.clone(), direct)),
        )
    }
}

/// A partitioned reader run by a helper: the same rows, in the same order, as the
/// [`PartitionedRows`] of its spec and survey.
pub struct ShippedRows {
    helper: Rc<RefCell<Helper>>,
    stream: usize,
    keys: Vec<Key>,
    columns: Rc<[String]>,
    batch: Batch,
    /// The next row of `batch` to hand out.
    next: usize,
}

impl ShippedRows {
    /// Has `helper` read `spec`'s rows in `survey`'s runs; the first batch is asked for now.
    pub fn new(helper: &Rc<RefCell<Helper>>, spec: &Spec, survey: Survey) -> ShippedRows {
        let keys = survey.keys().to_vec();
        let columns = spec.columns.iter().map(|c| c.name().to_owned()).collect();
        let mut h = helper.borrow_mut();
        let stream = h.arrived.len();
        h.arrived.push(None);
        h.ask(Request::Open(Box::new((spec.clone(), survey))));
        h.ask(Request::Fetch(stream));
        drop(h);
        ShippedRows {
            helper: helper.clone(),
            stream,
            keys,
            columns,
            batch: Batch {
                rows: RowBlock::default(),
                meta: Vec::new(),
                end: None,
            },
            next: 0,
        }
    }
}

impl OrderedRows for ShippedRows {
    fn keys(&self) -> &[Key] {
        &self.keys
    }

    fn next_row(&mut self, _file: &str) -> Result<Option<NextRow>> {
        loop {
            if let Some(m) = self.batch.meta.get(self.next) {
                let index = self.next;
                self.next += 1;
                return Ok(Some(NextRow {
                    row: RowAt::shipped(index),
                    start: m.start,
                    next_start: m.next_start,
                    rid: m.rid,
                    aux: m.aux,
                    partition: m.partition,
                }));
            }
            match &self.batch.end {
                Some(Ok(())) => return Ok(None),
                Some(Err(e)) => return Err(e.clone()),
                None => {}
            }
            let mut helper = self.helper.borrow_mut();
            self.batch = helper.wait(self.stream)?;
            self.next = 0;
            if self.batch.end.is_none() {
                helper.ask(Request::Fetch(self.stream));
            }
        }
    }

    fn row(&self, at: RowAt) -> RowView<'_> {
        self.batch.rows.row(at.shipped_index(), &self.columns)
    }
}
