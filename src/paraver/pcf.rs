//! The .pcf: default options, state labels and colours, and one EVENT_TYPE block per type with the
//! labels of exactly the values that occur in the trace.

use std::fmt::Write as _;

use super::events::{
    MEMCPY_KIND_LABELS, MEMSET_LABEL, MEMSET_OP_VALUE, MEM_KIND_LABELS, NAME_VALUE_OFFSET,
};
use super::prv::{ParaverWriter, ValueLabels};
use super::states::STATES;
use crate::model::{nccl, NameId, Names};

const HEADER: &str = "DEFAULT_OPTIONS

LEVEL               THREAD
UNITS               NANOSEC
LOOK_BACK           100
SPEED               1
FLAG_ICONS          ENABLED
NUM_OF_STATE_COLORS 1000
YMAX_SCALE          37


DEFAULT_SEMANTIC

THREAD_FUNC          State As Is

";

/// Makes a label safe for one pcf line (no line breaks or tabs; never empty).
pub fn clean_label(s: &str) -> String {
    let t: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let t = t.trim();
    if t.is_empty() {
        "(empty)".to_owned()
    } else {
        t.to_owned()
    }
}

pub fn render(w: &ParaverWriter, names: &Names) -> String {
    let mut out = String::from(HEADER);
    out.push_str("\nSTATES\n");
    for (n, label, _) in STATES {
        let _ = writeln!(out, "{n}    {label}");
    }
    out.push_str("\n\nSTATES_COLOR\n");
    for (n, _, (r, g, b)) in STATES {
        let _ = writeln!(out, "{n}    {{{r},{g},{b}}}");
    }
    let mut used: Vec<_> = w.used_types.iter().collect();
    used.sort_unstable_by_key(|(ty, _)| *ty);
    for (ty, super::prv::UsedType { labels, values, .. }) in used {
        // Sorted, so the same trace always gives the same pcf.
        let values = values.sorted();
        let gradient = if *labels == ValueLabels::Numeric {
            1
        } else {
            0
        };
        let _ = write!(
            out,
            "\n\nEVENT_TYPE\n{gradient}    {ty}    {}\n",
            clean_label(&match w.metric_labels.get(ty) {
                Some(n) => names.get(*n).to_owned(),
                None => w.label_of(*ty),
            })
        );
        if *labels == ValueLabels::Numeric {
            continue;
        }
        out.push_str("VALUES\n0      End\n");
        for v in &values {
            let label = match labels {
                ValueLabels::Names => {
                    clean_label(names.get(NameId((v - NAME_VALUE_OFFSET) as u32)))
                }
                ValueLabels::MemoryOps if *v == MEMSET_OP_VALUE => MEMSET_LABEL.to_owned(),
                ValueLabels::MemoryOps => MEMCPY_KIND_LABELS[(*v - 1) as usize].to_owned(),
                ValueLabels::MemKinds => MEM_KIND_LABELS[(*v - 1) as usize].to_owned(),
                ValueLabels::Cpu => format!("CPU {}", v - 1),
                ValueLabels::AccKind => crate::model::classify::ACC_EVENT_KINDS
                    .get((v - 1) as usize)
                    .map_or_else(
                        || format!("OpenACC event kind {}", v - 1),
                        |l| (*l).to_owned(),
                    ),
                ValueLabels::NcclCollective => nccl::COLLECTIVES[(*v - 1) as usize].to_owned(),
                ValueLabels::NcclAlgorithm => nccl::ALGORITHMS[(*v - 1) as usize].to_owned(),
                ValueLabels::NcclProtocol => nccl::PROTOCOLS[(*v - 1) as usize].to_owned(),
                ValueLabels::NcclDatatype => nccl::DATATYPES[(*v - 1) as usize].to_owned(),
                ValueLabels::NcclOp => nccl::OPS[(*v - 1) as usize].to_owned(),
                ValueLabels::Mpi => match super::mpi::extrae_label(*v) {
                    Some(l) => l.to_owned(),
                    None => {
                        clean_label(names.get(NameId((v - super::mpi::UNKNOWN_MPI_BASE) as u32)))
                    }
                },
                ValueLabels::Fixed(table) => (table.iter())
                    .find(|(value, _)| value == v)
                    .map_or_else(|| format!("{v}"), |(_, l)| (*l).to_owned()),
                ValueLabels::PayloadStrings => clean_label(w.payloads.string(*v)),
                ValueLabels::Numeric => unreachable!(),
            };
            let _ = writeln!(out, "{v}      {label}");
        }
    }
    out
}
