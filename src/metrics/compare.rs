//! Two runs compared, with a verdict: which efficiency factor moved the parallel efficiency.
//!
//! PE = LB × CommE × OrchE, so ln PE_B − ln PE_A = Σ (ln f_B − ln f_A) exactly: each factor's
//! log change is its share of the change, and the largest one in magnitude is the factor that
//! moved PE. Runs are read from their metrics reports as JSON (a report of this version or an
//! older one, a bundle's metrics.json), so that a run converted last month compares with one
//! converted now; times are compared per iteration where both runs have iterations (two captures
//! of different length are otherwise not comparable), and per launch.

use serde::Serialize;
use serde_json::Value;

use crate::error::{Error, Result};

/// Factor keys, in the order of the product (as in the reports' `efficiency` and `host`).
pub const DEVICE_FACTORS: [&str; 3] = [
    "load_balance",
    "communication_efficiency",
    "orchestration_efficiency",
];
pub const HOST_FACTORS: [&str; 2] = ["load_balance", "communication_efficiency"];

/// Kernel rows kept in `kernels`.
const KERNEL_ROWS: usize = 10;

/// One run as the comparison sees it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Run {
    pub label: String,
    pub inputs: Vec<String>,
    pub gpus: u64,
    /// MPI ranks (processes with MPI calls).
    pub ranks: u64,
    /// T of its report.
    pub elapsed_ns: u64,
    pub iterations: Option<u64>,
    /// Median iteration duration.
    pub time_per_iteration_ns: Option<f64>,
    pub parallel_efficiency: Option<f64>,
    /// Kernel launches (all GPUs, inside T).
    pub launches: u64,
    pub launches_per_iteration: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FactorChange {
    pub a: Option<f64>,
    pub b: Option<f64>,
    /// ln b − ln a (null where either is missing or zero).
    pub log_change: Option<f64>,
    /// log_change / (ln PE_B − ln PE_A): its part of the change of ln PE.
    pub share: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Verdict {
    /// The factor whose log change is largest in magnitude (a key of `factors` other than
    /// `parallel_efficiency`); null when PE cannot be decomposed.
    pub main_factor: Option<&'static str>,
    /// `better`, `worse` or `same` (PE within 0.1 point).
    pub direction: &'static str,
    /// The sentence to read first.
    pub summary: String,
}

/// A kernel in either run's top list; a side where it is not in the top list is null (it may
/// run there below the list).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KernelChange {
    pub name: String,
    pub short_name: String,
    pub a_count: Option<u64>,
    pub b_count: Option<u64>,
    pub a_mean_ns: Option<f64>,
    pub b_mean_ns: Option<f64>,
    /// Total time per iteration where both runs have iterations, else per second of T.
    pub a_time_ns: Option<f64>,
    pub b_time_ns: Option<f64>,
    /// b_time_ns − a_time_ns: positive = more time (worse).
    pub change_ns: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Comparison {
    pub a: Run,
    pub b: Run,
    /// `device` (both runs have GPUs) or `host` (MPI ranks on both sides).
    pub model: &'static str,
    /// `parallel_efficiency` and each factor of the model.
    pub factors: std::collections::BTreeMap<&'static str, FactorChange>,
    pub verdict: Verdict,
    /// What differs in scale (GPUs, ranks, capture length), if anything.
    pub scale: Vec<String>,
    /// `per_iteration` or `per_second` (what `kernels[].a_time_ns` are).
    pub kernel_time: &'static str,
    pub kernels: Vec<KernelChange>,
}

fn num(v: &Value) -> Option<f64> {
    v.as_f64()
}

fn int(v: &Value) -> u64 {
    v.as_u64().unwrap_or(0)
}

/// The run a metrics report (JSON) describes.
fn run(label: &str, r: &Value) -> Result<Run> {
    if !r.get("efficiency").is_some_and(Value::is_object) {
        return Err(Error::Usage(format!(
            "{label}: not a prvsight metrics report (no `efficiency`); give `prvsight metrics --json` output, a bundle's metrics.json or an export"
        )));
    }
    let summary = &r["iterations"]["summary"];
    let iterations = summary["count"].as_u64().filter(|&n| n > 0);
    let launches: u64 = r["gpus"]
        .as_array()
        .map(|g| g.iter().map(|g| int(&g["counts"]["kernels"])).sum())
        .unwrap_or(0);
    Ok(Run {
        label: label.to_owned(),
        inputs: r["inputs"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default(),
        gpus: int(&r["efficiency"]["gpus"]),
        ranks: r["host"]["ranks"].as_array().map_or(0, |a| a.len() as u64),
        elapsed_ns: int(&r["window"]["elapsed_ns"]),
        iterations,
        time_per_iteration_ns: iterations.and_then(|_| num(&summary["duration_ns"]["median"])),
        parallel_efficiency: None,
        launches,
        launches_per_iteration: iterations.map(|n| launches as f64 / n as f64),
    })
}

/// The factors of the model `model` of report `r`.
fn factors_of<'a>(r: &'a Value, model: &str) -> &'a Value {
    if model == "device" {
        &r["efficiency"]
    } else {
        &r["host"]
    }
}

/// Compares run A with run B (their metrics reports as JSON, labelled for messages).
pub fn compare(a_label: &str, a: &Value, b_label: &str, b: &Value) -> Result<Comparison> {
    let (mut ra, mut rb) = (run(a_label, a)?, run(b_label, b)?);
    let model = if ra.gpus > 0 && rb.gpus > 0 {
        "device"
    } else if ra.ranks > 0 && rb.ranks > 0 {
        "host"
    } else {
        return Err(Error::Usage(format!(
            "{a_label} and {b_label} have no efficiency model in common: {} GPUs and {} MPI ranks against {} GPUs and {} MPI ranks",
            ra.gpus, ra.ranks, rb.gpus, rb.ranks
        )));
    };
    let (fa, fb) = (factors_of(a, model), factors_of(b, model));
    ra.parallel_efficiency = num(&fa["parallel_efficiency"]);
    rb.parallel_efficiency = num(&fb["parallel_efficiency"]);
    let ln = |x: Option<f64>| x.filter(|&v| v > 0.0).map(f64::ln);
    let pe_log = ln(rb.parallel_efficiency)
        .zip(ln(ra.parallel_efficiency))
        .map(|(b, a)| b - a);
    let keys: &[&'static str] = if model == "device" {
        &DEVICE_FACTORS
    } else {
        &HOST_FACTORS
    };
    let mut factors = std::collections::BTreeMap::new();
    let change = |av: Option<f64>, bv: Option<f64>| {
        let log_change = ln(bv).zip(ln(av)).map(|(b, a)| b - a);
        FactorChange {
            a: av,
            b: bv,
            log_change,
            share: log_change
                .zip(pe_log)
                .and_then(|(l, p)| (p.abs() > 1e-12).then(|| l / p)),
        }
    };
    factors.insert(
        "parallel_efficiency",
        change(ra.parallel_efficiency, rb.parallel_efficiency),
    );
    for &k in keys {
        factors.insert(k, change(num(&fa[k]), num(&fb[k])));
    }
    let verdict = verdict(&factors, keys, model);
    let scale = scale(&ra, &rb);
    let per_iteration = ra.iterations.is_some() && rb.iterations.is_some();
    let kernels = kernel_changes(a, &ra, b, &rb, per_iteration);
    Ok(Comparison {
        a: ra,
        b: rb,
        model,
        factors,
        verdict,
        scale,
        kernel_time: if per_iteration {
            "per_iteration"
        } else {
            "per_second"
        },
        kernels,
    })
}

/// Names of the factors, for sentences.
fn title(key: &str) -> &'static str {
    match key {
        "load_balance" => "load balance",
        "communication_efficiency" => "communication efficiency",
        "orchestration_efficiency" => "orchestration efficiency",
        _ => "parallel efficiency",
    }
}

fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| "n/a".into(), |x| format!("{:.1}%", 100.0 * x))
}

fn verdict(
    factors: &std::collections::BTreeMap<&'static str, FactorChange>,
    keys: &[&'static str],
    model: &str,
) -> Verdict {
    let pe = &factors["parallel_efficiency"];
    let (Some(a), Some(b)) = (pe.a, pe.b) else {
        return Verdict {
            main_factor: None,
            direction: "same",
            summary: format!(
                "The {model} parallel efficiency is not defined in both runs ({} → {}): nothing to decompose.",
                pct(pe.a),
                pct(pe.b)
            ),
        };
    };
    let points = 100.0 * (b - a);
    let direction = if points.abs() < 0.1 {
        "same"
    } else if points > 0.0 {
        "better"
    } else {
        "worse"
    };
    let main = keys
        .iter()
        .filter_map(|&k| Some((k, factors[k].log_change?)))
        .max_by(|x, y| x.1.abs().total_cmp(&y.1.abs()));
    let scope = if model == "host" { "MPI " } else { "" };
    let summary = match (direction, main) {
        ("same", _) => format!(
            "{scope}PE is unchanged ({} → {}).",
            pct(Some(a)),
            pct(Some(b))
        ),
        (_, None) => format!(
            "{scope}PE {} {:.1} points ({} → {}); its factors are not all defined, so the change cannot be split.",
            if points > 0.0 { "rose" } else { "fell" },
            points.abs(),
            pct(Some(a)),
            pct(Some(b))
        ),
        (_, Some((k, _))) => {
            let f = &factors[k];
            let others: Vec<String> = keys
                .iter()
                .filter(|&&o| o != k)
                .map(|&o| format!("{} {} → {}", title(o), pct(factors[o].a), pct(factors[o].b)))
                .collect();
            format!(
                "{scope}PE {} {:.1} points ({} → {}), mostly {}: {} → {}{}; {}.",
                if points > 0.0 { "rose" } else { "fell" },
                points.abs(),
                pct(Some(a)),
                pct(Some(b)),
                title(k),
                pct(f.a),
                pct(f.b),
                f.share
                    .map(|s| format!(" ({:.0} % of the change)", 100.0 * s))
                    .unwrap_or_default(),
                others.join(", ")
            )
        }
    };
    Verdict {
        main_factor: main.map(|(k, _)| k).filter(|_| direction != "same"),
        direction,
        summary,
    }
}

fn scale(a: &Run, b: &Run) -> Vec<String> {
    let mut out = Vec::new();
    if a.gpus != b.gpus {
        out.push(format!(
            "{} GPUs against {} (a scaling study: factors compare, totals do not)",
            a.gpus, b.gpus
        ));
    }
    if a.ranks != b.ranks {
        out.push(format!("{} MPI ranks against {}", a.ranks, b.ranks));
    }
    let (ta, tb) = (a.elapsed_ns as f64, b.elapsed_ns as f64);
    if ta > 0.0 && tb > 0.0 && (ta / tb - 1.0).abs() > 0.05 {
        out.push(format!(
            "measured times differ ({:.3} s against {:.3} s): compare {}",
            ta / 1e9,
            tb / 1e9,
            if a.iterations.is_some() && b.iterations.is_some() {
                "per iteration"
            } else {
                "rates, not totals"
            }
        ));
    }
    out
}

/// A row of a report's top kernels: name, short name, count, total ns, mean ns.
type TopKernel = (String, String, u64, f64, Option<f64>);

/// Kernels of either run's top list, by the change of their time per iteration (per second of
/// T without iterations on both sides), largest first.
fn kernel_changes(
    a: &Value,
    ra: &Run,
    b: &Value,
    rb: &Run,
    per_iteration: bool,
) -> Vec<KernelChange> {
    let scale = |r: &Run| {
        if per_iteration {
            1.0 / r.iterations.unwrap_or(1).max(1) as f64
        } else {
            1e9 / (r.elapsed_ns.max(1) as f64)
        }
    };
    let rows = |v: &Value| -> Vec<TopKernel> {
        v["kernels"]["top"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|k| {
                        (
                            k["name"].as_str().unwrap_or("").to_owned(),
                            k["short_name"].as_str().unwrap_or("").to_owned(),
                            int(&k["count"]),
                            int(&k["total_ns"]) as f64,
                            num(&k["mean_ns"]),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let (ka, kb) = (rows(a), rows(b));
    let mut names: Vec<&TopKernel> = ka.iter().collect();
    names.extend(kb.iter().filter(|k| !ka.iter().any(|x| x.0 == k.0)));
    let mut out: Vec<KernelChange> = names
        .into_iter()
        .map(|k| {
            let find = |rows: &[TopKernel]| rows.iter().find(|x| x.0 == k.0).cloned();
            let (x, y) = (find(&ka), find(&kb));
            let at = x.as_ref().map(|x| x.3 * scale(ra));
            let bt = y.as_ref().map(|y| y.3 * scale(rb));
            KernelChange {
                name: k.0.clone(),
                short_name: k.1.clone(),
                a_count: x.as_ref().map(|x| x.2),
                b_count: y.as_ref().map(|y| y.2),
                a_mean_ns: x.and_then(|x| x.4),
                b_mean_ns: y.and_then(|y| y.4),
                a_time_ns: at,
                b_time_ns: bt,
                change_ns: at.zip(bt).map(|(a, b)| b - a),
            }
        })
        .collect();
    // Largest changes first; kernels in one top list only after them, largest time first.
    let key = |k: &KernelChange| match k.change_ns {
        Some(c) => (1, c.abs()),
        None => (0, k.a_time_ns.or(k.b_time_ns).unwrap_or(0.0)),
    };
    out.sort_by(|x, y| {
        let (kx, ky) = (key(x), key(y));
        ky.0.cmp(&kx.0).then(ky.1.total_cmp(&kx.1))
    });
    out.truncate(KERNEL_ROWS);
    out
}
