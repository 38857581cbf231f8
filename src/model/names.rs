//! Interned strings. Every name (kernel, API call, NVTX message, domain, memcpy kind) becomes a
//! small integer once, so records stay small and sinks compare integers, not strings. Memory grows
//! with the number of *distinct* names, never with the number of records.

use crate::FastMap;

/// Index of an interned name; ids start at 1 so that 0 can mean "none" (Paraver's End value).
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    serde::Serialize,
    serde::Deserialize,
)]
pub struct NameId(pub u32);

#[derive(Default, Debug)]
pub struct Names {
    strings: Vec<String>,
    index: FastMap<String, NameId>,
}

impl Names {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn intern(&mut self, s: &str) -> NameId {
        if let Some(&id) = self.index.get(s) {
            return id;
        }
        self.strings.push(s.to_owned());
        let id = NameId(self.strings.len() as u32);
        self.index.insert(s.to_owned(), id);
        id
    }

    pub fn get(&self, id: NameId) -> &str {
        &self.strings[id.0 as usize - 1]
    }

    pub fn lookup(&self, s: &str) -> Option<NameId> {
        self.index.get(s).copied()
    }

    pub fn len(&self) -> usize {
        self.strings.len()
    }

    /// The names interned after the first `n` (to bring a copy of this table up to date).
    pub fn since(&self, n: usize) -> &[String] {
        &self.strings[n.min(self.strings.len())..]
    }

    /// Appends names taken from another table's [`since`](Self::since): a copy that received every
    /// addition in order gives every name the same id as the original.
    pub fn extend_from(&mut self, added: &[String]) {
        for s in added {
            self.intern(s);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.strings.is_empty()
    }
}
