//! The scans of the sort-free readers that discovery makes in its own passes over the tables
//! (engine/prepass.rs), and what they found, kept until the cursors are opened.

use std::collections::BTreeSet;

use crate::engine::partitioned::{Spec, Survey};
use crate::engine::sort_keys::KeySpec;
use crate::nsys::discover::{FoundSortKeys, ReaderScans};
use crate::nsys::query::Partitioned;
use crate::nsys::{gpu, host, links, nvtx, sched, Export};
use crate::options::Family;

/// The surveys and sort keys discovery made (see [`early_scans`]), for the readers to take.
pub struct EarlySurveys {
    surveys: Vec<(Spec, Option<rusqlite::Result<Option<Survey>>>)>,
    keys: Option<(KeySpec, FoundSortKeys)>,
}

impl EarlySurveys {
    pub fn new(
        scans: EarlyScans,
        surveyed: Vec<rusqlite::Result<Option<Survey>>>,
        sort_keys: FoundSortKeys,
    ) -> Self {
        EarlySurveys {
            surveys: scans
                .specs
                .into_iter()
                .zip(surveyed.into_iter().map(Some))
                .collect(),
            keys: scans.keys.map(|spec| (spec, sort_keys)),
        }
    }

    /// The survey of `spec`, if discovery made it (each is taken once).
    pub(super) fn take(&mut self, spec: &Spec) -> Option<rusqlite::Result<Option<Survey>>> {
        self.surveys
            .iter_mut()
            .find(|(s, outcome)| outcome.is_some() && s == spec)
            .and_then(|(_, outcome)| outcome.take())
    }

    /// Forgets what was not taken: the readers are open (a spec is ~2 KiB an input).
    pub fn clear(&mut self) {
        self.surveys = Vec::new();
        self.keys = None;
    }

    /// The keys of `spec`, if discovery collected them (taken once).
    pub(super) fn take_keys(&mut self, spec: &KeySpec) -> FoundSortKeys {
        match &mut self.keys {
            Some((s, sort_keys)) if s == spec => sort_keys.take(),
            _ => None,
        }
    }
}

/// What the sort-free readers scan that discovery can scan in its own passes over the tables
/// (engine/prepass.rs): the partitioned readers' specs and the NVTX reader's sort keys that depend
/// on nothing discovery finds but the families present.
pub struct EarlyScans {
    pub specs: Vec<Spec>,
    pub keys: Option<KeySpec>,
}

impl EarlyScans {
    /// Nothing to scan early: a plan for no reading (`prvsight info`), or every family read
    /// through SQL's sort.
    pub const NONE: EarlyScans = EarlyScans {
        specs: Vec::new(),
        keys: None,
    };

    pub fn as_reader_scans(&self) -> ReaderScans<'_> {
        ReaderScans {
            specs: &self.specs,
            keys: self.keys.as_ref(),
        }
    }
}

/// The scans discovery can make for the readers ([`EarlyScans`]). They are built as
/// [`family_queries`](super::family_queries) builds them, so that [`Cursors::open`](super::Cursors::open)
/// finds them equal; one that is not (the host calls when nsys 2022's NVTX MPI ranges join them)
/// is surveyed then.
pub fn early_scans(ex: &Export, families: &BTreeSet<Family>, src: usize) -> EarlyScans {
    let queries = gpu::query(&ex.schema, families, src)
        .into_iter()
        .chain(host::query(&ex.schema, &BTreeSet::new(), families, src))
        .chain(links::query(&ex.schema, families, src))
        .chain(families.contains(&Family::Sched).then(|| sched::query(src)))
        .chain(
            families
                .contains(&Family::Nvtx)
                .then(|| nvtx::query(&ex.schema, src)),
        );
    let mut early = EarlyScans::NONE;
    for q in queries {
        match q.partitioned {
            Some(Partitioned::Rows(spec)) => early.specs.push(spec),
            // The calls' own survey only where the host calls' reader cannot feed the join
            // (Cursors::open asks for it then): most often it can.
            Some(Partitioned::Links { gpu, .. }) => early.specs.push(gpu),
            Some(Partitioned::Keys(keys)) => early.keys = Some(keys),
            None => {}
        }
    }
    early
}
