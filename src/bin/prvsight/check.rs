//! `prvsight check TRACE`: a Paraver trace against the format rules, optionally against cfgs
//! and against the exports it was converted from.

use std::path::{Path, PathBuf};

use prvsight::nsys::Export;
use prvsight::{Error, Result};

/// Checks `trace`; an error where any problem was found.
pub fn run(
    trace: &Path,
    allow_state_gaps: bool,
    cfgs: &[PathBuf],
    against: &[PathBuf],
) -> Result<()> {
    use prvsight::paraver::cfg::{self, Severity, TraceFacts};
    use prvsight::paraver::check::{check_files_with, CheckOptions};
    let opts = CheckOptions {
        require_full_state_coverage: !allow_state_gaps,
        ..CheckOptions::default()
    };
    let report = check_files_with(trace, &opts)?;
    println!("{report}");
    let mut failed = report.problem_count();
    let facts = TraceFacts::from_report(&report);
    for path in cfgs {
        let text = std::fs::read_to_string(path).map_err(|e| Error::Unreadable {
            file: path.display().to_string(),
            detail: e.to_string(),
        })?;
        let findings = cfg::assess_cfg(&cfg::parse(&text), &facts);
        let errors = findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .count();
        failed += errors as u64;
        let verdict = match (errors, findings.len()) {
            (0, 0) => "applies".to_owned(),
            (0, n) => format!("applies, {n} warning(s)"),
            (e, _) => format!("does not apply, {e} error(s)"),
        };
        println!("{}: {verdict}", path.display());
        for f in &findings {
            let tag = if f.severity == Severity::Error {
                "error"
            } else {
                "warning"
            };
            println!("  - {tag}: {}", f.message);
        }
    }
    if !against.is_empty() {
        failed += check_against(trace, &report, against)?;
    }
    if failed == 0 {
        Ok(())
    } else {
        Err(Error::BadData {
            file: trace.display().to_string(),
            why: format!("{failed} problem(s) found"),
        })
    }
}

/// Prints the GPU streams' busy time against the exports'; gives the number that differ.
fn check_against(
    trace: &Path,
    report: &prvsight::paraver::check::Report,
    against: &[PathBuf],
) -> Result<u64> {
    let row_path = prvsight::paraver::check::companion_names(&trace.to_string_lossy())
        .map(|(_, row, _)| PathBuf::from(row))
        .unwrap_or_default();
    let row = std::fs::read_to_string(&row_path).map_err(|e| Error::Unreadable {
        file: row_path.display().to_string(),
        detail: e.to_string(),
    })?;
    let exports = against
        .iter()
        .map(|p| Export::open_path(p))
        .collect::<Result<Vec<_>>>()?;
    let streams = prvsight::verify::against_exports(report, &row, &exports)?;
    let differ: Vec<_> = streams.iter().filter(|s| !s.agrees()).collect();
    println!(
        "against {} export(s): {} GPU stream(s), {} with the export's kernel and memory-operation time",
        exports.len(),
        streams.len(),
        streams.len() - differ.len()
    );
    for s in &differ {
        println!(
            "  - {}: kernels {} ns in the trace, {} ns in the export; memory operations {} ns, {} ns",
            s.label, s.trace.kernel_ns, s.export.kernel_ns, s.trace.memory_ns, s.export.memory_ns
        );
    }
    Ok(differ.len() as u64)
}
