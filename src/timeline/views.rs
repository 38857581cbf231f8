//! What each view of the timeline shows: the value a span has in it (the same numbers the .prv
//! writes, so labels and colours mean what they mean in Paraver), its labels and colours.

use serde::Serialize;

use super::span::What;
use crate::model::{NameId, Names};
use crate::paraver::events::{
    memcpy_value, MEMCPY_KIND_LABELS, MEMSET_LABEL, MEMSET_OP_VALUE, NAME_VALUE_OFFSET,
};
use crate::paraver::{mpi, states};

/// A view: one value per row and instant, like one Paraver window.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum View {
    /// The .prv's thread states (GPU: compute, NCCL, memory; host: CUDA, MPI, OS states).
    States,
    /// GPU streams: useful (compute kernels, graphs) or communication (NCCL kernels).
    Useful,
    Kernels,
    Nccl,
    Memory,
    CudaApi,
    Mpi,
    OsRuntime,
    OpenAcc,
    /// NVTX ranges of one domain at one nesting level (0 = outermost).
    Nvtx {
        domain: u32,
        level: u8,
    },
}

fn name_value(n: NameId) -> u32 {
    (u64::from(n.0) + NAME_VALUE_OFFSET) as u32
}

impl View {
    /// The value of a span in this view, `None` when the view does not show it.
    pub fn value(self, w: &What) -> Option<u32> {
        use What::*;
        match (self, w) {
            (View::States, Kernel { comm: true, .. }) => Some(states::GROUP_COMMUNICATION),
            (View::States, Kernel { .. } | Graph { .. }) => Some(states::RUNNING),
            (View::States, Memcpy { .. } | Memset { .. }) => Some(states::MEMORY_TRANSFER),
            (View::States, Cuda { sync, .. }) => Some(if *sync {
                states::SYNCHRONIZATION
            } else {
                states::CUDA_API
            }),
            (View::States, Mpi { activity, .. } | Os { activity, .. } | Acc { activity, .. }) => {
                Some(states::of_host(*activity))
            }
            (View::Useful, Kernel { comm: true, .. }) => Some(states::GROUP_COMMUNICATION),
            (View::Useful, Kernel { .. } | Graph { .. }) => Some(states::RUNNING),
            (View::Kernels, Kernel { short, .. }) => Some(name_value(*short)),
            (View::Kernels, Graph { name }) => Some(name_value(*name)),
            (
                View::Nccl,
                Kernel {
                    short, comm: true, ..
                },
            ) => Some(name_value(*short)),
            (View::Memory, Memcpy { kind, .. }) => Some(memcpy_value(*kind) as u32),
            (View::Memory, Memset { .. }) => Some(MEMSET_OP_VALUE as u32),
            (View::CudaApi, Cuda { name, .. }) => Some(name_value(*name)),
            (View::Mpi, Mpi { value, .. }) => Some(*value),
            (View::OsRuntime, Os { name, .. }) => Some(name_value(*name)),
            (View::OpenAcc, Acc { name, .. }) => Some(name_value(*name)),
            (
                View::Nvtx { domain, level },
                Nvtx {
                    name,
                    domain: d,
                    level: l,
                },
            ) if *d == domain && *l == level => Some(name_value(*name)),
            _ => None,
        }
    }

    /// The fixed views that show a span of this kind (NVTX ranges: their own view).
    pub fn fixed_for(w: &What) -> &'static [View] {
        use What::*;
        match w {
            Kernel { comm: true, .. } => &[View::States, View::Useful, View::Kernels, View::Nccl],
            Kernel { .. } | Graph { .. } => &[View::States, View::Useful, View::Kernels],
            Memcpy { .. } | Memset { .. } => &[View::States, View::Memory],
            Cuda { .. } => &[View::States, View::CudaApi],
            Mpi { .. } => &[View::States, View::Mpi],
            Os { .. } => &[View::States, View::OsRuntime],
            Acc { .. } => &[View::States, View::OpenAcc],
            Nvtx { .. } => &[],
        }
    }

    /// A stable id for the page and the CLI: `states`, `kernels`, … `nvtx:DOMAIN:LEVEL`.
    pub fn id(self) -> String {
        match self {
            View::States => "states".into(),
            View::Useful => "useful".into(),
            View::Kernels => "kernels".into(),
            View::Nccl => "nccl".into(),
            View::Memory => "memory".into(),
            View::CudaApi => "cuda_api".into(),
            View::Mpi => "mpi".into(),
            View::OsRuntime => "os".into(),
            View::OpenAcc => "openacc".into(),
            View::Nvtx { domain, level } => format!("nvtx:{domain}:{level}"),
        }
    }

    pub fn title(self, domains: &[String]) -> String {
        match self {
            View::States => "Thread states".into(),
            View::Useful => "GPU useful / communication / idle".into(),
            View::Kernels => "CUDA kernels".into(),
            View::Nccl => "NCCL kernels".into(),
            View::Memory => "Memory operations".into(),
            View::CudaApi => "CUDA API calls".into(),
            View::Mpi => "MPI calls".into(),
            View::OsRuntime => "OS runtime calls".into(),
            View::OpenAcc => "OpenACC runtime".into(),
            View::Nvtx { domain, level } => {
                let d = match domains.get(domain as usize).map(String::as_str) {
                    None | Some("") => "default domain".to_owned(),
                    Some(d) => d.to_owned(),
                };
                format!("NVTX {d} · level {}", u32::from(level) + 1)
            }
        }
    }

    /// What a row with nothing in this view is doing, said in the legend.
    pub fn blank(self) -> &'static str {
        match self {
            View::States => "GPU idle; host running outside traced calls",
            View::Useful => "idle (or memory operations only)",
            View::Kernels => "no kernel running",
            View::Nccl => "no NCCL kernel running",
            View::Memory => "no memory operation",
            View::CudaApi => "outside CUDA calls",
            View::Mpi => "outside MPI",
            View::OsRuntime => "outside OS runtime calls",
            View::OpenAcc => "outside the OpenACC runtime",
            View::Nvtx { .. } => "outside ranges of this level",
        }
    }

    /// The label of a value, as the .pcf writes it.
    pub fn label(self, value: u32, names: &Names) -> String {
        let name = |v: u32| {
            let id = u64::from(v).saturating_sub(NAME_VALUE_OFFSET) as u32;
            if id == 0 || id as usize > names.len() {
                format!("value {v}")
            } else {
                crate::paraver::pcf::clean_label(names.get(NameId(id)))
            }
        };
        match self {
            View::States => state_label(value),
            View::Useful if value == states::RUNNING => "Useful (compute kernel)".into(),
            View::Useful => "Communication (NCCL kernel)".into(),
            View::Memory if u64::from(value) == MEMSET_OP_VALUE => MEMSET_LABEL.into(),
            View::Memory => MEMCPY_KIND_LABELS
                .get((value as usize).saturating_sub(1))
                .map_or_else(|| format!("value {value}"), |l| (*l).to_owned()),
            View::Mpi => match mpi::extrae_label(u64::from(value)) {
                Some(l) => l.to_owned(),
                None => {
                    let id = u64::from(value).saturating_sub(mpi::UNKNOWN_MPI_BASE) as u32;
                    if id == 0 || id as usize > names.len() {
                        format!("MPI call {value}")
                    } else {
                        crate::paraver::pcf::clean_label(names.get(NameId(id)))
                    }
                }
            },
            _ => name(value),
        }
    }

    /// The colour of a value: Paraver's state colours for states, its code palette otherwise.
    pub fn colour(self, value: u32) -> [u8; 3] {
        match self {
            View::States | View::Useful => states::STATES
                .iter()
                .find(|(s, _, _)| *s == value)
                .map_or_else(|| code_colour(value), |(_, _, (r, g, b))| [*r, *g, *b]),
            _ => code_colour(value),
        }
    }
}

fn state_label(value: u32) -> String {
    states::STATES
        .iter()
        .find(|(s, _, _)| *s == value)
        .map_or_else(|| format!("State {value}"), |(_, l, _)| (*l).to_owned())
}

/// Paraver's code colours (paraver-kernel's `SemanticColor::codeColor`): the colour of value v
/// in a window that shows event values, before its palette repeats past the 49th.
const CODE_COLOURS: [[u8; 3]; 49] = [
    [117, 195, 255],
    [0, 0, 255],
    [255, 255, 255],
    [255, 0, 0],
    [255, 0, 174],
    [179, 0, 0],
    [0, 255, 0],
    [255, 255, 0],
    [235, 0, 0],
    [0, 162, 0],
    [255, 0, 255],
    [100, 100, 177],
    [172, 174, 41],
    [255, 144, 26],
    [2, 255, 177],
    [192, 224, 0],
    [66, 66, 66],
    [189, 168, 100],
    [95, 200, 0],
    [203, 60, 69],
    [0, 109, 255],
    [200, 61, 68],
    [200, 66, 0],
    [10, 66, 40],
    [139, 121, 177],
    [116, 116, 116],
    [200, 50, 89],
    [255, 171, 98],
    [0, 68, 189],
    [66, 66, 0],
    [255, 46, 0],
    [100, 216, 32],
    [0, 50, 120],
    [105, 105, 0],
    [132, 75, 255],
    [184, 232, 0],
    [0, 109, 112],
    [189, 168, 100],
    [132, 75, 75],
    [255, 75, 75],
    [255, 20, 0],
    [130, 30, 30],
    [10, 66, 10],
    [184, 132, 0],
    [100, 16, 32],
    [146, 255, 255],
    [50, 50, 100],
    [146, 0, 255],
    [0, 138, 119],
];

/// Colour of an event value: Paraver extends its 49 colours by shades one step off the colours
/// from the second on, so past the table values cycle through those 48.
/// Paraver's white (value 2) stands out on its black background but would vanish on ours, where
/// white means "nothing": a mid grey no other value uses takes its place.
pub fn code_colour(value: u32) -> [u8; 3] {
    let v = value as usize;
    let c = if v < CODE_COLOURS.len() {
        CODE_COLOURS[v]
    } else {
        CODE_COLOURS[1 + (v - CODE_COLOURS.len()) % (CODE_COLOURS.len() - 1)]
    };
    if c == [255, 255, 255] {
        ON_WHITE
    } else {
        c
    }
}

const ON_WHITE: [u8; 3] = [150, 150, 150];

/// How a view is described to the page.
#[derive(Clone, Debug, Serialize)]
pub struct ViewInfo {
    pub id: String,
    pub title: String,
    /// Rows with anything in this view, in row order.
    pub rows: Vec<u32>,
    /// Values seen, most time first (at most [`LEGEND_MAX`]).
    pub legend: Vec<LegendEntry>,
    /// Distinct values seen (the legend may list fewer).
    pub values: usize,
    pub blank: &'static str,
}

#[derive(Clone, Debug, Serialize)]
pub struct LegendEntry {
    pub value: u32,
    pub label: String,
    /// `#rrggbb`
    pub colour: String,
    /// Time covered, summed over rows (at the finest bins' resolution).
    pub ns: u64,
}

pub const LEGEND_MAX: usize = 200;

pub fn hex([r, g, b]: [u8; 3]) -> String {
    format!("#{r:02x}{g:02x}{b:02x}")
}
