//! Errors as types: each names the input file and what is wrong with it, so the CLI and the page can
//! show one clear message instead of a panic.

use std::fmt;

/// Everything that can stop a conversion. `Clone`: a reader on a helper thread hands its error
/// to every stream that asks after it failed.
#[derive(Clone, Debug, thiserror::Error)]
pub enum Error {
    /// The file could not be opened or read at all.
    #[error("{file}: cannot read the file: {detail}")]
    Unreadable { file: String, detail: String },
    /// SQLite refused the file: not a database, or a damaged/truncated one.
    #[error("{file}: not a readable SQLite database ({detail}); give the .sqlite file written by `nsys export --type sqlite`")]
    NotSqlite { file: String, detail: String },
    /// A SQLite database, but not one written by Nsight Systems.
    #[error("{file}: not an Nsight Systems export: {why}")]
    NotNsysExport { file: String, why: String },
    /// A table exists but lacks what we need, or has a shape we cannot read.
    #[error("{file}: table {table}: {why}")]
    Schema {
        file: String,
        table: String,
        why: String,
    },
    /// SQLite failed while we read a table (e.g. a corrupt page in the middle of the file).
    #[error("{file}: reading {what} failed: {detail}")]
    Read {
        file: String,
        what: String,
        detail: String,
    },
    /// Values that cannot form a valid trace.
    #[error("{file}: {why}")]
    BadData { file: String, why: String },
    /// Writing an output failed.
    #[error("writing {what}: {detail}")]
    Write { what: String, detail: String },
    /// The caller asked for something that cannot be done (bad option, no input...).
    #[error("{0}")]
    Usage(String),
    /// The user cancelled the conversion.
    #[error("conversion cancelled")]
    Cancelled,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Wrap a SQLite error met while reading `what` of `file`, telling a damaged file apart.
    pub fn read(file: &str, what: impl fmt::Display, e: rusqlite::Error) -> Error {
        use rusqlite::ffi::ErrorCode;
        if let rusqlite::Error::SqliteFailure(f, _) = &e {
            if matches!(f.code, ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) {
                return Error::NotSqlite {
                    file: file.into(),
                    detail: format!("{e} while reading {what}; the file is damaged or truncated"),
                };
            }
        }
        Error::Read {
            file: file.into(),
            what: what.to_string(),
            detail: e.to_string(),
        }
    }

    pub fn write(what: impl fmt::Display, e: std::io::Error) -> Error {
        Error::Write {
            what: what.to_string(),
            detail: e.to_string(),
        }
    }
}
