//! The surveys made after discovery (most are made in its passes over the tables: see
//! [`Prepass`]), those whose specs depend on what discovery found. Each is a full scan of its
//! tables, independent of the others: natively they run on several threads at once, each thread
//! with its own connections to the input files; otherwise side by side on the inputs' own
//! connections, so that through the browser's block cache they read each file about once between
//! them. The outcomes are the same either way.

use rusqlite::Connection;

use super::{Spec, Survey, SurveyScans};
use crate::engine::prepass::Prepass;
use crate::engine::Input;

/// One scan job: the runs of a partitioned reader over the tables of input `source`.
pub struct Job<'q> {
    pub source: usize,
    pub spec: &'q Spec,
}

/// What a job found; `None` inside means "use the SQL path".
pub type Outcome = rusqlite::Result<Option<Survey>>;

/// Makes every job and returns the outcomes in job order: on up to `threads` threads when more
/// than one is allowed and every input was opened from a file, else side by side.
/// `direct`: the surveys scan by the direct reader of the file format where they can
/// (engine/page_reader.rs).
pub fn survey_all(
    inputs: &[Input],
    jobs: &[Job],
    threads: usize,
    page_reader: bool,
) -> Vec<Outcome> {
    #[cfg(not(target_family = "wasm"))]
    if threads > 1 && jobs.len() > 1 {
        let files: Option<Vec<&std::path::Path>> = inputs.iter().map(|input| input.path).collect();
        if let Some(files) = files {
            return on_threads(&files, jobs, threads.min(jobs.len()), page_reader);
        }
    }
    let _ = threads;
    let on_own_connections: Vec<_> = jobs.iter().map(|j| (inputs[j.source].conn, j)).collect();
    side_by_side(&on_own_connections, page_reader)
}

/// The jobs' scans made together, each job on its connection: one set of scans per connection
/// (engine/prepass.rs: a pass per table for all the scans of that table).
fn side_by_side(jobs: &[(&Connection, &Job)], page_reader: bool) -> Vec<Outcome> {
    let mut states: Vec<SurveyScans> = jobs
        .iter()
        .map(|(_, job)| SurveyScans::new(job.spec))
        .collect();
    // The connections in order of first use; each job's scans go to its connection's set.
    let mut sets: Vec<(&Connection, Prepass)> = Vec::new();
    let mut placed: Vec<(usize, usize)> = Vec::with_capacity(jobs.len());
    for ((conn, _), state) in jobs.iter().zip(states.iter_mut()) {
        let at = match sets.iter().position(|(c, _)| std::ptr::eq(*c, *conn)) {
            Some(at) => at,
            None => {
                sets.push((conn, Prepass::new(conn, page_reader)));
                sets.len() - 1
            }
        };
        let set = &mut sets[at].1;
        placed.push((at, state.register(set)));
    }
    let mut ended: Vec<std::vec::IntoIter<rusqlite::Result<()>>> = sets
        .into_iter()
        .map(|(_, set)| set.run().into_iter())
        .collect();
    states
        .into_iter()
        .zip(placed)
        .map(|(state, (at, n))| {
            let mine: Vec<rusqlite::Result<()>> = ended[at].by_ref().take(n).collect();
            state.finish(mine)
        })
        .collect()
}

/// Each worker takes the next job not yet taken, on connections of its own (opened lazily).
#[cfg(not(target_family = "wasm"))]
fn on_threads(
    files: &[&std::path::Path],
    jobs: &[Job],
    threads: usize,
    page_reader: bool,
) -> Vec<Outcome> {
    use crate::engine::open_read_only;
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
                        let outcome = side_by_side(&[(conn, job)], page_reader).pop();
                        done.push((i, outcome.expect("an outcome per job")));
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
