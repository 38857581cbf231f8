//! The event types a trace uses and the values seen of each (the .pcf lists them).

use crate::{FastMap, FastSet};

use super::super::line::TypeText;

/// Where an event type's value labels come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ValueLabels {
    /// Values are interned names (value = name id + offset).
    Names,
    /// Raw numbers, no labels.
    Numeric,
    /// Fixed labels of memory operations / memory kinds.
    MemoryOps,
    MemKinds,
    /// CPU number + 1.
    Cpu,
    /// ENUM_OPENACC_EVENT_KIND id + 1.
    AccKind,
    /// Fixed NCCL code tables (model::nccl).
    NcclCollective,
    NcclAlgorithm,
    NcclProtocol,
    NcclDatatype,
    NcclOp,
    /// Extrae MPI values (known calls) or name ids past [`crate::paraver::mpi::UNKNOWN_MPI_BASE`].
    Mpi,
    /// A fixed table of (value, label) (the OpenMP kinds of paraver/annotations.rs).
    Fixed(&'static [(u64, &'static str)]),
    /// Strings of NVTX payloads, interned by the writer (prv/payloads.rs).
    PayloadStrings,
}

/// An event type the trace uses: how its values are labelled (as its first event said), the
/// values seen, and its `:type:` as lines write it — formatted once: an interval's two lines
/// write every type twice, which was about half of all the numbers formatted.
pub(crate) struct UsedType {
    pub labels: ValueLabels,
    pub values: SeenValues,
    pub(super) text: TypeText,
    /// Type:value pairs written with it (for [`super::ParaverWriter::written`]).
    pub(super) pairs: u64,
}

/// The event types a trace uses, looked up for every event written: a small table of the
/// types used last, by type modulo its size, in front of the map (an interval notes its types
/// on every line, a kernel's a dozen, the same ones each time: hashing and probing the map
/// was most of what noting cost).
pub(crate) struct UsedTypes {
    /// In the order of first use.
    types: Vec<(u32, UsedType)>,
    index: FastMap<u32, u32>,
    /// By `ty % RECENT`: a type and its index in `types` + 1 (0: none).
    recent: [(u32, u32); RECENT],
}

/// Slots of [`UsedTypes::recent`].
const RECENT: usize = 64;

impl Default for UsedTypes {
    fn default() -> Self {
        UsedTypes {
            types: Vec::new(),
            index: FastMap::default(),
            recent: [(0, 0); RECENT],
        }
    }
}

impl UsedTypes {
    /// Type `ty`, added as `new` gives it where it is not used yet.
    #[inline]
    pub(super) fn get_or_add(&mut self, ty: u32, new: impl FnOnce() -> UsedType) -> &mut UsedType {
        let slot = ty as usize % RECENT;
        let i = match self.recent[slot] {
            (t, i) if t == ty && i != 0 => i - 1,
            _ => {
                let types = &mut self.types;
                let i = *self.index.entry(ty).or_insert_with(|| {
                    types.push((ty, new()));
                    u32::try_from(types.len() - 1).expect("fewer than 2^32 event types")
                });
                self.recent[slot] = (ty, i + 1);
                i
            }
        };
        &mut self.types[i as usize].1
    }

    /// One pair of `ty` counted as written will not be (an end line a later region took over).
    pub(super) fn unwrite(&mut self, ty: u32) {
        if let Some(&i) = self.index.get(&ty) {
            let e = &mut self.types[i as usize].1;
            e.pairs = e.pairs.saturating_sub(1);
        }
    }

    /// Every type used, with what it is (in the order of first use).
    pub fn iter(&self) -> impl Iterator<Item = &(u32, UsedType)> {
        self.types.iter()
    }
}

/// The values of a labelled event type seen so far (its .pcf lists them). Values below
/// [`DENSE_VALUES`] (name ids and codes: nearly all) are a bit each, the rest in a set: a hash
/// set insert per labelled event cost more.
#[derive(Default)]
pub(crate) struct SeenValues {
    bits: Vec<u64>,
    large: FastSet<u64>,
}

/// Values kept as bits: at most 128 KiB of bits per event type.
const DENSE_VALUES: u64 = 1 << 20;

impl SeenValues {
    #[inline]
    pub(super) fn insert(&mut self, v: u64) {
        if v < DENSE_VALUES {
            let word = (v / 64) as usize;
            if word >= self.bits.len() {
                self.bits.resize(word + 1, 0);
            }
            self.bits[word] |= 1 << (v % 64);
        } else {
            self.large.insert(v);
        }
    }

    /// Every value seen, in increasing order.
    pub fn sorted(&self) -> Vec<u64> {
        let mut values = Vec::new();
        for (w, &word) in self.bits.iter().enumerate() {
            let mut rest = word;
            while rest != 0 {
                values.push(w as u64 * 64 + u64::from(rest.trailing_zeros()));
                rest &= rest - 1;
            }
        }
        let mut large: Vec<u64> = self.large.iter().copied().collect();
        large.sort_unstable();
        values.extend(large);
        values
    }
}

#[cfg(test)]
mod tests {
    use super::{SeenValues, DENSE_VALUES};

    #[test]
    fn seen_values_come_back_once_each_in_order() {
        let mut seen = SeenValues::default();
        let values = [
            DENSE_VALUES,
            5,
            u64::MAX,
            64,
            0,
            63,
            DENSE_VALUES - 1,
            5,
            1 << 53,
            65,
            u64::MAX,
            DENSE_VALUES,
        ];
        for v in values {
            seen.insert(v);
        }
        let want: std::collections::BTreeSet<u64> = values.into_iter().collect();
        assert_eq!(seen.sorted(), want.into_iter().collect::<Vec<_>>());
        assert_eq!(SeenValues::default().sorted(), Vec::<u64>::new());
    }
}
