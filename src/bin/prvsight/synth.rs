//! `prvsight synth` (hidden): synthetic exports of built-in scenarios, for tests and benchmarks.

use std::path::Path;

use prvsight::{Error, Result};

/// `synth SCENARIO -o OUT.sqlite`: one synthetic export.
pub fn scenario(scenario: &str, output: &Path, seed: u64, print_spec: bool) -> Result<()> {
    let sc = prvsight::synth::build(scenario, seed)?;
    sc.export.write_path(output)?;
    if print_spec {
        let json = serde_json::to_string_pretty(&sc.spec).map_err(|e| Error::Write {
            what: "the scenario spec".into(),
            detail: e.to_string(),
        })?;
        println!("{json}");
    }
    eprintln!(
        "prvsight: wrote {} (synthetic nsys {} export, scenario {}: {}, seed {seed})",
        output.display(),
        prvsight::synth::PRODUCT_VERSION,
        scenario,
        sc.spec.summary
    );
    Ok(())
}

/// `synth mpi_run --ranks N -o DIR`: one synthetic export per rank.
pub fn run(run: &prvsight::synth::mpi_run::MpiRun, dir: &Path, print_spec: bool) -> Result<()> {
    let spec = run.spec()?;
    let paths = run.write(dir)?;
    if print_spec {
        let json = serde_json::to_string_pretty(&spec).map_err(|e| Error::Write {
            what: "the run's spec".into(),
            detail: e.to_string(),
        })?;
        println!("{json}");
    }
    eprintln!(
        "prvsight: wrote {} synthetic nsys {} exports into {} ({} ranks on {} nodes, {} iterations, seed {})",
        paths.len(),
        prvsight::synth::PRODUCT_VERSION,
        dir.display(),
        run.ranks,
        spec.nodes,
        run.iterations,
        run.seed
    );
    Ok(())
}
