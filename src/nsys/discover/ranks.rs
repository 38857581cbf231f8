//! MPI ranks of an export's processes. Three inputs tell one, most trusted first: the launcher's
//! environment that nsys recorded (TARGET_INFO_SYSTEM_ENV's `DeviceEnvironment`), the MPI tables
//! (MPI_RANKS) and the NVTX thread name nsys gives an MPI rank's main thread (`MPI Rank N`,
//! eventType 39). The thread name is the least trusted because some nsys versions (2021.5) write
//! the rank within the node there, so every node has its `MPI Rank 0`.

use rusqlite::types::ValueRef;

use super::scans::rows;
use super::Discovery;
use crate::error::Result;
use crate::nsys::Export;

/// Launcher variables that hold the process's world rank, most trusted first: Open MPI, PMIx,
/// MPICH/Hydra, MVAPICH, Slurm.
const RANK_VARIABLES: [&str; 5] = [
    "OMPI_COMM_WORLD_RANK",
    "PMIX_RANK",
    "PMI_RANK",
    "MV2_COMM_WORLD_RANK",
    "SLURM_PROCID",
];

/// The rank an NVTX thread name claims (`MPI Rank 3` → 3).
pub(super) fn rank_of_thread_name(name: &str) -> Option<u32> {
    name.strip_prefix("MPI Rank ")
        .and_then(|r| r.trim().parse::<u32>().ok())
}

/// The world rank an environment (`KEY=VALUE` pairs joined by `;`) gives: the first variable of
/// [`RANK_VARIABLES`] that holds a number.
fn rank_in_environment(env: &str) -> Option<u32> {
    let var = |key: &str| {
        env.split(';')
            .filter_map(|pair| pair.split_once('='))
            .find(|(k, _)| k.trim() == key)
            .map(|(_, v)| v.trim())
    };
    // Every Slurm task has SLURM_PROCID, 0 in a batch script or a one-task step: it names a rank
    // only where srun started several tasks.
    let slurm_tasks = var("SLURM_STEP_NUM_TASKS").and_then(|n| n.parse::<u32>().ok());
    RANK_VARIABLES
        .iter()
        .filter(|k| **k != "SLURM_PROCID" || slurm_tasks.is_some_and(|n| n > 1))
        .find_map(|k| var(k).and_then(|v| v.parse::<u32>().ok()))
}

/// The rank the capture's environment gives; none without the table, the row or a rank in it,
/// or where two `DeviceEnvironment` rows (two devices of one capture) disagree.
fn environment_rank(ex: &Export) -> Result<Option<u32>> {
    let table = "TARGET_INFO_SYSTEM_ENV";
    if !ex.schema.has_columns(table, &["name", "value"]) {
        return Ok(None);
    }
    let sql = format!("SELECT value FROM {table} WHERE name = 'DeviceEnvironment'");
    // Only text is an environment: a value of another type gives no rank rather than an error.
    let found = rows(ex, table, &sql, [], |r| {
        Ok(match r.get_ref(0)? {
            ValueRef::Text(t) => rank_in_environment(&String::from_utf8_lossy(t)),
            _ => None,
        })
    })?;
    let mut ranks = found.into_iter().flatten();
    let first = ranks.next();
    Ok(first.filter(|r| ranks.all(|other| other == *r)))
}

/// The one process the capture's environment can be about: the export's only process with
/// activity, else the only process with a rank from the MPI tables or NVTX. None otherwise: the
/// environment is then the launcher's (nsys around `torchrun` or `mpirun`), not a rank's.
fn environment_process(d: &Discovery) -> Option<i64> {
    only(d.processes.keys()).or_else(|| only(d.ranks.keys()))
}

/// The one key of `keys`, if there is exactly one.
fn only<'a>(mut keys: impl Iterator<Item = &'a i64>) -> Option<i64> {
    match (keys.next(), keys.next()) {
        (Some(&k), None) => Some(k),
        _ => None,
    }
}

/// Gives the environment's rank, where it has one, to the process it is about (over what the
/// MPI tables or NVTX claimed for it).
pub(super) fn apply_environment(ex: &Export, d: &mut Discovery) -> Result<()> {
    if let (Some(rank), Some(process)) = (environment_rank(ex)?, environment_process(d)) {
        d.ranks.insert(process, rank);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_are_taken_in_order_of_trust() {
        let env = "HOME=/h;PMI_RANK=5;OMPI_COMM_WORLD_RANK=3;PMIX_RANK=4;LANG=C";
        assert_eq!(rank_in_environment(env), Some(3));
        assert_eq!(rank_in_environment("PMIX_RANK=4;PMI_RANK=5"), Some(4));
        assert_eq!(rank_in_environment("MV2_COMM_WORLD_RANK=7"), Some(7));
        // An unparsable value gives way to the next variable; none gives no rank.
        assert_eq!(
            rank_in_environment("OMPI_COMM_WORLD_RANK=x;PMI_RANK=2"),
            Some(2)
        );
        assert_eq!(rank_in_environment("HOME=/h;OMPI_COMM_WORLD_SIZE=4"), None);
        assert_eq!(rank_in_environment(""), None);
        assert_eq!(rank_in_environment("=;;PMI_RANK"), None);
    }

    #[test]
    fn slurm_names_a_rank_only_in_a_step_of_several_tasks() {
        assert_eq!(
            rank_in_environment("SLURM_PROCID=6;SLURM_STEP_NUM_TASKS=8"),
            Some(6)
        );
        // jacc_cg_trace.sqlite: `srun` of one task.
        assert_eq!(
            rank_in_environment("SLURM_PROCID=0;SLURM_STEP_NUM_TASKS=1"),
            None
        );
        // A batch script (no step): its SLURM_PROCID is always 0.
        assert_eq!(rank_in_environment("SLURM_PROCID=0;SLURM_NTASKS=4"), None);
        assert_eq!(
            rank_in_environment("SLURM_PROCID=6;SLURM_STEP_NUM_TASKS=8;PMI_RANK=1"),
            Some(1)
        );
    }

    #[test]
    fn thread_names_claim_ranks() {
        assert_eq!(rank_of_thread_name("MPI Rank 12"), Some(12));
        assert_eq!(rank_of_thread_name("MPI Rank x"), None);
        assert_eq!(rank_of_thread_name("worker"), None);
    }
}
