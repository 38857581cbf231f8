//! Several full-table scans made side by side, so that they read the file once between them.
//!
//! nsys writes its tables' pages interleaved through the file, in time order, so a scan of any
//! big table reads pages from the whole file. Scans made one after the other each read the whole
//! file again; in the browser, whose block cache holds at most 32 MiB of a file too large to
//! hold whole, that is a full reload of the file per scan (six for discovery and nine for the
//! surveys of a typical export, docs/PERFORMANCE.md). Here each scan advances while it is the
//! furthest behind in its file (the VFS tells where the last page was read, `vfs::last_read`,
//! whether SQLite or the direct reader read it), so all scans move through the file together
//! and a block once loaded serves them all. The scans are made as a set (prepass.rs).
//!
//! What each scan computes does not depend on the interleaving: every scan sees its own rows in
//! its own order, and the results come back in the scans' order. Files not opened through the VFS
//! report no position; the scans then simply run one after the other.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rusqlite::{Row, Statement};

use crate::vfs;

/// Rows a scan may advance on one turn without reading a new page.
const TURN_ROWS: usize = 256;

/// Advances a scan by one row: `Ok(true)` while it has more to do, `Ok(false)` once finished.
pub type Step<'a, E> = Box<dyn FnMut() -> Result<bool, E> + 'a>;

/// Runs every scan to its end (or its first error) and returns how each ended, in their order.
pub fn run_all<E>(mut scans: Vec<Step<'_, E>>) -> Vec<Result<(), E>> {
    let mut ended: Vec<Option<Result<(), E>>> = scans.iter().map(|_| None).collect();
    // (file offset it reached, scan): the scan furthest behind goes next, ties in scan order.
    let mut queue: BinaryHeap<Reverse<(u64, usize)>> =
        (0..scans.len()).map(|i| Reverse((0, i))).collect();
    while let Some(Reverse((at, i))) = queue.pop() {
        let (reads_before, _) = vfs::last_read();
        let mut at = at;
        let mut outcome = None;
        for _ in 0..TURN_ROWS {
            match scans[i]() {
                Ok(true) => {}
                Ok(false) => outcome = Some(Ok(())),
                Err(e) => outcome = Some(Err(e)),
            }
            let (reads, offset) = vfs::last_read();
            if outcome.is_some() || reads != reads_before {
                // It read a page: it is now there in its file; let those behind catch up.
                if reads != reads_before {
                    at = offset;
                }
                break;
            }
        }
        match outcome {
            Some(end) => ended[i] = Some(end),
            None => queue.push(Reverse((at, i))),
        }
    }
    ended
        .into_iter()
        .map(|e| e.expect("every scan runs to its end"))
        .collect()
}

/// Takes one row of a scan; returns false when it needs no more.
pub type TakeRow<'a> = Box<dyn FnMut(&Row<'_>) -> rusqlite::Result<bool> + 'a>;

/// The step of a prepared query whose rows go to `row` (a statement that failed to prepare
/// ends at its first step with that error).
pub fn query_step<'s>(
    st: &'s mut rusqlite::Result<Statement<'_>>,
    row: &'s mut TakeRow<'_>,
) -> Step<'s, rusqlite::Error> {
    let rows = match st {
        Ok(st) => st.query([]),
        // Its place is not read again: move the error out.
        Err(e) => Err(std::mem::replace(e, rusqlite::Error::InvalidQuery)),
    };
    match rows {
        Ok(mut rows) => Box::new(move || match rows.next()? {
            Some(r) => row(r),
            None => Ok(false),
        }),
        Err(e) => {
            let mut e = Some(e);
            Box::new(move || Err(e.take().expect("a failed scan ends at its first step")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    #[test]
    fn every_scan_runs_to_its_end_and_reports_in_order() {
        // No VFS reads here: the scans run one after the other, in order.
        let log = RefCell::new(Vec::new());
        let counter = |id: u32, rows: u32, fail_at: Option<u32>| {
            let log = &log;
            let mut n = 0;
            Box::new(move || {
                if fail_at == Some(n) {
                    return Err(format!("scan {id} failed at row {n}"));
                }
                if n == rows {
                    return Ok(false);
                }
                log.borrow_mut().push(id);
                n += 1;
                Ok(true)
            }) as Step<'_, String>
        };
        let ended = run_all(vec![
            counter(0, 600, None),
            counter(1, 3, Some(2)),
            counter(2, 0, None),
        ]);
        assert_eq!(
            ended,
            [Ok(()), Err("scan 1 failed at row 2".into()), Ok(())]
        );
        let log = log.into_inner();
        assert_eq!(log.len(), 602);
        assert!(log[..600].iter().all(|&id| id == 0));
        assert_eq!(log[600..], [1, 1]);
    }

    #[test]
    fn no_scans_is_nothing_to_do() {
        assert!(run_all::<()>(Vec::new()).is_empty());
    }
}
