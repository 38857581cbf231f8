//! The surveys of the sort-free readers (nsys/partitioned.rs), all made before the first record:
//! each is a full scan of its tables, independent of the others, so natively they run on several
//! threads at once, each thread with its own connections to the input files.

use crate::nsys::partitioned::{self, Spec, Survey};
use crate::nsys::Export;

/// One survey to make: of `spec`, over the tables of input `source`.
pub(super) struct Job<'q> {
    pub source: usize,
    pub spec: &'q Spec,
}

/// What [`partitioned::survey`] says of one job.
pub(super) type Outcome = rusqlite::Result<Option<Survey>>;

/// Makes every survey and returns the outcomes in job order: on up to `threads` threads when
/// more than one is allowed and every input was opened from a file, else side by side on the
/// inputs' own connections (one pass over each file between them, see nsys/interleave.rs). The
/// outcomes are the same either way.
pub(super) fn survey_all(exports: &[Export], jobs: &[Job], threads: usize) -> Vec<Outcome> {
    #[cfg(not(target_family = "wasm"))]
    if threads > 1 && jobs.len() > 1 {
        let files: Option<Vec<&std::path::Path>> =
            exports.iter().map(|ex| ex.path.as_deref()).collect();
        if let Some(files) = files {
            return on_threads(&files, jobs, threads.min(jobs.len()));
        }
    }
    let _ = threads;
    let on_own_connections: Vec<_> = jobs
        .iter()
        .map(|j| (&exports[j.source].conn, j.spec))
        .collect();
    partitioned::survey_together(&on_own_connections)
}

/// Each worker takes the next job not yet taken, on connections of its own (opened lazily).
#[cfg(not(target_family = "wasm"))]
fn on_threads(files: &[&std::path::Path], jobs: &[Job], threads: usize) -> Vec<Outcome> {
    use crate::nsys::export::open_read_only;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let next = AtomicUsize::new(0);
    let mut outcomes: Vec<Option<Outcome>> = (0..jobs.len()).map(|_| None).collect();
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut conns: Vec<Option<rusqlite::Connection>> =
                        files.iter().map(|_| None).collect();
                    let mut done: Vec<(usize, Outcome)> = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(job) = jobs.get(i) else { break };
                        let conn = match &mut conns[job.source] {
                            Some(c) => c,
                            slot => match open_read_only(files[job.source]) {
                                Ok(c) => slot.insert(c),
                                Err(e) => {
                                    done.push((i, Err(e)));
                                    continue;
                                }
                            },
                        };
                        done.push((i, partitioned::survey(conn, job.spec)));
                    }
                    done
                })
            })
            .collect();
        for w in workers {
            match w.join() {
                Ok(done) => {
                    for (i, o) in done {
                        outcomes[i] = Some(o);
                    }
                }
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
    });
    outcomes
        .into_iter()
        .map(|o| o.expect("every job is taken by a worker"))
        .collect()
}
