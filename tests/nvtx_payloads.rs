//! NVTX payload fields as events (`--nvtx-config`, issue 43, nsys2prv 0.6 parity) on the
//! synthetic `nvtx_payloads` export (no public export keeps a non-NCCL domain's payloads): each
//! field the config names is an event of its own type on every range of its domain with a
//! payload, counted as SQL counts them, valued as the payloads; strings are labelled values.
//! No config, or one naming no field, writes the same bytes as before; the config's refusals;
//! a config naming NCCL leaves mfu_2gpu_before's trace as it was (NCCL keeps 9501–9507).

mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;

use common::{convert, shared_traces, sql_count};
use prvsight::nvtx_config::NvtxConfig;
use prvsight::synth::scenarios::nvtx_payloads::{payload, DOMAIN, STEPS};
use prvsight::Options;

fn export() -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("nvtx-payloads-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = dir.join(format!("nvtx-payloads-{n}.sqlite"));
    let built = prvsight::synth::build("nvtx_payloads", 1).unwrap();
    built.export.write_path(&path).unwrap();
    path
}

fn with_config(toml: &str) -> Options {
    Options {
        nvtx_payloads: Some(NvtxConfig::parse("test.toml", toml).unwrap()),
        ..Options::default()
    }
}

/// Per payload type (67000000…), the non-zero values in time order, each with whether its line
/// also opens an NVTX push/pop range (a non-zero 9600 + 100·k value).
fn payload_events(prv: &str) -> BTreeMap<u64, Vec<(u64, bool)>> {
    let mut out: BTreeMap<u64, Vec<(u64, bool)>> = BTreeMap::new();
    for line in prv.lines().filter(|l| l.starts_with("2:")) {
        let f: Vec<u64> = line.split(':').map(|x| x.parse().unwrap()).collect();
        let pairs: Vec<&[u64]> = f[6..].chunks(2).collect();
        let opens = pairs
            .iter()
            .any(|p| (9600..10_000).contains(&p[0]) && p[1] != 0);
        for p in pairs.iter().filter(|p| p[0] >= 67_000_000 && p[1] != 0) {
            out.entry(p[0]).or_default().push((p[1], opens));
        }
    }
    out
}

#[test]
fn each_named_field_is_an_event_valued_as_its_payload() {
    let path = export();
    let toml = format!("[domains.{DOMAIN}]\npayloads = [\"Step\", \"Loss\", \"Phase\"]\n");
    let c = convert(std::slice::from_ref(&path), &with_config(&toml)).unwrap();
    let rows = sql_count(
        &path,
        "SELECT count(*) FROM NVTX_EVENTS e JOIN NVTX_EVENTS d ON d.eventType = 75 \
         AND d.domainId = e.domainId WHERE e.eventType = 59 AND e.jsonText IS NOT NULL \
         AND d.text = 'Trainer'",
    );
    assert_eq!(rows, STEPS);
    let events = payload_events(&c.prv);
    assert_eq!(events.len(), 3, "{events:?}");
    let phase_value = |p: &str| if p == "train" { 1 } else { 2 };
    let want = |f: &dyn Fn(u64) -> u64| (0..STEPS).map(|k| (f(k), true)).collect::<Vec<_>>();
    assert_eq!(events[&67_000_000], want(&|k| payload(k).0));
    // The loss, rounded: 10, 8.5, 7, 5.5, 4, 2.5 → 10, 9, 7, 6, 4, 3.
    assert_eq!(events[&67_000_001], want(&|k| payload(k).1.round() as u64));
    assert_eq!(events[&67_000_002], want(&|k| phase_value(payload(k).2)));
    for label in [
        "67000000    NVTX payload, domain Trainer: Step",
        "67000001    NVTX payload, domain Trainer: Loss",
        "67000002    NVTX payload, domain Trainer: Phase",
        "1      train",
        "2      eval",
    ] {
        assert!(c.pcf.contains(label), "pcf: {label}");
    }
    // The default domain's payload (Step 99) is not the named domain's.
    assert!(!c.prv.contains(":67000000:99"));
}

#[test]
fn no_config_or_no_field_writes_what_it_wrote() {
    let path = export();
    let plain = convert(std::slice::from_ref(&path), &Options::default()).unwrap();
    assert!(payload_events(&plain.prv).is_empty());
    let named = with_config(&format!("[domains.{DOMAIN}]\n"));
    let c = convert(std::slice::from_ref(&path), &named).unwrap();
    common::assert_same_output(&plain, &c, "a config naming no field");
}

#[test]
fn a_domain_or_field_the_export_lacks_is_refused() {
    let path = export();
    let err = |toml: &str| {
        let c = convert(std::slice::from_ref(&path), &with_config(toml));
        c.err().expect("refused").to_string()
    };
    assert_eq!(
        err("[domains.Solver]\n"),
        "--nvtx-config test.toml: the exports have no NVTX domain 'Solver'"
    );
    assert_eq!(
        err("[domains.Trainer]\npayloads = [\"Step\", \"Epoch\"]\n"),
        "--nvtx-config test.toml: NVTX domain 'Trainer' has no payload field 'Epoch' in \
         NVTX_PAYLOAD_SCHEMA_ENTRIES"
    );
}

#[test]
fn naming_nccl_leaves_the_nccl_trace_as_it_was() {
    let Some(dir) = shared_traces() else {
        return;
    };
    let path = dir.join("mfu_2gpu_before.sqlite");
    let plain = convert(std::slice::from_ref(&path), &Options::default()).unwrap();
    let toml = "[domains.NCCL]\npayloads = [\"Message size [bytes]\", \"Rank\"]\n";
    let c = convert(std::slice::from_ref(&path), &with_config(toml)).unwrap();
    common::assert_same_output(&plain, &c, "a config naming NCCL");
    assert!(plain
        .pcf
        .contains("9500    NVTX push/pop ranges, domain NCCL"));
}
