//! What a family module decodes with: the decoding context of one export ([`SourceCx`]) and
//! the typed reads of a row's columns.

use std::collections::BTreeMap;

use rusqlite::types::ValueRef;

use super::ids::StreamKey;
use super::StringCache;
use crate::engine::row::Fields;
use crate::error::{Error, Result};
use crate::model::{HostActivity, KernelClass, NameId, Ns, ThreadId};
use crate::FastMap;

/// A send's (rank, peer, tag): the group MPI's non-overtaking rule orders.
pub type SendKey = (Option<i64>, Option<i64>, Option<i64>);

/// Everything needed to turn one export's rows into model records.
pub struct SourceCx<'c> {
    pub file: String,
    /// Added to a raw timestamp to get trace time (clock offset minus origin).
    pub shift: i64,
    /// End of the trace (trace time): unterminated ranges close here.
    pub end_time: Ns,
    pub threads: FastMap<i64, ThreadId>,
    /// Stream key → (thread, device index).
    pub streams: FastMap<StreamKey, (ThreadId, usize)>,
    /// (globalPid key, domainId) → global domain index.
    pub domains: FastMap<(i64, i64), u32>,
    /// (globalPid key, category id) → category name.
    pub categories: FastMap<(i64, i64), NameId>,
    pub strings: StringCache<'c>,
    /// Per CUDA call name (indexed by its [`NameId`]): what the thread does inside the call,
    /// worked out once per name (a vector: cheaper per call than a hash map).
    pub activity_of: Vec<Option<HostActivity>>,
    /// The same for the OS runtime's calls (a name's activity is its family's).
    pub os_activity_of: Vec<Option<HostActivity>>,
    /// Per kernel name (indexed by its [`NameId`]): its class, with the short name it was
    /// told from (a class is worked out from both names: kernel_class).
    pub kernel_classes: Vec<Option<(NameId, KernelClass)>>,
    /// GPU (CUDA device id) → its metrics thread; metric id → metric name.
    pub metric_threads: FastMap<u32, ThreadId>,
    pub metric_names: FastMap<i64, NameId>,
    /// MPI rank → index of the input that holds it (all inputs; for message matching), one
    /// map for every input (a copy each grew with the square of the ranks).
    pub rank_sources: std::sync::Arc<FastMap<u32, usize>>,
    /// Lookup of a receive in this input's receive index (see mpi_p2p), when built.
    pub recv_lookup: Option<super::mpi_p2p::ReceiveLookup<'c>>,
    /// Sends read so far per (rank, peer, tag): the next one's number (see mpi_p2p).
    pub sends: FastMap<SendKey, i64>,
    /// Message → number of occurrences, reported once at the end.
    pub warnings: BTreeMap<String, u64>,
    /// Device memory in use per (globalPid key, CUDA device), as GPU memory usage rows come.
    pub gpu_memory_in_use: FastMap<(i64, u32), u64>,
    /// CPU → globalTid of the thread last scheduled in on it, as CPU counter rows come.
    pub cpu_threads: FastMap<i64, Option<i64>>,
    /// NIC (`globalId` of its samples) → its thread.
    pub nic_threads: FastMap<i64, ThreadId>,
}

impl SourceCx<'_> {
    /// Context of one export, before its family-specific parts are filled in.
    pub fn new<'c>(
        file: String,
        shift: i64,
        end_time: Ns,
        strings: StringCache<'c>,
    ) -> SourceCx<'c> {
        SourceCx {
            file,
            shift,
            end_time,
            threads: FastMap::default(),
            streams: FastMap::default(),
            domains: FastMap::default(),
            categories: FastMap::default(),
            strings,
            activity_of: Vec::new(),
            os_activity_of: Vec::new(),
            kernel_classes: Vec::new(),
            rank_sources: Default::default(),
            metric_threads: FastMap::default(),
            metric_names: FastMap::default(),
            recv_lookup: None,
            sends: FastMap::default(),
            warnings: BTreeMap::new(),
            gpu_memory_in_use: FastMap::default(),
            cpu_threads: FastMap::default(),
            nic_threads: FastMap::default(),
        }
    }

    /// Converts a raw timestamp of this export to trace time.
    pub fn time(&self, raw: i64) -> Ns {
        (raw.saturating_add(self.shift)).clamp(0, self.end_time as i64) as Ns
    }

    /// An interval in trace time; a negative duration becomes zero (with a warning).
    pub fn interval(&mut self, table: &str, start: i64, end: Option<i64>) -> (Ns, Ns) {
        let s = self.time(start);
        match end {
            Some(e) if e >= start => (s, self.time(e)),
            Some(_) => {
                self.warn(format!(
                    "{table}: rows whose end is before their start were given zero duration"
                ));
                (s, s)
            }
            None => {
                self.warn(format!(
                    "{table}: rows without an end were given zero duration"
                ));
                (s, s)
            }
        }
    }

    pub fn warn(&mut self, msg: String) {
        *self.warnings.entry(msg).or_insert(0) += 1;
    }

    pub fn thread(&self, table: &str, global_tid: i64) -> Result<ThreadId> {
        self.threads.get(&global_tid).copied().ok_or_else(|| Error::BadData {
            file: self.file.clone(),
            why: format!("table {table}: thread {global_tid:#x} appeared after discovery (the file changed while reading?)"),
        })
    }

    pub fn bad(&self, why: String) -> Error {
        Error::BadData {
            file: self.file.clone(),
            why,
        }
    }
}

/// Slot `at` of a cache indexed by a small number (a name's id, a resource's index), the
/// cache grown to hold it: what a decoder works out once per name or per resource.
#[inline]
pub fn grown_slot<T: Clone>(cache: &mut Vec<Option<T>>, at: usize) -> &mut Option<T> {
    if cache.len() <= at {
        cache.resize(at + 1, None);
    }
    &mut cache[at]
}

/// Reads column `i` as an optional integer, naming the column if its type is wrong.
///
/// Inlined for the integers and NULLs that nearly every column holds (into each call site: as
/// a call, its large `Result` went back through memory, 32 instructions a column), the rest out
/// of line.
#[inline(always)]
pub fn int<R: Fields + ?Sized>(
    row: &R,
    i: usize,
    cx: &SourceCx,
    what: &str,
) -> Result<Option<i64>> {
    match row.value(i) {
        Ok(ValueRef::Null) => Ok(None),
        Ok(ValueRef::Integer(v)) => Ok(Some(v)),
        other => int_otherwise(other, row, i, cx, what),
    }
}

/// [`int`] for a value that is neither an integer nor NULL (or could not be read).
#[cold]
#[inline(never)]
fn int_otherwise<R: Fields + ?Sized>(
    value: rusqlite::Result<ValueRef<'_>>,
    row: &R,
    i: usize,
    cx: &SourceCx,
    what: &str,
) -> Result<Option<i64>> {
    match value {
        Ok(ValueRef::Null) => Ok(None),
        Ok(ValueRef::Integer(v)) => Ok(Some(v)),
        Ok(ValueRef::Real(v)) if v.fract() == 0.0 && v.abs() < 9.0e18 => Ok(Some(v as i64)),
        Ok(other) => Err(cx.bad(format!(
            "{what}: column {} holds {:?}, expected an integer",
            row.column_name(i),
            other.data_type()
        ))),
        Err(e) => Err(Error::read(&cx.file, what, e)),
    }
}

/// Reads column `i` as optional text.
pub fn text<R: Fields + ?Sized>(
    row: &R,
    i: usize,
    cx: &SourceCx,
    what: &str,
) -> Result<Option<String>> {
    match row.value(i) {
        Ok(ValueRef::Null) => Ok(None),
        Ok(ValueRef::Text(t)) => Ok(Some(String::from_utf8_lossy(t).into_owned())),
        Ok(ValueRef::Integer(v)) => Ok(Some(v.to_string())),
        Ok(ValueRef::Real(v)) => Ok(Some(v.to_string())),
        Ok(ValueRef::Blob(_)) => Ok(None),
        Err(e) => Err(Error::read(&cx.file, what, e)),
    }
}

/// Non-negative integer that fits `u32`, else 0 (launch parameters, kinds).
pub fn u32_or_0(v: Option<i64>) -> u32 {
    v.and_then(|x| u32::try_from(x).ok()).unwrap_or(0)
}

pub fn u64_or_0(v: Option<i64>) -> u64 {
    v.and_then(|x| u64::try_from(x).ok()).unwrap_or(0)
}
