//! Where MPI begins and ends in an export: the end of its first `MPI_Init` (or
//! `MPI_Init_thread`) and the start of its last `MPI_Finalize`, from the MPI tables or, in
//! exports of nsys 2022 and older, from the NVTX `MPI` domain's ranges. The metrics measure
//! between them by default (TALP's window) and `--align mpi-init` aligns clocks on the first.

use rusqlite::OptionalExtension;

use super::Export;
use crate::error::{Error, Result};

/// Raw timestamps (this export's clock) of the MPI bounds it holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MpiBounds {
    pub init_end: Option<i64>,
    pub finalize_start: Option<i64>,
}

/// The bounds of `ex`; `nvtx`: also look at NVTX ranges (the export has an NVTX `MPI` domain).
pub fn mpi_bounds(ex: &Export, nvtx: bool) -> Result<MpiBounds> {
    Ok(MpiBounds {
        init_end: first(ex, nvtx, &["MPI_Init", "MPI_Init_thread"], "end", "start")?,
        finalize_start: first(ex, nvtx, &["MPI_Finalize"], "start", "start DESC")?,
    })
}

/// `what` of the first call named one of `names` in the order `order`.
fn first(ex: &Export, nvtx: bool, names: &[&str], what: &str, order: &str) -> Result<Option<i64>> {
    let s = &ex.schema;
    let st = &s.strings_table;
    let list = names
        .iter()
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(", ");
    let mut sql = Vec::new();
    if s.has_columns("MPI_OTHER_EVENTS", &["start", "end", "textId"]) {
        sql.push(format!(
            "SELECT e.start, e.end FROM MPI_OTHER_EVENTS e JOIN {st} n ON n.id = e.textId WHERE n.value IN ({list})"
        ));
    }
    if nvtx
        && s.has_columns(
            "NVTX_EVENTS",
            &["start", "end", "textId", "text", "eventType"],
        )
    {
        sql.push(format!(
            "SELECT e.start, e.end FROM NVTX_EVENTS e LEFT JOIN {st} n ON n.id = e.textId \
             WHERE e.eventType = 59 AND COALESCE(e.text, n.value) IN ({list})"
        ));
    }
    if sql.is_empty() {
        return Ok(None);
    }
    let q = format!(
        "SELECT {what} FROM ({}) WHERE start IS NOT NULL AND end IS NOT NULL ORDER BY {order} LIMIT 1",
        sql.join(" UNION ALL ")
    );
    ex.conn
        .query_row(&q, [], |r| r.get::<_, i64>(0))
        .optional()
        .map_err(|e| Error::read(&ex.label, names[0], e))
}
