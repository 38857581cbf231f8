//! What an inspection leaves for the conversion that follows it in the same worker: the exports,
//! still open (their file blocks in the cache), and the conversion's plan made for the
//! inspection (`pipeline::Planned`, with the readers' surveys).
//!
//! Why: the page inspects the files as soon as they are picked, and that inspection is the
//! conversion's discovery with default options. Without this the click on Convert opened the
//! files and discovered them again (at 10 MB ~70 ms of a 0.42 s conversion in Chromium, at
//! 1 GB several seconds: docs/PERFORMANCE.md). One slot: a new inspection replaces it, a
//! conversion takes it (used or not), so it never holds more than one set of files; until then
//! it holds their cached blocks (the block cache's budget at most: vfs/cache.rs), which the
//! conversion would read again anyway.

use std::cell::RefCell;

use crate::error::Result;
use crate::nsys::Export;
use crate::pipeline::Planned;

use super::source::{self, Input};

/// The exports of one inspection and its plan (none where discovery failed).
pub struct Inspected {
    /// The inputs' names and sizes, checked against the conversion's.
    inputs: Vec<(String, u64)>,
    exports: Vec<Export>,
    planned: Option<Planned>,
}

thread_local! {
    static KEPT: RefCell<Option<Inspected>> = const { RefCell::new(None) };
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
            exports,
            planned,
        }
    }
}

/// Keeps `inspected` for the next conversion, in place of what was kept before.
pub fn keep(inspected: Inspected) {
    KEPT.with(|k| *k.borrow_mut() = Some(inspected));
}

/// Drops what was kept (the page inspects other files, or asked not to keep them).
pub fn forget() {
    KEPT.with(|k| *k.borrow_mut() = None);
}

/// A conversion's exports, and the plan made for them where they are the inspection's.
pub struct Taken {
    pub exports: Vec<Export>,
    pub planned: Option<Planned>,
    /// Whether the exports are the inspection's (else opened for the conversion).
    pub kept: bool,
}

impl Taken {
    /// What the conversion takes from the inspection with `opts`, in words (for the worker's
    /// console, which the page's tests read).
    pub fn reused(&self, opts: &crate::Options) -> &'static str {
        match (&self.planned, self.kept) {
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
    if let Some(k) = KEPT.with(|k| k.borrow_mut().take()) {
        if inspected && k.inputs == identity(inputs) {
            return Ok(Taken {
                exports: k.exports,
                planned: k.planned,
                kept: true,
            });
        }
        // Dropped here, before the inputs are opened again.
    }
    Ok(Taken {
        exports: source::open_all(inputs)?,
        planned: None,
        kept: false,
    })
}
