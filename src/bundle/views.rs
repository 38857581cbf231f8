//! The Paraver views a bundle ships: those of cfgs/ that apply to its trace, and one NVTX push/pop
//! view per named domain with ranges, on that domain's own event types (9600 + 100·k, or 9500
//! for NCCL). "Apply" is what `prvsight check TRACE --cfg CFG` says: no error. A view with an
//! error would abort in paramedir or show nothing in wxparaver, so it is left out and the README
//! says why.

use std::borrow::Cow;

use crate::paraver::cfg::{self, Severity, TraceFacts};
use crate::paraver::events::GRAPH_EXEC;
use crate::paraver::written::NvtxDomain;

/// One file of the bundle's cfgs/ folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct View {
    /// Path under cfgs/.
    pub path: String,
    pub text: Cow<'static, str>,
}

/// The cfgs/ folder of one trace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Views {
    /// In path order: the views that apply, and the folder's README.md.
    pub shipped: Vec<View>,
    /// Views that do not apply: path and the first error the checker found.
    pub left_out: Vec<(String, String)>,
}

impl Views {
    /// The .cfg files shipped.
    pub fn cfg_paths(&self) -> impl Iterator<Item = &str> {
        (self.shipped.iter())
            .map(|v| v.path.as_str())
            .filter(|p| p.ends_with(".cfg"))
    }
}

/// The default domain's push/pop view; the other domains' views are made from it.
const PUSHPOP: &str = "nvtx_pushpop.cfg";

/// The views for the trace `facts` describes, whose NVTX domains are `domains`.
pub fn views_for(facts: &TraceFacts, domains: &[NvtxDomain]) -> Views {
    let graphs = facts.event_types.contains_key(&GRAPH_EXEC);
    let mut candidates: Vec<View> = (super::cfgs().iter())
        .map(|(path, text)| View {
            path: (*path).to_owned(),
            text: match graphs {
                true => with_graph_replays(text),
                false => Cow::Borrowed(*text),
            },
        })
        .collect();
    let template = super::cfgs().iter().find(|(p, _)| *p == PUSHPOP);
    let named = domains
        .iter()
        .filter(|d| !d.name.is_empty() && facts.event_types.contains_key(&d.base));
    for d in named {
        let Some((_, template)) = template else { break };
        let path = domain_file(d, |p| candidates.iter().any(|v| v.path == p));
        let text = domain_view(template, d, facts);
        candidates.push(View {
            path,
            text: Cow::Owned(text),
        });
    }
    candidates.sort_by(|a, b| a.path.cmp(&b.path));
    let mut views = Views::default();
    for v in candidates {
        if !v.path.ends_with(".cfg") {
            views.shipped.push(v);
            continue;
        }
        let findings = cfg::assess_cfg(&cfg::parse(&v.text), facts);
        match findings.into_iter().find(|f| f.severity == Severity::Error) {
            None => views.shipped.push(v),
            Some(error) => views.left_out.push((v.path, error.message)),
        }
    }
    views
}

/// A view of GPU useful or active time that also counts whole CUDA graph replays (63000008),
/// for a trace that has them: the metrics count a replay as compute, and without its type the
/// view would miss that time. Other views come back as they are.
fn with_graph_replays(text: &'static str) -> Cow<'static, str> {
    const FILTERS: [(&str, &str); 4] = [
        (
            "evt_type 1 63000006\n",
            "evt_type 2 63000006 63000008\n",
        ),
        (
            "evt_type_label 1 \"CUDA kernel\"\n",
            "evt_type_label 2 \"CUDA kernel\" \"CUDA graph execution\"\n",
        ),
        (
            "evt_type 3 63000001 63000006 63000007\n",
            "evt_type 4 63000001 63000006 63000007 63000008\n",
        ),
        (
            "evt_type_label 3 \"CUDA memory operation\" \"CUDA kernel\" \"NCCL kernel\"\n",
            "evt_type_label 4 \"CUDA memory operation\" \"CUDA kernel\" \"NCCL kernel\" \"CUDA graph execution\"\n",
        ),
    ];
    // Only the views whose first window is a per-process union (AddingSign) measure time.
    if !text.contains("{task, AddingSign}") {
        return Cow::Borrowed(text);
    }
    let mut out = text.to_owned();
    for (from, to) in FILTERS {
        out = out.replace(from, to);
    }
    Cow::Owned(out)
}

/// `nvtx_pushpop_<domain>.cfg`, the name reduced to characters safe in any file system; with
/// the type number added where that name is taken (two names that reduce alike).
fn domain_file(d: &NvtxDomain, taken: impl Fn(&str) -> bool) -> String {
    let safe: String = (d.name.chars().take(40))
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let path = format!("nvtx_pushpop_{safe}.cfg");
    if taken(&path) {
        format!("nvtx_pushpop_{safe}_{}.cfg", d.base)
    } else {
        path
    }
}

/// The default domain's view `template` rewritten for domain `d`: its types, their .pcf labels,
/// and its name in the description and window names. NCCL's domain has no level types, so its
/// view keeps the first window only.
fn domain_view(template: &str, d: &NvtxDomain, facts: &TraceFacts) -> String {
    let label = |ty: u32| facts.pcf_types.get(&ty).cloned().unwrap_or_default();
    let shown: String = (d.name.chars().take(60))
        .map(|c| {
            if c.is_control() || "\"<>{}".contains(c) {
                '_'
            } else {
                c
            }
        })
        .collect();
    let who = if shown.starts_with("domain ") {
        shown
    } else {
        format!("domain {shown}")
    };
    let (base, level1) = (d.base, d.base + 1);
    let mut text = template
        .replace(
            "NVTX push/pop ranges of the default domain",
            &format!("NVTX push/pop ranges of {who}"),
        )
        .replace(
            "(9600 with Stacked Val) and the outermost level only (9601)",
            &format!("({base} with Stacked Val) and the outermost level only ({level1})"),
        )
        .replace("NVTX ranges (", &format!("NVTX ranges of {who} ("))
        .replace("evt_type 1 9600\n", &format!("evt_type 1 {base}\n"))
        .replace("evt_type 1 9601\n", &format!("evt_type 1 {level1}\n"))
        .replace(
            "\"NVTX push/pop ranges, default domain\"",
            &format!("\"{}\"", label(base)),
        )
        .replace(
            "\"NVTX push/pop ranges, default domain, nesting level 1\"",
            &format!("\"{}\"", label(level1)),
        );
    if !d.has_levels() {
        text = first_window_only(&text, level1);
    }
    text
}

/// `text` without its second window (and the description's mention of it).
fn first_window_only(text: &str, level1: u32) -> String {
    let second = text
        .find("\n\n####")
        .and_then(|first| text[first + 2..].find("\n\n####").map(|k| first + 2 + k));
    let kept = second.map_or(text, |at| &text[..at]);
    kept.replace("ConfigFile.NumWindows: 2\n", "ConfigFile.NumWindows: 1\n")
        .replace(&format!(" and the outermost level only ({level1})"), "")
        + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// One application of one task with one thread; `types` occur, labelled as the writer does.
    fn facts(types: &[(u32, &str)]) -> TraceFacts {
        TraceFacts {
            pcf_types: types.iter().map(|(t, l)| (*t, (*l).to_owned())).collect(),
            pcf_states: BTreeMap::from([(1, "Running".to_owned())]),
            event_types: types.iter().map(|(t, _)| (*t, 2)).collect(),
            states: BTreeMap::from([(1, 1)]),
            comm_tags: BTreeMap::new(),
            appls: vec![vec![1]],
            nodes: vec![1],
        }
    }

    fn domains() -> Vec<NvtxDomain> {
        let d = |name: &str, base| NvtxDomain {
            name: name.into(),
            base,
        };
        vec![d("", 9600), d("NCCL", 9500), d("STDPAR", 9700)]
    }

    fn shipped<'a>(views: &'a Views, path: &str) -> Option<&'a View> {
        views.shipped.iter().find(|v| v.path == path)
    }

    #[test]
    fn ranges_only_in_a_named_domain_get_a_view_of_that_domain_and_not_of_9600() {
        let f = facts(&[
            (9700, "NVTX push/pop ranges, domain STDPAR"),
            (9701, "NVTX push/pop ranges, domain STDPAR, nesting level 1"),
        ]);
        let views = views_for(&f, &domains());
        let v = shipped(&views, "nvtx_pushpop_STDPAR.cfg").expect("the STDPAR view ships");
        let c = cfg::parse(&v.text);
        assert!(c.problems.is_empty() && c.warnings.is_empty(), "{c:#?}");
        let windows: Vec<(&str, &[u64], &[String])> = (c.windows.iter())
            .map(|w| (w.name.as_str(), &w.evt_types[..], &w.evt_type_labels[..]))
            .collect();
        assert_eq!(
            windows,
            [
                (
                    "NVTX ranges of domain STDPAR (innermost)",
                    &[9700][..],
                    &["NVTX push/pop ranges, domain STDPAR".to_owned()][..]
                ),
                (
                    "NVTX ranges of domain STDPAR (level 1)",
                    &[9701][..],
                    &["NVTX push/pop ranges, domain STDPAR, nesting level 1".to_owned()][..]
                ),
            ]
        );
        assert_eq!(
            c.description.as_deref(),
            Some("NVTX push/pop ranges of domain STDPAR: innermost open range per thread (9700 with Stacked Val) and the outermost level only (9701).")
        );
        assert_eq!(cfg::check_cfg(&c, &f), Vec::<String>::new());
        // Nothing shipped selects the default domain's types; its view is left out, with why.
        for v in views.shipped.iter().filter(|v| v.path.ends_with(".cfg")) {
            let types = cfg::parse(&v.text).required_event_types();
            assert!(!types.contains(&9600), "{} selects 9600", v.path);
        }
        let left: Vec<&str> = views.left_out.iter().map(|(p, _)| p.as_str()).collect();
        assert!(left.contains(&PUSHPOP), "{left:?}");
        // With states and no other event, the state views ship too.
        assert_eq!(
            views.cfg_paths().collect::<Vec<_>>(),
            [
                "nvtx_pushpop_STDPAR.cfg",
                "states.cfg",
                "states_profile.cfg"
            ]
        );
    }

    #[test]
    fn the_default_domain_keeps_the_static_view_and_nccl_gets_one_window() {
        let f = facts(&[
            (9500, "NVTX push/pop ranges, domain NCCL"),
            (9600, "NVTX push/pop ranges, default domain"),
            (
                9601,
                "NVTX push/pop ranges, default domain, nesting level 1",
            ),
        ]);
        let views = views_for(&f, &domains());
        let static_view = super::super::cfgs().iter().find(|(p, _)| *p == PUSHPOP);
        assert_eq!(
            shipped(&views, PUSHPOP).map(|v| &*v.text),
            static_view.map(|(_, t)| *t)
        );
        let nccl = cfg::parse(&shipped(&views, "nvtx_pushpop_NCCL.cfg").unwrap().text);
        assert_eq!((nccl.num_windows, nccl.windows.len()), (Some(1), 1));
        assert_eq!(nccl.windows[0].evt_types, [9500]);
        assert_eq!(
            nccl.description.as_deref(),
            Some("NVTX push/pop ranges of domain NCCL: innermost open range per thread (9500 with Stacked Val).")
        );
        assert_eq!(cfg::check_cfg(&nccl, &f), Vec::<String>::new());
        assert!(shipped(&views, "nvtx_pushpop_STDPAR.cfg").is_none());
    }

    #[test]
    fn domain_files_are_safe_and_distinct() {
        let d = NvtxDomain {
            name: "my lib/v2 (é)".into(),
            base: 9800,
        };
        assert_eq!(domain_file(&d, |_| false), "nvtx_pushpop_my_lib_v2____.cfg");
        assert_eq!(
            domain_file(&d, |p| p == "nvtx_pushpop_my_lib_v2____.cfg"),
            "nvtx_pushpop_my_lib_v2_____9800.cfg"
        );
    }
}
