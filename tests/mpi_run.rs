//! The synthetic N-rank MPI+GPU run (`prvsight::synth::mpi_run`, the many-inputs benchmark's
//! input): one export per rank with the real captures' MPI tables, deterministic by seed, and
//! converted to exactly its spec with every ring message matched.

mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;

use prvsight::synth::{ddl, mpi_run::MpiRun};
use prvsight::Options;
use rusqlite::{Connection, OpenFlags};

fn written(run: &MpiRun, name: &str) -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("mpi-run-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    run.write(&dir).unwrap()
}

fn open(p: &std::path::Path) -> Connection {
    Connection::open_with_flags(p, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap()
}

#[test]
fn four_ranks_convert_to_the_spec_with_matched_messages() {
    let run = MpiRun::new(4);
    let spec = run.spec().unwrap();
    let paths = written(&run, "four");
    assert_eq!(paths.len(), 4);
    assert!(paths[3].ends_with("rank3.sqlite"), "{paths:?}");
    let out = common::convert(&paths, &Options::default()).unwrap();
    let counts: BTreeMap<&str, u64> = out
        .summary
        .counts
        .iter()
        .map(|(k, v)| (k.as_str(), *v))
        .collect();
    assert_eq!(counts, spec.counts);
    assert_eq!(spec.counts["mpi-message"], 40);
    assert!(
        !out.summary.warnings.iter().any(|w| w.contains("matching")),
        "{:?}",
        out.summary.warnings
    );
    // Tasks in rank order, each named by its rank and pid.
    for (r, pid) in spec.task_pids.iter().enumerate() {
        let line = format!("rank {r}: solver (pid {pid}, node0000)");
        assert!(out.row.contains(&line), "{line} not in\n{}", out.row);
    }
    // The ring: rank r sends to r+1 (task r+1 → task r+2) once per iteration with tag i, 1 MiB,
    // received after it was sent.
    let mut pairs: BTreeMap<(u64, u64), Vec<u64>> = BTreeMap::new();
    for line in out.prv.lines().filter(|l| l.starts_with("3:")) {
        let f: Vec<u64> = line.split(':').map(|x| x.parse().unwrap()).collect();
        if f[13] != 1 << 20 {
            continue; // an API → GPU link
        }
        assert!(f[12] >= f[6], "message received before it was sent: {line}");
        pairs.entry((f[3], f[9])).or_default().push(f[14]);
    }
    let ring: BTreeMap<(u64, u64), Vec<u64>> = (1..=4)
        .map(|t| ((t, t % 4 + 1), (0..10).collect()))
        .collect();
    assert_eq!(pairs, ring);
    let c = common::count_prv(&out.prv);
    assert!(c.sorted);
}

#[test]
fn ranks_spread_over_nodes_and_one_rank_has_no_ring() {
    let run = MpiRun {
        ranks_per_node: 2,
        iterations: 3,
        ..MpiRun::new(5)
    };
    let spec = run.spec().unwrap();
    assert_eq!(spec.nodes, 3);
    let out = common::convert(&written(&run, "five"), &Options::default()).unwrap();
    assert_eq!(out.summary.counts.get("mpi-message"), Some(&15));
    assert!(out.prv.lines().next().unwrap().contains(":3(1,1,1):"));
    for (r, pid) in spec.task_pids.iter().enumerate() {
        let line = format!("rank {r}: solver (pid {pid}, node{:04})", r / 2);
        assert!(out.row.contains(&line), "{line} not in\n{}", out.row);
    }
    let solo = MpiRun::new(1);
    let out = common::convert(&written(&solo, "solo"), &Options::default()).unwrap();
    assert_eq!(out.summary.counts.get("mpi-message"), None);
    assert_eq!(out.summary.counts.get("mpi"), Some(&12));
}

#[test]
fn the_seed_moves_host_timings_only_and_the_bytes_repeat() {
    let run = MpiRun::new(3);
    let again = run.rank(2).unwrap().to_bytes().unwrap();
    assert_eq!(run.rank(2).unwrap().to_bytes().unwrap(), again);
    let other = MpiRun { seed: 2, ..run };
    assert_ne!(other.rank(2).unwrap().to_bytes().unwrap(), again);
    assert_eq!(other.spec().unwrap(), run.spec().unwrap());
    let bad = MpiRun { ranks: 0, ..run };
    assert!(matches!(bad.spec(), Err(prvsight::Error::Usage(_))));
}

#[test]
fn each_rank_holds_the_launchers_rank_and_the_mpi_tables_ddl() {
    let paths = written(&MpiRun::new(2), "ddl");
    let c = open(&paths[1]);
    let env: String = c
        .query_row(
            "SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'DeviceEnvironment'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(
        env.starts_with("OMPI_COMM_WORLD_SIZE=2;PMIX_RANK=1;OMPI_COMM_WORLD_RANK=1;"),
        "{env}"
    );
    let rank: i64 = c
        .query_row("SELECT rank FROM MPI_RANKS", [], |r| r.get(0))
        .unwrap();
    assert_eq!(rank, 1);
    let real = common::shared_traces().map(|d| open(&d.join("generated/mpi4/rank0.sqlite")));
    for t in [
        "MPI_P2P_EVENTS",
        "MPI_COLLECTIVES_EVENTS",
        "MPI_OTHER_EVENTS",
        "MPI_RANKS",
        "MPI_COMMUNICATORS",
    ] {
        let sql = |c: &Connection| -> String {
            c.query_row("SELECT sql FROM sqlite_master WHERE name = ?1", [t], |r| {
                r.get(0)
            })
            .unwrap_or_else(|e| panic!("{t}: {e}"))
        };
        let ours = sql(&c);
        assert_eq!(ours, ddl::table(t).unwrap().create_statement(), "{t}");
        if let Some(real) = &real {
            assert_eq!(ours, sql(real), "{t} differs from the real capture's");
        }
    }
}
