//! NVTX payload fields as events (`--nvtx-config`, src/nvtx_config.rs): per NVTX domain the
//! fields the config names, read from each range's JSON payload.

use super::used_types::ValueLabels;
use crate::nvtx_config::{numeric_value, NvtxConfig};
use crate::FastMap;
use std::collections::BTreeMap;

/// The fields each domain converts, and what the .pcf needs to label them.
#[derive(Default)]
pub(crate) struct NvtxPayloads {
    /// Per NVTX domain index, its fields' names and event types (empty: none converted).
    fields: Vec<Vec<(String, u32)>>,
    /// Event type → its .pcf label.
    labels: BTreeMap<u32, String>,
    /// String values met, in order: value k + 1 is `strings[k]`.
    strings: Vec<String>,
    string_values: FastMap<String, u64>,
}

impl NvtxPayloads {
    /// The fields `config` names for the trace's `domains` (by name); the NCCL domain keeps its
    /// own payload types (9501–9507), so the config adds none there.
    pub fn new(config: Option<&NvtxConfig>, domains: &[String]) -> NvtxPayloads {
        let mut p = NvtxPayloads::default();
        let Some(config) = config else {
            return p;
        };
        let types = config.field_types();
        p.fields = (domains.iter())
            .map(|d| match types.get(d.as_str()) {
                Some(fields) if d != "NCCL" => (fields.iter())
                    .map(|(f, ty)| ((*f).to_owned(), *ty))
                    .collect(),
                _ => Vec::new(),
            })
            .collect();
        for (d, fields) in domains.iter().zip(&p.fields) {
            for (f, ty) in fields {
                p.labels
                    .insert(*ty, format!("NVTX payload, domain {d}: {f}"));
            }
        }
        p
    }

    /// The label of payload type `ty`, if it is one.
    pub fn label(&self, ty: u32) -> Option<&str> {
        self.labels.get(&ty).map(String::as_str)
    }

    /// The label of string value `v` (of a [`ValueLabels::PayloadStrings`] type).
    pub fn string(&self, v: u64) -> &str {
        (v.checked_sub(1))
            .and_then(|k| self.strings.get(k as usize))
            .map_or("", String::as_str)
    }

    /// Adds the pairs of the payload `json` of a range of domain `domain`: each configured field
    /// the payload has, as a number or a string value, in the config's order.
    pub fn pairs(
        &mut self,
        domain: u32,
        json: Option<&str>,
        pairs: &mut Vec<(u32, u64)>,
        labels: &mut Vec<ValueLabels>,
    ) {
        let Some(fields) = self.fields.get(domain as usize).filter(|f| !f.is_empty()) else {
            return;
        };
        let Some(serde_json::Value::Object(obj)) =
            json.and_then(|j| serde_json::from_str::<serde_json::Value>(j).ok())
        else {
            return;
        };
        for (name, ty) in fields {
            match obj.get(name) {
                Some(serde_json::Value::String(s)) => {
                    let next = self.strings.len() as u64 + 1;
                    let v = *self.string_values.entry(s.clone()).or_insert(next);
                    if v == next {
                        self.strings.push(s.clone());
                    }
                    pairs.push((*ty, v));
                    labels.push(ValueLabels::PayloadStrings);
                }
                Some(v) => {
                    if let Some(x) = numeric_value(v) {
                        pairs.push((*ty, x));
                        labels.push(ValueLabels::Numeric);
                    }
                }
                None => {}
            }
        }
    }
}
