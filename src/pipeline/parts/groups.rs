//! A conversion of many inputs (one export per rank) read a group of inputs at a time: the
//! readers of a thousand inputs at once held ~150 KiB each (a batch per run, compiled queries,
//! statements, the page caches' pages); with one group's readers open at a time, what grows
//! with the inputs is what each keeps open (its connection, receive index and plan: ~100 KiB,
//! docs/PERFORMANCE.md "Many inputs"). Each group's records go to a temporary part, as
//! `convert --part K/N` writes them, and the parts are merged into the sinks, as `prvsight
//! merge` does: the same bytes as reading every input at once (pipeline/share.rs says why).
//!
//! The plan is made once, for every input (and with every input's surveys, which each group's
//! readers take); every input stays open, as each group matches its MPI sends with every
//! input's receives. The temporary parts (records in postcard's encoding, about a quarter of
//! the .prv's bytes) lie in the system's temporary folder (`TMPDIR`), and go when the
//! conversion ends, whether it succeeds or not.

use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use super::format::Preamble;
use super::merge::merge;
use super::write::write_share;
use super::PartInput;
use crate::error::{Error, Result};
use crate::model::{OutputCut, Sink};
use crate::nsys::Export;
use crate::options::{Options, ReadGroups};
use crate::pipeline::{report, share_range, Plan, ProgressFn, ShareReader, Summary};

/// Inputs read at once, at most, by default: past this many the inputs are read in groups.
const GROUPED_PAST: usize = 128;
/// Inputs a group holds by default.
const GROUP_INPUTS: usize = 64;

/// How many inputs a group holds, where `opts` and the number of inputs call for groups.
pub(crate) fn group_size(opts: &Options, inputs: usize) -> Option<usize> {
    let size = match opts.read_groups {
        ReadGroups::Off => return None,
        ReadGroups::Of(n) => n.max(1),
        ReadGroups::Auto if inputs > GROUPED_PAST => GROUP_INPUTS,
        ReadGroups::Auto => return None,
    };
    (size < inputs).then_some(size)
}

/// Converts `exports`, planned as `plan` and cut as `cut`, into `sinks`, reading `size`
/// inputs at a time (see the module doc).
pub(crate) fn run(
    exports: &[Export],
    opts: &Options,
    plan: Plan,
    cut: OutputCut,
    size: usize,
    sinks: &mut [&mut dyn Sink],
    progress: &mut ProgressFn,
) -> Result<Summary> {
    let folder = Scratch::new()?;
    let written = write_groups(exports, opts, &plan, &cut, size, &folder, progress);
    // An input that shrank under the reading is the cause of whatever the reading met.
    exports.iter().try_for_each(Export::check_unchanged)?;
    let files = written?;
    let mut parts = Vec::with_capacity(files.len());
    for (k, path) in files.iter().enumerate() {
        let file = File::open(path).map_err(|e| scratch_error(path, e))?;
        parts.push(PartInput {
            name: format!(
                "temporary part {} of {} ({})",
                k + 1,
                files.len(),
                path.display()
            ),
            bytes: Box::new(BufReader::new(file)),
        });
    }
    merge(parts, sinks, progress)
}

/// Reads the inputs `size` at a time, each group's records into a part in `folder`; returns
/// the parts' files, in order.
fn write_groups(
    exports: &[Export],
    opts: &Options,
    plan: &Plan,
    cut: &OutputCut,
    size: usize,
    folder: &Scratch,
    progress: &mut ProgressFn,
) -> Result<Vec<PathBuf>> {
    let groups = exports.len().div_ceil(size);
    let estimate = plan.discoveries.iter().map(|d| d.record_estimate).sum();
    let mut done = 0u64;
    let mut files = Vec::with_capacity(groups);
    for k in 0..groups {
        let share = share_range(k, groups, exports.len());
        let (reader, start) = ShareReader::open_planned(exports, opts, plan, cut.clone(), share)?;
        let preamble = Preamble {
            run: String::new(),
            part: k + 1,
            parts: groups,
            inputs: Vec::new(),
            share: Vec::new(),
            header: start.header,
            plan_warnings: start.plan_warnings,
            first_names: start.first_names,
            fed_names: start.fed_names,
        };
        let path = (folder.path).join(format!("group-{}-of-{groups}.part", k + 1));
        let file = File::create(&path).map_err(|e| scratch_error(&path, e))?;
        let mut out = BufWriter::new(file);
        let before = done;
        let mut tick = |n: u64| report(progress, "converting", before + n, estimate);
        // A part that cannot be written (a full disk) is named, with where parts go.
        let unwritten = |e| match e {
            Error::Write { detail, .. } => scratch_error(&path, std::io::Error::other(detail)),
            other => other,
        };
        let read = write_share(reader, &preamble, &mut out, &mut tick).map_err(unwritten)?;
        out.flush().map_err(|e| scratch_error(&path, e))?;
        done += read.records;
        files.push(path);
    }
    Ok(files)
}

/// The error of a temporary part that cannot be written or read back.
fn scratch_error(path: &Path, e: std::io::Error) -> Error {
    Error::Write {
        what: format!(
            "{} (a temporary part of a conversion of many inputs; TMPDIR sets where they go)",
            path.display()
        ),
        detail: e.to_string(),
    }
}

/// A folder of its own in the system's temporary folder, removed with what it holds on drop.
struct Scratch {
    path: PathBuf,
}

impl Scratch {
    fn new() -> Result<Scratch> {
        let base = std::env::temp_dir();
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let mut last = None;
        for attempt in 0..16 {
            let path = base.join(format!(
                "prvsight-groups-{}-{stamp}-{attempt}",
                std::process::id()
            ));
            match std::fs::create_dir(&path) {
                Ok(()) => return Ok(Scratch { path }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
                Err(e) => return Err(scratch_error(&path, e)),
            }
        }
        let e = last.expect("every attempt found the folder there");
        Err(scratch_error(&base, e))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_past_the_default_or_of_the_size_asked() {
        let with = |read_groups| Options {
            read_groups,
            ..Options::default()
        };
        assert_eq!(group_size(&with(ReadGroups::Auto), GROUPED_PAST), None);
        let past = GROUPED_PAST + 1;
        assert_eq!(
            group_size(&with(ReadGroups::Auto), past),
            Some(GROUP_INPUTS)
        );
        assert_eq!(group_size(&with(ReadGroups::Off), 10 * past), None);
        assert_eq!(group_size(&with(ReadGroups::Of(3)), 7), Some(3));
        // One group of every input is no grouping.
        assert_eq!(group_size(&with(ReadGroups::Of(7)), 7), None);
    }

    #[test]
    fn the_scratch_folder_goes_with_what_it_holds() {
        let scratch = Scratch::new().unwrap();
        let path = scratch.path.clone();
        std::fs::write(path.join("group-1-of-2.part"), b"records").unwrap();
        drop(scratch);
        assert!(!path.exists());
    }
}
