//! The threads of the families that annotate calls (CUDA events, pthread calls) where the
//! family of those calls is not converted and so has not found them.

use super::scans::{rows, scalar};
use super::Discovery;
use crate::error::Result;
use crate::nsys::{cuda_events, pthread, Export, Schema};
use crate::options::Family;

/// Each annotating family, the family whose calls it annotates, and its SQL.
type Sql = fn(&Schema) -> Option<String>;
const ANNOTATING: [(Family, Family, Sql, Sql); 2] = [
    (
        Family::CudaEvent,
        Family::CudaApi,
        cuda_events::presence_sql,
        cuda_events::threads_sql,
    ),
    (
        Family::Pthread,
        Family::Osrt,
        pthread::presence_sql,
        pthread::threads_sql,
    ),
];

/// Whether `family`, one that annotates calls, has a row in the export; `None` for the others.
pub(super) fn present(ex: &Export, family: Family) -> Option<Result<bool>> {
    let (_, _, presence, _) = ANNOTATING.iter().find(|(f, ..)| *f == family)?;
    Some(match presence(&ex.schema) {
        Some(sql) => scalar::<i64>(ex, family.name(), &sql, []).map(|r| r.is_some()),
        None => Ok(false),
    })
}

/// Adds the threads and the time span of the annotating families converted without the
/// family of their calls.
pub(super) fn find_threads(ex: &Export, d: &mut Discovery) -> Result<()> {
    for (family, calls, _, threads) in ANNOTATING {
        if !d.families.contains(&family) || d.families.contains(&calls) {
            continue;
        }
        let Some(sql) = threads(&ex.schema) else {
            continue;
        };
        let found = rows(ex, family.name(), &sql, [], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get::<_, i64>(3)?,
            ))
        })?;
        for (thread, lo, hi, n) in found {
            d.host_threads.entry(thread).or_default();
            d.record_estimate += n as u64;
            d.widen(lo, hi);
        }
    }
    Ok(())
}
