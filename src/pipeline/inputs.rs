//! Warnings about the inputs as a set, known once each was discovered: an export given twice,
//! and MPI ranks claimed by two inputs. Neither stops the conversion: the trace still shows what
//! the inputs hold, and the warnings say why it may look doubled.

use std::collections::BTreeMap;

use crate::nsys::discover::Discovery;
use crate::nsys::Export;

/// The warnings about `exports` (discovered as `discoveries`), in input order.
pub(super) fn warnings(exports: &[Export], discoveries: &[Discovery]) -> Vec<String> {
    let mut out = Vec::new();
    // Per input, the earlier input it repeats: its rank claims are then no news. Keyed by file
    // and by capture, so that many ranks cost one look-up each.
    let mut repeats: Vec<Option<usize>> = vec![None; exports.len()];
    let mut files: BTreeMap<std::path::PathBuf, usize> = BTreeMap::new();
    let mut captures: BTreeMap<Capture, usize> = BTreeMap::new();
    for (j, (ex, d)) in exports.iter().zip(discoveries).enumerate() {
        let file = canonical_path(ex);
        let capture = capture(d);
        let same_file = file.as_ref().and_then(|f| files.get(f)).copied();
        let same_capture = capture.as_ref().and_then(|c| captures.get(c)).copied();
        let found = match (same_file, same_capture) {
            (Some(i), _) => Some((i, "the same file")),
            (None, Some(i)) => Some((
                i,
                "the same capture (same session start, host and processes)",
            )),
            (None, None) => None,
        };
        if let Some((i, why)) = found {
            out.push(format!(
                "{} and {} are {why}: the same export given twice, so its processes appear twice in the trace",
                exports[i].label, ex.label
            ));
            repeats[j] = Some(i);
        }
        if let Some(f) = file {
            files.entry(f).or_insert(j);
        }
        if let Some(c) = capture {
            captures.entry(c).or_insert(j);
        }
    }
    // Ranks claimed by two inputs, per pair of inputs (first claimant, later claimant).
    let mut claimant: BTreeMap<u32, usize> = BTreeMap::new();
    let mut shared: BTreeMap<(usize, usize), Vec<u32>> = BTreeMap::new();
    for (src, d) in discoveries.iter().enumerate() {
        let mut ranks: Vec<u32> = d
            .processes
            .keys()
            .filter_map(|k| d.ranks.get(k).copied())
            .collect();
        ranks.sort_unstable();
        ranks.dedup();
        for rank in ranks {
            let first = *claimant.entry(rank).or_insert(src);
            if first != src && repeats[src] != Some(first) {
                shared.entry((first, src)).or_default().push(rank);
            }
        }
    }
    for ((a, b), ranks) in shared {
        let list: Vec<String> = ranks.iter().map(u32::to_string).collect();
        out.push(format!(
            "{} and {} both claim MPI rank{} {}: their tasks carry the same rank (ranks come from \
             the launcher's environment, else MPI_RANKS, else the NVTX thread name `MPI Rank N`, \
             which some nsys versions number per node)",
            exports[a].label,
            exports[b].label,
            if ranks.len() == 1 { "" } else { "s" },
            list.join(", ")
        ));
    }
    out
}

/// The file an input was opened from, canonical (natively; in the browser files have no path).
fn canonical_path(ex: &Export) -> Option<std::path::PathBuf> {
    #[cfg(not(target_family = "wasm"))]
    if let Some(path) = &ex.path {
        return std::fs::canonicalize(path).ok();
    }
    let _ = ex;
    None
}

/// What tells one capture from another: its session start (in ns, so two captures share it
/// only by being one), host name and processes (globalPid key, pid). Two inputs with the same
/// are a copy of one file, or a file picked twice in the browser.
type Capture = (i64, String, Vec<(i64, u32)>);

fn capture(d: &Discovery) -> Option<Capture> {
    let pids = d.processes.iter().map(|(k, (pid, _))| (*k, *pid)).collect();
    Some((d.session_start_utc_ns?, d.hostname.clone(), pids))
}
