//! Output files that take their names only when the command succeeds (the CLI's outputs).
//!
//! Each output is written under a temporary name beside its destination (`NAME.partial-PID`)
//! and given its name once everything is written and flushed, so a conversion that fails part
//! way leaves the earlier output as it was and no partial trace. The earlier file is removed
//! before the rename rather than truncated or renamed over, since ext4 then writes the file back
//! on the closing thread ("auto_da_alloc"). A killed command leaves its `NAME.partial-PID`
//! files. A destination that is not a plain file of its own (a symbolic link, a file with other
//! hard links, `/dev/stdout`, a FIFO), or whose folder refuses the temporary file, is written
//! in place.

use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};

/// One output being written; [`commit`](Self::commit) gives it its name, dropping it without
/// that removes what was written under the temporary name.
#[derive(Debug)]
pub struct AtomicOutput {
    dest: PathBuf,
    /// The file being written, while it is not at `dest`; `None` when written in place.
    temp: Option<PathBuf>,
}

impl AtomicOutput {
    /// The file to write for `dest`, and the handle that names it when done.
    pub fn create(dest: &Path) -> io::Result<(AtomicOutput, File)> {
        if let Some(temp) = temp_path(dest).filter(|_| replaceable(dest)) {
            // create_new: never write over a file of that name (a stale one is left alone).
            if let Ok(file) = File::options().write(true).create_new(true).open(&temp) {
                let output = AtomicOutput {
                    dest: dest.to_owned(),
                    temp: Some(temp),
                };
                return Ok((output, file));
            }
        }
        let file = File::create(dest)?;
        let output = AtomicOutput {
            dest: dest.to_owned(),
            temp: None,
        };
        Ok((output, file))
    }

    pub fn dest(&self) -> &Path {
        &self.dest
    }

    /// Gives the written (and flushed) file its name, removing the earlier file of that name.
    /// Where that fails the new file is kept under its temporary name, which the error says.
    pub fn commit(mut self) -> io::Result<()> {
        let Some(temp) = self.temp.take() else {
            return Ok(());
        };
        let placed = match fs::remove_file(&self.dest) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => fs::rename(&temp, &self.dest),
        };
        placed.map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("{e}; what was written is in {}", temp.display()),
            )
        })
    }
}

impl Drop for AtomicOutput {
    /// Not committed (the command failed): what was written goes, the destination stays as it was.
    fn drop(&mut self) {
        if let Some(temp) = self.temp.take() {
            let _ = fs::remove_file(temp);
        }
    }
}

/// `dir/NAME` → `dir/NAME.partial-PID`.
fn temp_path(dest: &Path) -> Option<PathBuf> {
    let mut name = dest.file_name()?.to_os_string();
    name.push(format!(".partial-{}", std::process::id()));
    Some(dest.with_file_name(name))
}

/// Whether `dest` may be replaced by another file: it does not exist, or is a plain file that
/// no other name shares.
fn replaceable(dest: &Path) -> bool {
    match fs::symlink_metadata(dest) {
        Err(e) => e.kind() == io::ErrorKind::NotFound,
        Ok(meta) => meta.file_type().is_file() && only_name(&meta),
    }
}

#[cfg(unix)]
fn only_name(meta: &fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    meta.nlink() == 1
}

#[cfg(not(unix))]
fn only_name(_: &fs::Metadata) -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("prvsight-output-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// The folder's entries, sorted.
    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    fn write(dest: &Path, text: &str) -> AtomicOutput {
        let (output, mut file) = AtomicOutput::create(dest).unwrap();
        file.write_all(text.as_bytes()).unwrap();
        output
    }

    #[test]
    fn a_committed_file_replaces_the_earlier_one_and_nothing_else_is_left() {
        let dir = scratch("commit");
        let dest = dir.join("t.prv");
        fs::write(&dest, "old trace, longer than the new one").unwrap();
        let output = write(&dest, "new");
        assert_eq!(
            fs::read_to_string(&dest).unwrap(),
            "old trace, longer than the new one"
        );
        assert_eq!(entries(&dir).len(), 2, "the new file is beside the old one");
        output.commit().unwrap();
        assert_eq!(fs::read_to_string(&dest).unwrap(), "new");
        assert_eq!(entries(&dir), ["t.prv"]);
        // And where there was none.
        write(&dir.join("u.prv"), "first").commit().unwrap();
        assert_eq!(fs::read_to_string(dir.join("u.prv")).unwrap(), "first");
        assert_eq!(entries(&dir), ["t.prv", "u.prv"]);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn without_commit_the_earlier_file_stays_and_the_new_one_goes() {
        let dir = scratch("drop");
        let dest = dir.join("t.prv");
        fs::write(&dest, "old").unwrap();
        drop(write(&dest, "half a trace"));
        assert_eq!(fs::read_to_string(&dest).unwrap(), "old");
        drop(write(&dir.join("v.prv"), "half"));
        assert_eq!(entries(&dir), ["t.prv"]);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn links_are_written_through_in_place() {
        let dir = scratch("links");
        let target = dir.join("target.prv");
        fs::write(&target, "old").unwrap();
        std::os::unix::fs::symlink(&target, dir.join("sym.prv")).unwrap();
        fs::hard_link(&target, dir.join("hard.prv")).unwrap();
        let output = write(&dir.join("sym.prv"), "through the symbolic link");
        assert_eq!(
            fs::read_to_string(&target).unwrap(),
            "through the symbolic link",
            "in place: written at once"
        );
        output.commit().unwrap();
        assert!(fs::symlink_metadata(dir.join("sym.prv"))
            .unwrap()
            .file_type()
            .is_symlink());
        write(&dir.join("hard.prv"), "through the hard link")
            .commit()
            .unwrap();
        assert_eq!(
            fs::read_to_string(&target).unwrap(),
            "through the hard link"
        );
        assert_eq!(entries(&dir), ["hard.prv", "sym.prv", "target.prv"]);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_missing_folder_is_an_error_at_creation() {
        let dir = scratch("missing");
        let e = AtomicOutput::create(&dir.join("no/such/t.prv")).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        assert!(entries(&dir).is_empty());
        fs::remove_dir_all(&dir).unwrap();
    }
}
