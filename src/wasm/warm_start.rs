//! What an inspection leaves for the conversion that follows it in the same worker: the exports,
//! still open (their file blocks in the cache), and the conversion's plan made for the
//! inspection (`pipeline::Planned`, with the readers' surveys).
//!
//! Why: the page inspects the files as soon as they are picked, and that inspection is the
//! conversion's discovery with default options, so the click on Convert need not open and
//! discover the files again. One slot: a new inspection replaces it, a conversion takes it (used
//! or not), so it never holds more than one set of files; until then it holds their cached
//! blocks (the block cache's budget at most: vfs/cache.rs), which the conversion would read
//! again anyway.

use std::cell::RefCell;

use crate::error::Result;
use crate::nsys::Export;
use crate::pipeline::Planned;
use crate::Options;

use super::convert::ReadingSession;
use super::source::{self, Input};

/// The exports of one inspection and its plan (none where discovery failed), or the reading
/// session opened from them ahead of the conversion ([`read_ahead`]).
pub struct Inspected {
    /// The inputs' names and sizes, checked against the conversion's.
    inputs: Vec<(String, u64)>,
    held: Held,
}

// One value per page, kept in a thread-local slot: the variants' sizes differ (a reading
// session holds its cursors, heaps and counts), which costs nothing here.
#[allow(clippy::large_enum_variant)]
enum Held {
    Open {
        exports: Vec<Export>,
        planned: Option<Planned>,
    },
    /// Opened with `options` (serialized: a conversion with other options reads otherwise).
    Reading {
        options: String,
        session: ReadingSession,
    },
}

thread_local! {
    static SLOT: RefCell<Option<Inspected>> = const { RefCell::new(None) };
}

fn identity(inputs: &[Input]) -> Vec<(String, u64)> {
    inputs
        .iter()
        .map(|i| (i.name.clone(), source::input_size(i)))
        .collect()
}

impl Inspected {
    pub fn new(inputs: &[Input], exports: Vec<Export>, planned: Option<Planned>) -> Inspected {
        Inspected {
            inputs: identity(inputs),
            held: Held::Open { exports, planned },
        }
    }
}

fn options_key(opts: &Options) -> String {
    serde_json::to_string(opts).unwrap_or_default()
}

/// Opens the reading session of a split conversion of `inputs` with `opts` from what the
/// inspection of these very files kept, so that the click on Convert starts with the records
/// flowing; false where nothing fits (other files, or nothing kept). A session opened with
/// other options gives the files back and is opened anew.
pub fn read_ahead(inputs: &[Input], opts: &Options) -> Result<bool> {
    let Some(k) = SLOT.with(|k| k.borrow_mut().take()) else {
        return Ok(false);
    };
    let these = k.inputs == identity(inputs);
    let key = options_key(opts);
    let (exports, planned) = match k.held {
        Held::Open { exports, planned } if these => (exports, planned),
        // Opened ahead with other options (the user changed them since): the files back, and
        // a plan for these options, made now rather than after the click.
        Held::Reading { options, session } if these && options != key => {
            let exports = session.into_exports();
            let planned = Planned::new(&exports, opts, false)?;
            (exports, Some(planned))
        }
        held => {
            let fits = matches!(held, Held::Reading { .. }) && these;
            keep(Inspected {
                inputs: k.inputs,
                held,
            });
            return Ok(fits);
        }
    };
    let session = ReadingSession::from_exports(exports, planned, opts, READ_AHEAD)?;
    keep(Inspected {
        inputs: k.inputs,
        held: Held::Reading {
            options: key,
            session,
        },
    });
    Ok(true)
}

/// What a session opened ahead took from the inspection (see [`Taken::reused`]).
const READ_AHEAD: &str = "files and plan, read ahead";

/// The reading session opened ahead for `inputs` with `opts` ([`read_ahead`]), where there is
/// one and the conversion is of those very files (`inspected`) with the same options; else
/// `None`, what was kept left for [`exports_for`].
pub fn reading_for(inputs: &[Input], inspected: bool, opts: &Options) -> Option<ReadingSession> {
    SLOT.with(|k| {
        let mut slot = k.borrow_mut();
        let fits = matches!(
            slot.as_ref(),
            Some(Inspected { inputs: kept, held: Held::Reading { options, .. } })
                if inspected && *kept == identity(inputs) && *options == options_key(opts)
        );
        if !fits {
            return None;
        }
        match slot.take().map(|k| k.held) {
            Some(Held::Reading { session, .. }) => Some(session),
            _ => None,
        }
    })
}

/// Keeps `inspected` for the next conversion, in place of what was kept before.
pub fn keep(inspected: Inspected) {
    SLOT.with(|k| *k.borrow_mut() = Some(inspected));
}

/// Drops what was kept (the page inspects other files, or asked not to keep them).
pub fn forget() {
    SLOT.with(|k| *k.borrow_mut() = None);
}

/// A conversion's exports, and the plan made for them where they are the inspection's.
pub struct Taken {
    pub exports: Vec<Export>,
    pub planned: Option<Planned>,
    /// Whether the exports are the inspection's (else opened for the conversion).
    pub from_inspection: bool,
}

impl Taken {
    /// What the conversion takes from the inspection with `opts`, in words (for the worker's
    /// console, which the page's tests read).
    pub fn reused(&self, opts: &crate::Options) -> &'static str {
        match (&self.planned, self.from_inspection) {
            (Some(p), true) if p.fits(opts) => "files and plan",
            (_, true) => "files",
            (_, false) => "nothing",
        }
    }
}

/// The exports and plan for a conversion of `inputs`: those kept by the inspection when
/// `inspected` (the page says these are the very files it inspected last) and their names and
/// sizes match; else the inputs opened anew, without a plan. Either way the slot is emptied
/// first, so that the files are never held twice.
pub fn exports_for(inputs: &[Input], inspected: bool) -> Result<Taken> {
    if let Some(k) = SLOT.with(|k| k.borrow_mut().take()) {
        if inspected && k.inputs == identity(inputs) {
            let (exports, planned) = match k.held {
                Held::Open { exports, planned } => (exports, planned),
                // Read ahead with other options: the files back, the plan went into the session.
                Held::Reading { session, .. } => (session.into_exports(), None),
            };
            return Ok(Taken {
                exports,
                planned,
                from_inspection: true,
            });
        }
        // Dropped here, before the inputs are opened again.
    }
    Ok(Taken {
        exports: source::open_all(inputs)?,
        planned: None,
        from_inspection: false,
    })
}
