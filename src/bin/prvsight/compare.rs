//! `prvsight compare A B`: two runs, each a metrics report (`metrics --json`, a bundle's
//! metrics.json) or an export, compared with a verdict (src/metrics/compare.rs).

use std::io::Write;
use std::path::Path;

use prvsight::metrics::compare::{compare, Comparison};
use prvsight::metrics::text::fmt_ns;
use prvsight::nsys::Export;
use prvsight::{Error, Options, Result};
use serde_json::Value;

/// The metrics report of `path`: read from a JSON file, or computed from an export.
fn report(path: &Path) -> Result<Value> {
    let label = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| Error::Unreadable {
        file: label.clone(),
        detail: e.to_string(),
    })?;
    if bytes.starts_with(b"SQLite format 3\0") {
        let ex = Export::open_path(path)?;
        let r = prvsight::metrics::compute(&[ex], &Options::default(), &Default::default())?;
        return serde_json::from_str(&r.to_json()?).map_err(|e| Error::BadData {
            file: label,
            why: format!("its metrics did not serialise: {e}"),
        });
    }
    if bytes.starts_with(b"PK") {
        return Err(Error::Usage(format!(
            "{label} is a zip archive: give the metrics.json inside the bundle"
        )));
    }
    serde_json::from_slice(&bytes).map_err(|e| Error::BadData {
        file: label,
        why: format!("neither an export nor a metrics report (JSON: {e})"),
    })
}

pub fn run(a: &Path, b: &Path, json: bool) -> Result<()> {
    let (ra, rb) = (report(a)?, report(b)?);
    let c = compare(&a.display().to_string(), &ra, &b.display().to_string(), &rb)?;
    let text = if json {
        let mut s = serde_json::to_string_pretty(&c).map_err(|e| Error::Write {
            what: "comparison JSON".into(),
            detail: e.to_string(),
        })?;
        s.push('\n');
        s
    } else {
        render(&c)
    };
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .map_err(|e| Error::write("standard output", e))
}

fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| "n/a".into(), |x| format!("{:.1}%", 100.0 * x))
}

/// The comparison as text: the verdict first, then what it rests on. Long: the text top to
/// bottom, as it prints.
fn render(c: &Comparison) -> String {
    let mut o = String::new();
    let mut line = |s: String| {
        o.push_str(&s);
        o.push('\n');
    };
    line(c.verdict.summary.clone());
    line(String::new());
    line(format!("  A: {}", c.a.label));
    line(format!("  B: {}", c.b.label));
    for s in &c.scale {
        line(format!("  note: {s}"));
    }
    line(String::new());
    line(format!(
        "{} factors (ln PE_B − ln PE_A = Σ ln f_B − ln f_A)",
        if c.model == "device" {
            "Device"
        } else {
            "Host (MPI)"
        }
    ));
    line(format!(
        "  {:<28}{:>10}{:>10}{:>12}{:>12}",
        "factor", "A", "B", "ln change", "share"
    ));
    let order = [
        "parallel_efficiency",
        "load_balance",
        "communication_efficiency",
        "orchestration_efficiency",
    ];
    for (k, f) in order.iter().filter_map(|k| Some((k, c.factors.get(k)?))) {
        line(format!(
            "  {:<28}{:>10}{:>10}{:>12}{:>12}",
            k,
            pct(f.a),
            pct(f.b),
            f.log_change.map_or("n/a".into(), |v| format!("{v:+.4}")),
            if *k == "parallel_efficiency" {
                String::new()
            } else {
                f.share
                    .map_or("n/a".into(), |v| format!("{:.0}%", 100.0 * v))
            }
        ));
    }
    line(String::new());
    line(format!("  {:<28}{:>16}{:>16}", "", "A", "B"));
    let opt_ns = |v: Option<f64>| v.map_or("-".to_owned(), fmt_ns);
    for (what, a, b) in [
        (
            "measured time",
            fmt_ns(c.a.elapsed_ns as f64),
            fmt_ns(c.b.elapsed_ns as f64),
        ),
        (
            "GPUs / MPI ranks",
            format!("{} / {}", c.a.gpus, c.a.ranks),
            format!("{} / {}", c.b.gpus, c.b.ranks),
        ),
        (
            "iterations",
            c.a.iterations.map_or("-".into(), |n| n.to_string()),
            c.b.iterations.map_or("-".into(), |n| n.to_string()),
        ),
        (
            "time per iteration (median)",
            opt_ns(c.a.time_per_iteration_ns),
            opt_ns(c.b.time_per_iteration_ns),
        ),
        (
            "kernel launches",
            c.a.launches.to_string(),
            c.b.launches.to_string(),
        ),
        (
            "launches per iteration",
            c.a.launches_per_iteration
                .map_or("-".into(), |v| format!("{v:.1}")),
            c.b.launches_per_iteration
                .map_or("-".into(), |v| format!("{v:.1}")),
        ),
    ] {
        line(format!("  {what:<28}{a:>16}{b:>16}"));
    }
    if !c.kernels.is_empty() {
        line(String::new());
        line(format!(
            "Kernels with the largest change of time {} (- = not among that run's top kernels)",
            if c.kernel_time == "per_iteration" {
                "per iteration"
            } else {
                "per second of T"
            }
        ));
        line(format!(
            "  {:>13}{:>13}{:>13}{:>12}{:>12}  kernel",
            "A time", "B time", "change", "A mean", "B mean"
        ));
        for k in &c.kernels {
            line(format!(
                "  {:>13}{:>13}{:>13}{:>12}{:>12}  {}",
                opt_ns(k.a_time_ns),
                opt_ns(k.b_time_ns),
                k.change_ns.map_or("-".into(), |v| format!(
                    "{}{}",
                    if v > 0.0 { "+" } else { "" },
                    fmt_ns(v)
                )),
                opt_ns(k.a_mean_ns),
                opt_ns(k.b_mean_ns),
                if k.short_name.is_empty() {
                    &k.name
                } else {
                    &k.short_name
                }
            ));
        }
    }
    o
}
