//! Paraver trace checker (placeholder interface; full rules being written).
use std::fmt;
use std::path::Path;

use crate::error::Result;

#[derive(Debug, Default)]
pub struct Report {
    pub problems: Vec<String>,
}

impl Report {
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty()
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} problem(s)", self.problems.len())
    }
}

#[cfg(not(target_family = "wasm"))]
pub fn check_files(_prv: &Path) -> Result<Report> {
    Ok(Report::default())
}
