//! What a [`ParaverWriter`](super::ParaverWriter) wrote, as `prvsight check` would find it in the
//! files: the header line, the states, event types and message tags of the body (with their
//! counts) and the NVTX domains' push/pop types. The bundle picks the Paraver views that apply to
//! its trace from this, without reading the trace back.

use std::collections::BTreeMap;

/// Records of a written body, counted as the checker counts them (`check::Stats`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BodyCounts {
    /// State → records.
    pub states: BTreeMap<u32, u64>,
    /// Event type → occurrences (any value, 0 included).
    pub event_types: BTreeMap<u32, u64>,
    /// Communication tag → records.
    pub comm_tags: BTreeMap<u64, u64>,
}

impl BodyCounts {
    /// Counts one body line as written (no newline). Used where a time window rewrites the lines,
    /// so the counts are those of what reached the file.
    pub(crate) fn note_line(&mut self, line: &[u8]) {
        let text = std::str::from_utf8(line).unwrap_or("");
        let f: Vec<u64> = text.split(':').map(|x| x.parse().unwrap_or(0)).collect();
        match f.first() {
            Some(1) if f.len() == 8 => *self.states.entry(f[7] as u32).or_insert(0) += 1,
            Some(2) if f.len() >= 8 => {
                for p in f[6..].chunks_exact(2) {
                    *self.event_types.entry(p[0] as u32).or_insert(0) += 1;
                }
            }
            Some(3) if f.len() == 15 => *self.comm_tags.entry(f[14]).or_insert(0) += 1,
            _ => {}
        }
    }
}

/// One NVTX domain of the trace and the event type of its push/pop ranges.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NvtxDomain {
    /// As the export names it; empty for the default domain.
    pub name: String,
    /// Push/pop type: 9600 + 100·k, or 9500 for NCCL (whose neighbours hold payload fields, not
    /// nesting levels).
    pub base: u32,
}

impl NvtxDomain {
    /// Whether `base + L` holds the ranges at nesting level L alone.
    pub fn has_levels(&self) -> bool {
        self.base != super::events::NVTX_NCCL_DOMAIN
    }
}

/// What the writer wrote, once its stream has finished.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Written {
    /// The .prv's first line, without its newline.
    pub header: String,
    pub body: BodyCounts,
    /// Every domain of the inputs, in type order of the writer's map (default domain first).
    pub nvtx_domains: Vec<NvtxDomain>,
}

/// The writer's running account of what it wrote besides its event types (which its .pcf
/// bookkeeping counts): records per state and per message tag, and its header line.
#[derive(Default)]
pub(crate) struct Tally {
    /// Records per state, by state.
    states: Vec<u64>,
    comm_tags: BTreeMap<u64, u64>,
    /// With a time window, what the lines that reached the body hold: the window rewrites,
    /// drops and adds lines after they were counted.
    cut: Option<BodyCounts>,
    /// The .prv's first line, without its newline.
    pub header: String,
}

impl Tally {
    /// Whether to count the body's lines themselves (a time window cuts them).
    pub fn count_lines(&mut self, yes: bool) {
        self.cut = yes.then(BodyCounts::default);
    }

    /// A line reaching the body.
    #[inline]
    pub fn line(&mut self, line: &[u8]) {
        if let Some(c) = self.cut.as_mut() {
            c.note_line(line);
        }
    }

    /// A state record written (now or once the stream reaches its time).
    #[inline]
    pub fn state(&mut self, state: u32) {
        let k = state as usize;
        if k >= self.states.len() {
            self.states.resize(k + 1, 0);
        }
        self.states[k] += 1;
    }

    /// A communication record written.
    pub fn comm(&mut self, tag: u64) {
        *self.comm_tags.entry(tag).or_insert(0) += 1;
    }

    /// The report, given the event types' pair counts and the domain → push/pop type map.
    pub fn written(
        &self,
        event_pairs: impl Iterator<Item = (u32, u64)>,
        domain_names: &[String],
        domain_types: &[u32],
    ) -> Written {
        let body = match &self.cut {
            Some(c) => c.clone(),
            None => BodyCounts {
                states: (self.states.iter().enumerate())
                    .filter(|(_, &n)| n > 0)
                    .map(|(s, &n)| (s as u32, n))
                    .collect(),
                event_types: event_pairs.filter(|(_, n)| *n > 0).collect(),
                comm_tags: self.comm_tags.clone(),
            },
        };
        Written {
            header: self.header.clone(),
            body,
            nvtx_domains: (domain_names.iter().zip(domain_types))
                .map(|(name, &base)| NvtxDomain {
                    name: name.clone(),
                    base,
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_counted_by_kind() {
        let mut c = BodyCounts::default();
        for l in [
            "1:0:1:1:1:0:100:1",
            "2:0:1:1:1:5:9600:3:9601:3",
            "2:0:1:1:1:9:9600:0:9601:0",
            "3:0:1:1:1:10:10:0:1:1:2:20:20:0:55001",
            "c:nothing",
        ] {
            c.note_line(l.as_bytes());
        }
        assert_eq!(c.states, BTreeMap::from([(1, 1)]));
        assert_eq!(c.event_types, BTreeMap::from([(9600, 2), (9601, 2)]));
        assert_eq!(c.comm_tags, BTreeMap::from([(55001, 1)]));
    }
}
