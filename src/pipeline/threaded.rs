//! Read-ahead (native builds): a second thread runs the reading side of the pass (SQLite, the surveys,
//! the merge, decoding) on its own connections while this thread runs the sinks (formatting and
//! writing the trace, metrics). The records and their order are exactly those of the one-thread
//! pass: the reader is the same code, and the sinks see its records in the order it made them.

use std::path::PathBuf;

use super::sinks_links::SinksLinks;
use super::stream::{read_record_batches, Batches, ReadSummary, Step};
use super::{Delivery, Plan};
use crate::error::{Error, Result};
use crate::model::{Names, Record};
use crate::nsys::cursor::{CallsRead, ReadThreads, SinksThreadJoin};
use crate::nsys::Export;
use crate::options::{Options, ReadHelpers};

/// An input the reading thread opens again: its file and the label messages use.
pub(super) struct Reopen {
    path: PathBuf,
    label: String,
}

/// Records handed over at a time, and batches in flight at most (memory stays bounded when the
/// sinks are slower than the reader).
const BATCH: usize = 2048;
const IN_FLIGHT: usize = 8;

/// Reading helpers at most (engine/helper_threads.rs).
const MAX_HELPERS: usize = 4;

/// What the reading thread sends: the names interned since its last message, then what happened.
enum Message {
    Preparing,
    Begin(Vec<String>),
    /// The link joins left to this thread ([`ReadThreads::joins_on_sinks_thread`]).
    SinksThreadJoin(Vec<SinksThreadJoin>),
    /// Records, with the calls read since the batch before for the joins left to this thread.
    Records(Vec<String>, Vec<Record>, CallsRead),
}

/// The reading thread's connections, opened on a thread of their own from before discovery on:
/// opening an export reads its schema, which the reading thread otherwise did after discovery
/// and before its first record, while the other core waited. Dropped unused (the plan failed),
/// it waits for the opening thread and closes what it opened.
pub(super) struct Reopening {
    opening: Option<std::thread::JoinHandle<Result<Vec<Export>>>>,
}

impl Reopening {
    /// Starts opening the inputs again, where the pass can read on a second thread
    /// ([`reopenable`]); `None` where it cannot (or no thread starts: the pass then reads on
    /// this one).
    pub(super) fn start(exports: &[Export], opts: &Options) -> Option<Reopening> {
        let files = reopenable(exports, opts)?;
        let opening = std::thread::Builder::new()
            .name("prvsight-reopen".into())
            .spawn(move || {
                (files.iter())
                    .map(|f| {
                        let mut ex = Export::open_path(&f.path)?;
                        ex.label.clone_from(&f.label);
                        ex.share_caches(files.len());
                        Ok(ex)
                    })
                    .collect()
            })
            .ok()?;
        Some(Reopening {
            opening: Some(opening),
        })
    }

    /// The inputs opened again (waits for them).
    fn exports(mut self) -> Result<Vec<Export>> {
        match self.opening.take().map(std::thread::JoinHandle::join) {
            Some(Ok(opened)) => opened,
            Some(Err(panic)) => std::panic::resume_unwind(panic),
            None => unreachable!("taken once, here"),
        }
    }
}

impl Drop for Reopening {
    fn drop(&mut self) {
        if let Some(opening) = self.opening.take() {
            let _ = opening.join();
        }
    }
}

/// Past this many inputs the reading thread opens them again only where they are big (a mean
/// of [`BIG_INPUT`]): its connections would double what each input keeps open (~0.3 MiB), and
/// on small inputs it costs more than it gains (256 ranks of 160 KiB: 1.5 against 0.8 s).
const MANY_INPUTS: usize = 64;
const BIG_INPUT: u64 = 64 << 20;

/// The inputs, when the pass can read on a second thread: more than one core, every input opened
/// from a file (a second connection to it is then cheap), not too many for their size (see
/// [`MANY_INPUTS`]), and not turned off.
fn reopenable(exports: &[Export], opts: &Options) -> Option<Vec<Reopen>> {
    if !opts.second_thread_allowed() {
        return None;
    }
    if exports.len() > MANY_INPUTS {
        let bytes: u64 = exports.iter().map(Export::file_bytes).sum();
        if bytes / (exports.len() as u64) < BIG_INPUT {
            return None;
        }
    }
    exports
        .iter()
        .map(|ex| {
            ex.path.as_ref().map(|p| Reopen {
                path: p.clone(),
                label: ex.label.clone(),
            })
        })
        .collect()
}

/// Runs the reading side on a second thread (over the inputs `reopening` opens) and delivers its
/// records here, in its order. Returns what reading found and the names, as the one-thread
/// pass does.
pub(super) fn read(
    reopening: Reopening,
    exports: &[Export],
    opts: &Options,
    plan: &Plan,
    delivery: &mut Delivery,
) -> Result<(ReadSummary, Names)> {
    let delivery_threads = delivery.sink_threads();
    std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Message>(IN_FLIGHT);
        let reader =
            scope.spawn(move || read_and_send(reopening, opts, plan, delivery_threads, tx));
        let mut names = Names::new();
        let mut links: Option<SinksLinks> = None;
        let delivered = deliver(&rx, exports, opts, plan, delivery, &mut names, &mut links);
        // On an error here the receiver is dropped first, so that the reader's next send fails
        // and it stops; its own error (if any) is then only a consequence.
        drop(rx);
        let read = match reader.join() {
            Ok(r) => r,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        delivered?;
        let mut read = read?;
        if let Some(links) = links {
            read.add(&links.tally);
        }
        Ok((read, names))
    })
}

/// The reading thread: reads the inputs `reopening` opens and sends what it reads to `tx`.
fn read_and_send(
    reopening: Reopening,
    opts: &Options,
    plan: &Plan,
    delivery_threads: usize,
    tx: std::sync::mpsc::SyncSender<Message>,
) -> Result<ReadSummary> {
    let exports = reopening.exports()?;
    let mut names = Names::new();
    // Names are sent with the message that first needs them.
    let sent_names = std::cell::Cell::new(0usize);
    // A failed send means the sinks' side stopped (an error or a cancel it reports).
    let gone = |_| Error::Cancelled;
    let new_names = |names: &Names| {
        let added = names.since(sent_names.get()).to_vec();
        sent_names.set(names.len());
        added
    };
    let cores = crate::options::cores();
    let helpers = match opts.read_helpers {
        ReadHelpers::On => 1,
        ReadHelpers::Off => 0,
        // This thread and the sinks' own a core each; the helpers share the others with the
        // calling (sinks') thread, up to a few: one keeps up with this thread at about half a
        // core.
        ReadHelpers::Auto => cores.saturating_sub(1 + delivery_threads).min(MAX_HELPERS),
    };
    read_record_batches(
        &exports,
        opts,
        plan,
        &mut names,
        ReadThreads {
            surveys: cores.min(8),
            helpers,
            // Without helpers (two cores) this thread bounds the conversion while the sinks'
            // thread waits for batches: the link joins go there.
            joins_on_sinks_thread: helpers == 0,
        },
        &mut |step| match step {
            Step::Preparing => tx.send(Message::Preparing).map_err(gone),
            Step::Begin(names) => tx.send(Message::Begin(new_names(names))).map_err(gone),
            Step::Record(..) => unreachable!("records come in batches"),
        },
        Batches {
            len: BATCH,
            full: &mut |batch, calls, names| {
                tx.send(Message::Records(new_names(names), batch, calls))
                    .map_err(gone)
            },
            sinks_thread_joins: &mut |joins_asked| {
                tx.send(Message::SinksThreadJoin(joins_asked)).map_err(gone)
            },
        },
    )
}

/// The sinks' side: delivers what the reading thread sends, with the links of the joins it left
/// to this thread, until it is done (or failed) and drops its sender.
fn deliver<'e>(
    rx: &std::sync::mpsc::Receiver<Message>,
    exports: &'e [Export],
    opts: &Options,
    plan: &Plan,
    delivery: &mut Delivery,
    names: &mut Names,
    links: &mut Option<SinksLinks<'e>>,
) -> Result<()> {
    for message in rx.iter() {
        match message {
            Message::Preparing => delivery.step(Step::Preparing)?,
            Message::Begin(added) => {
                names.extend_from(&added);
                delivery.step(Step::Begin(names))?;
            }
            Message::SinksThreadJoin(joins_asked) => {
                *links = Some(SinksLinks::new(exports, opts, plan, joins_asked)?);
            }
            Message::Records(added, records, calls) => {
                names.extend_from(&added);
                let Some(links) = links.as_mut() else {
                    for rec in &records {
                        delivery.record(rec, names)?;
                    }
                    continue;
                };
                links.take(calls)?;
                for rec in &records {
                    while let Some(link) = links.next_before(Some(rec)) {
                        delivery.record(&link, names)?;
                    }
                    delivery.record(rec, names)?;
                }
            }
        }
    }
    // The reader is done: the links left go out after its last record.
    if let Some(links) = links.as_mut() {
        while let Some(link) = links.next_before(None) {
            delivery.record(&link, names)?;
        }
    }
    Ok(())
}
