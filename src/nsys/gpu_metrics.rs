//! Sampled GPU metrics (`--gpu-metrics-devices`): GPU_METRICS(timestamp, typeId, metricId, value),
//! named by TARGET_INFO_GPU_METRICS. The GPU is `typeId & 0xFF` (as nsys2prv reads it); every GPU
//! gets one metrics pseudo-thread, in the process that uses that GPU.

use super::context::{int, SourceCx};
use super::query::{CursorKind, Query};
use crate::engine::row::Fields;
use crate::error::Result;
use crate::model::{MetricSample, Names, Record};

pub const TABLE: &str = "GPU_METRICS";
pub const NAMES_TABLE: &str = "TARGET_INFO_GPU_METRICS";

/// GPU of a metric sample's typeId.
pub fn gpu_of(type_id: i64) -> u32 {
    (type_id & 0xFF) as u32
}

pub fn query(source: usize) -> Query {
    let sql = format!(
        "SELECT timestamp, typeId, metricId, value FROM {TABLE} \
         WHERE timestamp IS NOT NULL AND timestamp >= 0 ORDER BY timestamp, typeId, metricId"
    );
    Query {
        kind: CursorKind::GpuMetrics,
        source,
        sql,
        what: "GPU metrics",
        partitioned: None,
    }
}

pub fn decode<R: Fields + ?Sized>(
    row: &R,
    cx: &mut SourceCx,
    names: &mut Names,
) -> Result<Option<Record>> {
    let g = |i: usize, cx: &SourceCx| int(row, i, cx, TABLE);
    let (Some(ts), Some(type_id), Some(metric)) = (g(0, cx)?, g(1, cx)?, g(2, cx)?) else {
        return Ok(None);
    };
    let Some(&thread) = cx.metric_threads.get(&gpu_of(type_id)) else {
        return Ok(None);
    };
    let value = match g(3, cx)? {
        Some(v) if v >= 0 => v as u64,
        Some(_) => {
            // nsys occasionally writes negative counter values; a counter cannot be negative.
            cx.warn(format!("{TABLE}: negative sample values were written as 0"));
            0
        }
        None => return Ok(None),
    };
    let name = match cx.metric_names.get(&metric) {
        Some(&n) => n,
        None => {
            let n = names.intern(&format!("GPU metric {metric}"));
            cx.metric_names.insert(metric, n);
            n
        }
    };
    let metric_id = u32::try_from(metric)
        .map_err(|_| cx.bad(format!("{TABLE}: metricId {metric} out of range")))?;
    Ok(Some(Record::Metric(MetricSample {
        thread,
        time: cx.time(ts),
        metric_id,
        name,
        value,
    })))
}
