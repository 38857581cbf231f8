//! The resources of the families that annotate others' (model/annotation.rs): the threads of
//! the calls CUDA events and pthread calls sit on, where the family of those calls is not
//! converted and so has not found them; the GPU streams GPU memory usage goes to; the time
//! span of CPU counter samples (they go to threads other families found); the NICs with metrics.

use super::scans::{rows, scalar};
use super::Discovery;
use crate::error::Result;
use crate::nsys::ids::{pid_of, process_key};
use crate::nsys::{cpu_counters, cuda_events, gpu_memory, nic, openmp, pthread, Export, Schema};
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

/// Whether `family`, one that annotates others', has a row in the export; `None` for the others.
pub(super) fn present(ex: &Export, family: Family) -> Option<Result<bool>> {
    let presence = match family {
        Family::GpuMemory => gpu_memory::presence_sql,
        Family::OpenMp => openmp::presence_sql,
        Family::CpuCounters => cpu_counters::presence_sql,
        Family::Nic => nic::presence_sql,
        _ => ANNOTATING.iter().find(|(f, ..)| *f == family)?.2,
    };
    Some(match presence(&ex.schema) {
        Some(sql) => scalar::<i64>(ex, family.name(), &sql, []).map(|r| r.is_some()),
        None => Ok(false),
    })
}

/// The keys of `sql`'s rows (key, first time, last time, count), their times and counts added
/// to `d`'s span and estimate.
fn spans(ex: &Export, family: Family, sql: &str, d: &mut Discovery) -> Result<Vec<i64>> {
    let found = rows(ex, family.name(), sql, [], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get(1)?,
            r.get(2)?,
            r.get::<_, i64>(3)?,
        ))
    })?;
    let mut keys = Vec::with_capacity(found.len());
    for (key, lo, hi, n) in found {
        d.record_estimate += n as u64;
        d.widen(lo, hi);
        keys.push(key);
    }
    Ok(keys)
}

/// Adds the threads and the time span of the annotating families converted without the
/// family of their calls, and of OpenMP regions (which annotate nothing else).
pub(super) fn find_threads(ex: &Export, d: &mut Discovery) -> Result<()> {
    let openmp = (Family::OpenMp, None, openmp::threads_sql as Sql);
    let annotating = ANNOTATING.map(|(f, calls, _, threads)| (f, Some(calls), threads));
    for (family, calls, threads) in annotating.into_iter().chain([openmp]) {
        let found_by_calls = calls.is_some_and(|c| d.families.contains(&c));
        if !d.families.contains(&family) || found_by_calls {
            continue;
        }
        let Some(sql) = threads(&ex.schema) else {
            continue;
        };
        for thread in spans(ex, family, &sql, d)? {
            d.host_threads.entry(thread).or_default();
        }
    }
    Ok(())
}

/// Adds the GPU streams that GPU memory usage goes to: each row's stream, and for the rows with
/// none, a stream 0 of that GPU where the process has no stream there. A stream found only here
/// is idle all along (its first busy time past the end).
pub(super) fn find_memory_streams(ex: &Export, d: &mut Discovery) -> Result<()> {
    if !d.families.contains(&Family::GpuMemory) {
        return Ok(());
    }
    let Some(sql) = gpu_memory::streams_sql(&ex.schema) else {
        return Ok(());
    };
    type Group = (i64, i64, i64, Option<i64>, Option<i64>, Option<i64>, i64);
    let groups: Vec<Group> = rows(ex, Family::GpuMemory.name(), &sql, [], |r| {
        Ok((
            r.get(0)?,
            r.get(1)?,
            r.get(2)?,
            r.get(3)?,
            r.get(4)?,
            r.get(5)?,
            r.get(6)?,
        ))
    })?;
    let as_u32 = |v: i64| u32::try_from(v).unwrap_or(0);
    // Rows with a stream first: a process's rows without one go to those.
    let (with, without): (Vec<&Group>, Vec<&Group>) = groups.iter().partition(|g| g.3.is_some());
    for &&(gpid, dev, ctx, stream, lo, hi, n) in with.iter().chain(&without) {
        let (pkey, device) = (process_key(gpid), as_u32(dev));
        let has_one = d.streams.keys().any(|k| k.0 == pkey && k.1 == device);
        if stream.is_some() || !has_one {
            let key = (pkey, device, as_u32(ctx), stream.map_or(0, as_u32));
            d.streams.entry(key).or_insert(i64::MAX);
        }
        d.devices.entry(device).or_insert(None);
        d.processes
            .entry(pkey)
            .or_insert((pid_of(gpid), String::new()));
        d.record_estimate += n as u64;
        d.widen(lo, hi);
    }
    Ok(())
}

/// Widens the span by the CPU counter samples' and counts them (they add no thread: where no
/// other family found one, the family is left out).
pub(super) fn find_counter_span(ex: &Export, d: &mut Discovery) -> Result<()> {
    let family = Family::CpuCounters;
    if d.host_threads.is_empty() {
        d.families.remove(&family);
    }
    let Some(sql) = d
        .families
        .contains(&family)
        .then(|| cpu_counters::span_sql(&ex.schema))
        .flatten()
    else {
        return Ok(());
    };
    let found = rows(ex, family.name(), &sql, [], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get::<_, i64>(2)?))
    })?;
    for (lo, hi, n) in found {
        d.record_estimate += n as u64;
        d.widen(lo, hi);
    }
    Ok(())
}

/// The NICs with metric samples, named where the export describes them, and their span.
pub(super) fn find_nics(ex: &Export, d: &mut Discovery) -> Result<()> {
    let family = Family::Nic;
    let Some(sql) = (d.families.contains(&family))
        .then(|| nic::nics_sql(&ex.schema))
        .flatten()
    else {
        return Ok(());
    };
    for global_id in spans(ex, family, &sql, d)? {
        d.nics.insert(global_id, nic::NicFound::default());
    }
    let Some(sql) = nic::names_sql(&ex.schema) else {
        return Ok(());
    };
    let named = rows(ex, nic::ID_MAP, &sql, [], |r| {
        Ok((r.get::<_, i64>(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
    })?;
    for (global_id, nic_id, name, device) in named {
        if let Some(found) = d.nics.get_mut(&global_id) {
            *found = nic::NicFound {
                nic_id,
                name,
                device,
            };
        }
    }
    Ok(())
}
