//! `--nvtx-config FILE.toml`: which NVTX domains have payload fields converted to Paraver
//! events, and which fields (their names in NVTX_PAYLOAD_SCHEMA_ENTRIES). The file reads
//!
//! ```toml
//! [domains.MyLibrary]
//! payloads = ["Batch size", "Phase"]
//! ```
//!
//! A domain's fields become event types `NVTX_PAYLOAD_BASE + 1000·d + f` (d: the domain's place
//! among the file's domains, by name; f: the field's place in its list), written on the range's
//! thread at its start from the event's JSON payload (NVTX_EVENTS.jsonText, `nsys export
//! --include-json true`).

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// First event type of the payload fields' block (docs/TRACE-FORMAT.md).
pub const NVTX_PAYLOAD_BASE: u32 = 67_000_000;
/// Most domains, and most fields a domain, a file may name (their types stay in the block).
pub const MAX_ENTRIES: usize = 1000;

/// A parsed config: its file's name (for errors) and its domains by name.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NvtxConfig {
    pub file: String,
    pub domains: BTreeMap<String, DomainPayloads>,
}

/// What the file asks of one domain.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DomainPayloads {
    /// Payload fields converted to events, by their schema entry names.
    #[serde(default)]
    pub payloads: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileShape {
    #[serde(default)]
    domains: BTreeMap<String, DomainPayloads>,
}

impl NvtxConfig {
    /// Reads the config `text` of the file named `file`; a file that is not TOML, or has keys
    /// other than `domains.NAME.payloads`, gives one error naming the file and the cause.
    pub fn parse(file: &str, text: &str) -> Result<NvtxConfig> {
        let bad = |why: String| Error::Usage(format!("--nvtx-config {file}: {why}"));
        let shape: FileShape = toml::from_str(text).map_err(|e| bad(e.to_string()))?;
        if shape.domains.len() > MAX_ENTRIES {
            return Err(bad(format!("more than {MAX_ENTRIES} domains")));
        }
        for (name, d) in &shape.domains {
            if d.payloads.len() > MAX_ENTRIES {
                return Err(bad(format!(
                    "domain {name}: more than {MAX_ENTRIES} payload fields"
                )));
            }
            let mut seen = BTreeSet::new();
            if let Some(f) = d.payloads.iter().find(|f| !seen.insert(f.as_str())) {
                return Err(bad(format!("domain {name}: field '{f}' named twice")));
            }
        }
        Ok(NvtxConfig {
            file: file.to_owned(),
            domains: shape.domains,
        })
    }

    /// The event type of field `f` of the `d`-th domain (by name).
    pub fn field_type(d: usize, f: usize) -> u32 {
        NVTX_PAYLOAD_BASE + 1000 * d as u32 + f as u32
    }

    /// Per domain name, its fields with their event types.
    pub fn field_types(&self) -> BTreeMap<&str, Vec<(&str, u32)>> {
        (self.domains.iter().enumerate())
            .map(|(d, (name, cfg))| {
                let fields = (cfg.payloads.iter().enumerate())
                    .map(|(f, field)| (field.as_str(), Self::field_type(d, f)))
                    .collect();
                (name.as_str(), fields)
            })
            .collect()
    }

    /// Checks that the exports, together, have every domain the file names (`domains`: per
    /// export, discovery's NVTX domain names by (process, domainId)) and every field it names
    /// (a payload schema entry of that domain).
    pub fn check<'a>(
        &self,
        exports: &[crate::nsys::Export],
        domains: impl IntoIterator<Item = &'a BTreeMap<(i64, i64), String>>,
    ) -> Result<()> {
        let mut found: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
        for (ex, named) in exports.iter().zip(domains) {
            for ((_, id), name) in named {
                if let Some((name, _)) = self.domains.get_key_value(name.as_str()) {
                    found
                        .entry(name.as_str())
                        .or_default()
                        .extend(schema_fields(ex, *id)?);
                }
            }
        }
        let bad = |why: String| Error::Usage(format!("--nvtx-config {}: {why}", self.file));
        for (name, d) in &self.domains {
            let Some(fields) = found.get(name.as_str()) else {
                return Err(bad(format!("the exports have no NVTX domain '{name}'")));
            };
            if let Some(f) = d.payloads.iter().find(|f| !fields.contains(*f)) {
                return Err(bad(format!(
                    "NVTX domain '{name}' has no payload field '{f}' in NVTX_PAYLOAD_SCHEMA_ENTRIES"
                )));
            }
        }
        Ok(())
    }
}

/// The names of the payload schema entries of NVTX domain `domain_id` in the export.
fn schema_fields(ex: &crate::nsys::Export, domain_id: i64) -> Result<Vec<String>> {
    let t = "NVTX_PAYLOAD_SCHEMA_ENTRIES";
    if !ex.schema.has_columns(t, &["domainId", "name"]) {
        return Ok(Vec::new());
    }
    let sql = format!("SELECT DISTINCT name FROM {t} WHERE domainId = ?1 AND name IS NOT NULL");
    let err = |e| Error::read(&ex.label, "NVTX payload schema entries", e);
    let mut st = ex.conn.prepare(&sql).map_err(err)?;
    let rows = st.query_map([domain_id], |r| r.get(0)).map_err(err)?;
    rows.collect::<rusqlite::Result<Vec<_>>>().map_err(err)
}

/// A payload field's Paraver value: a non-negative integer as is, a number with a fraction
/// rounded; `None` for what is neither (strings are interned by the caller).
pub fn numeric_value(v: &serde_json::Value) -> Option<u64> {
    if let Some(u) = v.as_u64() {
        return Some(u);
    }
    v.as_f64()
        .filter(|x| x.is_finite() && *x >= 0.0 && *x < u64::MAX as f64)
        .map(|x| x.round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_domains_and_refuses_bad_files() {
        let c = NvtxConfig::parse(
            "a.toml",
            "[domains.B]\npayloads = [\"x\", \"y\"]\n[domains.A]\n",
        )
        .unwrap();
        let types = c.field_types();
        assert_eq!(types["A"], vec![]);
        assert_eq!(types["B"], vec![("x", 67_001_000), ("y", 67_001_001)]);
        let err = |t: &str| NvtxConfig::parse("a.toml", t).unwrap_err().to_string();
        assert!(err("[domains").contains("--nvtx-config a.toml: "));
        assert!(err("[domains.A]\nfields = []").contains("unknown field `fields`"));
        assert!(err("colour = 1").contains("unknown field `colour`"));
        assert!(err("[domains.A]\npayloads = [\"x\", \"x\"]").contains("field 'x' named twice"));
    }

    #[test]
    fn numbers_are_raw_or_rounded() {
        let v = |s: &str| numeric_value(&serde_json::from_str(s).unwrap());
        assert_eq!(v("7"), Some(7));
        assert_eq!(v("2.6"), Some(3));
        assert_eq!(v("-1"), None);
        assert_eq!(v("\"7\""), None);
    }
}
