//! The `nic` family (issue 43, nsys2prv 0.6 parity) on the synthetic `nic` export (no public
//! export holds NIC metrics): a thread per NIC, named from TARGET_INFO_NIC_INFO, with each sample
//! an instant 66700000 + metricsIdx labelled from TARGET_INFO_NETWORK_METRICS. Counts equal SQL;
//! per NIC and metric the samples and their sums are the scenario's; alone, the NICs get a
//! process of their own; two reports of one host lay its NICs out once; the JSON has counters.

mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;

use common::{convert, sql_count};
use prvsight::options::Family;
use prvsight::synth::scenarios::nic::{ib_bytes_sent, METRICS, NICS};
use prvsight::Options;

/// The scenario's export (seed `seed`), in a file of its own (tests run in parallel).
fn export(seed: u64) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let dir =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("nic-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = dir.join(format!("nic-{n}.sqlite"));
    let built = prvsight::synth::build("nic", seed).unwrap();
    built.export.write_path(&path).unwrap();
    path
}

/// Per (Paraver task, thread, metric index): samples and summed values of the NIC types.
fn per_thread(prv: &str) -> BTreeMap<(u64, u64, u64), (u64, u64)> {
    let mut out = BTreeMap::new();
    for line in prv.lines().filter(|l| l.starts_with("2:")) {
        let f: Vec<u64> = line.split(':').map(|x| x.parse().unwrap()).collect();
        for p in f[6..]
            .chunks(2)
            .filter(|p| (66_700_000..66_800_000).contains(&p[0]))
        {
            let e = out.entry((f[3], f[4], p[0] - 66_700_000)).or_insert((0, 0));
            e.0 += 1;
            e.1 += p[1];
        }
    }
    out
}

/// What the scenario sampled, on NIC threads `first`, `first + 1` of task `task`.
fn designed(task: u64, first: u64) -> BTreeMap<(u64, u64, u64), (u64, u64)> {
    let mut out = BTreeMap::new();
    for (n, (_, _, _, metrics)) in NICS.iter().enumerate() {
        for &idx in metrics {
            let sum: i64 = (0..10)
                .map(|k| {
                    if idx == 6 {
                        ib_bytes_sent(k)
                    } else {
                        100 * (idx + 1)
                    }
                })
                .sum();
            out.insert((task, first + n as u64, idx as u64), (10, sum as u64));
        }
    }
    out
}

#[test]
fn each_nic_has_a_thread_with_its_samples() {
    let path = export(1);
    let c = convert(std::slice::from_ref(&path), &Options::default()).unwrap();
    let rows = sql_count(&path, "SELECT count(*) FROM NET_NIC_METRIC");
    assert_eq!(rows, 80, "2 NICs, 4 metrics, 10 samples");
    assert_eq!(c.summary.counts.get("nic"), Some(&rows));
    // The process's thread, then a thread per NIC.
    assert_eq!(per_thread(&c.prv), designed(1, 2));
    for name in [
        "NIC 0 (mlx5_0, ConnectX-6) metrics (node-ib)",
        "NIC 1 (mlx5_1, ConnectX-6) metrics (node-ib)",
    ] {
        assert!(c.row.contains(name), "row: {name}");
    }
    for (idx, name, unit) in METRICS.iter().filter(|m| m.0 < 8) {
        let label = format!("{}    {name} [{unit}]", 66_700_000 + idx);
        assert!(c.pcf.contains(&label), "pcf: {label}");
    }
    // The NIC threads have no state but Idle.
    assert!(c.prv.contains("\n1:0:1:1:2:0:10000000:0\n"));
}

#[test]
fn alone_the_nics_get_a_process_of_their_own() {
    let path = export(1);
    let opts = Options {
        families: Some([Family::Nic].into_iter().collect()),
        ..Options::default()
    };
    let c = convert(std::slice::from_ref(&path), &opts).unwrap();
    assert_eq!(c.summary.counts.get("nic"), Some(&80));
    assert_eq!(c.summary.trace.objects.threads.len(), 2);
    assert!(c.row.contains("NIC metrics (pid 0, node-ib)"), "{}", c.row);
    assert_eq!(per_thread(&c.prv), designed(1, 1));
}

#[test]
fn two_reports_of_one_host_lay_its_nics_out_once() {
    let paths = [export(1), export(2)];
    let c = convert(&paths, &Options::default()).unwrap();
    assert_eq!(c.summary.counts.get("nic"), Some(&80));
    assert_eq!(c.summary.trace.objects.nics.len(), 2);
    assert_eq!(per_thread(&c.prv), designed(1, 2));
}

#[test]
fn the_json_has_a_counter_per_nic_and_metric() {
    let exports = [prvsight::nsys::Export::open_path(&export(1)).unwrap()];
    let mut buf = Vec::new();
    {
        let mut w = prvsight::chrome::ChromeWriter::new(Box::new(&mut buf));
        prvsight::pipeline::run(&exports, &Options::default(), &mut [&mut w], &mut |_| true)
            .unwrap();
    }
    let v: serde_json::Value = serde_json::from_slice(&buf).unwrap();
    let mut peak = BTreeMap::new();
    for e in v["traceEvents"].as_array().unwrap() {
        if e["cat"] == "nic" {
            assert_eq!(e["ph"], "C");
            let value = e["args"]["value"].as_u64().unwrap();
            let max = peak
                .entry(e["name"].as_str().unwrap().to_owned())
                .or_insert(0);
            *max = value.max(*max);
        }
    }
    assert_eq!(peak.len(), 8, "{peak:?}");
    let ib_sent = "NIC 0 (mlx5_0, ConnectX-6) IB: Bytes sent [bytes/ms]";
    assert_eq!(peak.get(ib_sent), Some(&6_000_000), "{peak:?}");
}
