//! pthread calls (OSRT_API rows whose name starts with `pthread`, as nsys2prv 0.6 picks them):
//! the same rows the OS runtime family converts, written again under a type of their own so
//! that Paraver's pthread views (mutex contention, thread creation) find them.

use super::context::{int, SourceCx};
use super::host::osrt_filter;
use super::query::{CursorKind, Query};
use super::Schema;
use crate::engine::row::Fields;
use crate::error::Result;
use crate::model::{Annotation, AnnotationKind, Record};

pub const TABLE: &str = "OSRT_API";
const COLUMNS: [&str; 4] = ["start", "end", "globalTid", "nameId"];
const WHAT: &str = "pthread calls";

/// The pthread rows (the OS runtime family's filter, and the name test).
fn selected(schema: &Schema, outputs: &str) -> Option<String> {
    schema.has_columns(TABLE, &COLUMNS).then(|| {
        let strings = &schema.strings_table;
        let osrt = osrt_filter(schema).map(|c| format!(" AND {}", c.sql()));
        format!(
            "SELECT {outputs} FROM {TABLE} WHERE start IS NOT NULL AND globalTid IS NOT NULL{} \
             AND nameId IN (SELECT id FROM {strings} WHERE value LIKE 'pthread%')",
            osrt.unwrap_or_default()
        )
    })
}

/// SQL giving a row where the export holds a pthread call (the family is present).
pub fn presence_sql(schema: &Schema) -> Option<String> {
    selected(schema, "1").map(|q| format!("{q} LIMIT 1"))
}

/// SQL giving per thread of the calls their first start, last end and count (discovery, where
/// the OS runtime family is not converted and so does not find them).
pub fn threads_sql(schema: &Schema) -> Option<String> {
    let per_thread = "globalTid, MIN(start), MAX(COALESCE(end, start)), COUNT(*)";
    selected(schema, per_thread).map(|q| format!("{q} GROUP BY globalTid"))
}

pub fn query(schema: &Schema, source: usize) -> Option<Query> {
    let sql = selected(schema, "start, end, globalTid, nameId")?;
    Some(Query {
        kind: CursorKind::Pthread,
        source,
        sql: format!("{sql} ORDER BY start, rowid"),
        what: WHAT,
        partitioned: None,
    })
}

/// Decodes a row; its call's name is interned as it is handed out ([`Annotation::resolve`]).
pub fn decode<R: Fields + ?Sized>(row: &R, cx: &mut SourceCx) -> Result<Option<Record>> {
    let g = |i: usize, cx: &SourceCx| int(row, i, cx, WHAT);
    let (Some(start), Some(gtid)) = (g(0, cx)?, g(2, cx)?) else {
        return Ok(None);
    };
    let span = cx.interval(TABLE, start, g(1, cx)?);
    let thread = cx.thread(TABLE, gtid)?;
    let call = match g(3, cx)? {
        Some(id) => cx
            .strings
            .text(id)?
            .unwrap_or_else(|| format!("<unknown string {id}>")),
        None => "<unnamed call>".to_owned(),
    };
    Ok(Some(Record::Annotation(Annotation::new(
        thread,
        span,
        call,
        AnnotationKind::Pthread,
    ))))
}
