//! NIC and InfiniBand metrics (`--nic-metrics`): NET_NIC_METRIC(start, globalId, metricsListId,
//! metricsIdx, value) samples, named by TARGET_INFO_NETWORK_METRICS. As nsys2prv 0.6 lays them
//! out, each NIC (each `globalId`, mapped to its `nicId` by NIC_ID_MAP and described by
//! TARGET_INFO_NIC_INFO) gets a thread of its own, whose samples are instants on it.

use rusqlite::types::ValueRef;

use super::context::{int, text, SourceCx};
use super::query::{CursorKind, Query};
use super::Schema;
use crate::engine::row::Fields;
use crate::error::Result;
use crate::model::{Annotation, AnnotationKind, NicSample, Record};

pub const TABLE: &str = "NET_NIC_METRIC";
pub const METRIC_NAMES: &str = "TARGET_INFO_NETWORK_METRICS";
pub const ID_MAP: &str = "NIC_ID_MAP";
pub const NIC_INFO: &str = "TARGET_INFO_NIC_INFO";
pub const DEVICE_NAMES: &str = "ENUM_NET_DEVICE_ID";
const COLUMNS: [&str; 4] = ["start", "globalId", "metricsIdx", "value"];
const WHAT: &str = "NIC metrics";

/// What discovery knows of a NIC with samples (its Paraver thread's name).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NicFound {
    pub nic_id: Option<i64>,
    pub name: Option<String>,
    pub device: Option<String>,
}

fn selected(schema: &Schema, outputs: &str) -> Option<String> {
    schema.has_columns(TABLE, &COLUMNS).then(|| {
        format!(
            "SELECT {outputs} FROM {TABLE} AS n WHERE n.start IS NOT NULL \
             AND n.globalId IS NOT NULL AND n.metricsIdx IS NOT NULL AND n.value IS NOT NULL"
        )
    })
}

/// SQL giving a row where the export holds a NIC sample (the family is present).
pub fn presence_sql(schema: &Schema) -> Option<String> {
    selected(schema, "1").map(|q| format!("{q} LIMIT 1"))
}

/// SQL giving per NIC (`globalId`) its first and last sample time and their count.
pub fn nics_sql(schema: &Schema) -> Option<String> {
    let outputs = "n.globalId, MIN(n.start), MAX(n.start), COUNT(*)";
    selected(schema, outputs).map(|q| format!("{q} GROUP BY n.globalId"))
}

/// SQL giving, per `globalId`, its `nicId`, interface name and device label (NULL: unknown).
pub fn names_sql(schema: &Schema) -> Option<String> {
    if !schema.has_columns(ID_MAP, &["nicId", "globalId"]) {
        return None;
    }
    let info = schema.has_columns(NIC_INFO, &["nicId", "name"]);
    let device = info
        && schema.has_column(NIC_INFO, "deviceId")
        && schema.has_columns(DEVICE_NAMES, &["id", "label"]);
    let name = match info {
        true => format!("(SELECT i.name FROM {NIC_INFO} AS i WHERE i.nicId = m.nicId LIMIT 1)"),
        false => "NULL".to_owned(),
    };
    let label = match device {
        true => format!(
            "(SELECT d.label FROM {NIC_INFO} AS i JOIN {DEVICE_NAMES} AS d \
             ON d.id = i.deviceId WHERE i.nicId = m.nicId LIMIT 1)"
        ),
        false => "NULL".to_owned(),
    };
    Some(format!(
        "SELECT m.globalId, MIN(m.nicId), {name}, {label} FROM {ID_MAP} AS m GROUP BY m.globalId"
    ))
}

/// A metric's `name [unit]`, where the export names it.
fn metric_name(schema: &Schema) -> String {
    if !schema.has_columns(METRIC_NAMES, &["metricsIdx", "name"]) {
        return "NULL".to_owned();
    }
    let unit = match schema.has_column(METRIC_NAMES, "unit") {
        true => "CASE WHEN m.unit IS NULL OR m.unit = '' THEN '' ELSE ' [' || m.unit || ']' END",
        false => "''",
    };
    let list = "metricsListId";
    let same_list = match schema.has_column(TABLE, list) && schema.has_column(METRIC_NAMES, list) {
        true => " AND m.metricsListId = n.metricsListId",
        false => "",
    };
    format!(
        "(SELECT m.name || {unit} FROM {METRIC_NAMES} AS m \
         WHERE m.metricsIdx = n.metricsIdx{same_list} LIMIT 1)"
    )
}

pub fn query(schema: &Schema, source: usize) -> Option<Query> {
    let outputs = format!(
        "n.start, n.globalId, n.metricsIdx, n.value, {}",
        metric_name(schema)
    );
    let sql = selected(schema, &outputs)?;
    Some(Query {
        kind: CursorKind::Nic,
        source,
        sql: format!("{sql} ORDER BY n.start, n.globalId, n.metricsIdx, n.rowid"),
        what: WHAT,
        partitioned: None,
    })
}

/// A sample's value: counters are integers, some exports write them as reals.
fn value<R: Fields + ?Sized>(row: &R, cx: &mut SourceCx) -> Result<Option<u64>> {
    let v = match row.value(3) {
        Ok(ValueRef::Real(r)) if r.is_finite() => Some(r.round() as i64),
        _ => int(row, 3, cx, WHAT)?,
    };
    Ok(v.map(|v| u64::try_from(v).unwrap_or(0)))
}

pub fn decode<R: Fields + ?Sized>(row: &R, cx: &mut SourceCx) -> Result<Option<Record>> {
    let g = |i: usize, cx: &SourceCx| int(row, i, cx, WHAT);
    let (Some(start), Some(global_id), Some(idx)) = (g(0, cx)?, g(1, cx)?, g(2, cx)?) else {
        return Ok(None);
    };
    // A NIC another input of the same host has already laid out has no thread here.
    let Some(&thread) = cx.nic_threads.get(&global_id) else {
        return Ok(None);
    };
    let Some(metric) = u32::try_from(idx).ok().filter(|i| *i < NIC_METRIC_IDS) else {
        cx.warn(format!(
            "{WHAT}: samples of a metricsIdx out of range were left out"
        ));
        return Ok(None);
    };
    let Some(value) = value(row, cx)? else {
        return Ok(None);
    };
    let name = text(row, 4, cx, WHAT)?.unwrap_or_else(|| format!("NIC metric {metric}"));
    let time = cx.time(start);
    Ok(Some(Record::Annotation(Annotation::new(
        thread,
        (time, time),
        name,
        AnnotationKind::NicMetric(NicSample { metric, value }),
    ))))
}

/// Metric indexes that fit under the NIC metrics' Paraver types (66700000 + index).
const NIC_METRIC_IDS: u32 = 100_000;
