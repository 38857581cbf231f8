//! The scans of the sort-free readers that discovery makes in its own passes over the tables
//! (engine/prepass.rs), and what they found, kept until the cursors are opened.

use std::collections::BTreeSet;

use crate::engine::partitioned::{Spec, Survey};
use crate::engine::sort_keys::KeySpec;
use crate::nsys::discover::{FoundSortKeys, ReaderScans};
use crate::nsys::query::Partitioned;
use crate::nsys::{gpu, host, links, nvtx, sched, Export};
use crate::options::Family;

/// The surveys and sort keys discovery made (see [`early_scans`]), for the readers to take,
/// each under its spec's [`SpecKey`].
pub struct EarlySurveys {
    surveys: Vec<(SpecKey, Option<rusqlite::Result<Option<Survey>>>)>,
    keys: Option<(SpecKey, FoundSortKeys)>,
}

/// What tells a reader's spec from another: two hashes of its `Debug` text (every field, so
/// specs equal as their text is) and the text's length. Kept instead of the spec, whose small
/// strings held ~12 KiB an input until the input's readers opened, as many inputs wait for
/// their group's (pipeline/parts/groups.rs).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct SpecKey(u64, u64, usize);

impl SpecKey {
    pub fn of(spec: &impl std::fmt::Debug) -> SpecKey {
        use std::hash::BuildHasher;
        let text = format!("{spec:?}");
        let sip = std::hash::BuildHasherDefault::<std::hash::DefaultHasher>::default();
        let fold = foldhash::fast::FixedState::with_seed(0x9e37_79b9_7f4a_7c15);
        SpecKey(sip.hash_one(&text), fold.hash_one(&text), text.len())
    }
}

impl EarlySurveys {
    pub fn new(
        scans: EarlyScans,
        surveyed: Vec<rusqlite::Result<Option<Survey>>>,
        sort_keys: FoundSortKeys,
    ) -> Self {
        EarlySurveys {
            surveys: (scans.specs.iter().map(SpecKey::of))
                .zip(surveyed.into_iter().map(Some))
                .collect(),
            keys: scans.keys.map(|spec| (SpecKey::of(&spec), sort_keys)),
        }
    }

    /// The survey of `spec`, if discovery made it (each is taken once).
    pub(super) fn take(&mut self, spec: &Spec) -> Option<rusqlite::Result<Option<Survey>>> {
        let key = SpecKey::of(spec);
        self.surveys
            .iter_mut()
            .find(|(k, outcome)| outcome.is_some() && *k == key)
            .and_then(|(_, outcome)| outcome.take())
    }

    /// Forgets what was not taken: the input's readers are open.
    pub fn clear(&mut self) {
        self.surveys = Vec::new();
        self.keys = None;
    }

    /// The keys of `spec`, if discovery collected them (taken once).
    pub(super) fn take_keys(&mut self, spec: &KeySpec) -> FoundSortKeys {
        match &mut self.keys {
            Some((k, sort_keys)) if *k == SpecKey::of(spec) => sort_keys.take(),
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
