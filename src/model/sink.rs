//! The sink side of the pipeline (idea from ripgrep's `Sink`): the reader pushes each record once,
//! in time order, to every sink; a sink implements only what it needs. Push keeps one pass over the
//! export for all outputs, and lets each sink keep just the state it needs (open ranges, unions).

use crate::error::Result;
use crate::model::{Names, Record, TraceInfo};

/// How a trace-writing sink should cut its output (see `Options::chop` / `min_duration`).
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct OutputCut {
    /// Keep [start, end] of the timeline (ns), rebased to 0.
    pub window: Option<(crate::model::Ns, crate::model::Ns)>,
    /// Per family, regions shorter than this leave no events.
    pub min_duration: std::collections::BTreeMap<crate::options::Family, u64>,
    /// NVTX domains whose payload fields become events (`Options::nvtx_payloads`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvtx_payloads: Option<crate::nvtx_config::NvtxConfig>,
}

pub trait Sink {
    /// Called once before [`begin`](Self::begin) by sinks that write a trace; others ignore it.
    fn set_output_cut(&mut self, _cut: &OutputCut) {}

    /// Called once, before any record, when all resources and the time span are known.
    fn begin(&mut self, _trace: &TraceInfo, _names: &Names) -> Result<()> {
        Ok(())
    }
    /// Called for every record, in non-decreasing [`Record::time`] order.
    fn record(&mut self, rec: &Record, names: &Names) -> Result<()>;
    /// Threads of its own this sink keeps busy while the records come (a trace's writing or
    /// compressing thread), natively: the pass starts helper threads for its reading only
    /// where the machine has cores for these too (`options::ReadHelpers`).
    fn threads(&self) -> usize {
        0
    }
    /// Called once after the last record.
    fn finish(&mut self, _trace: &TraceInfo, _names: &Names) -> Result<()> {
        Ok(())
    }
}
