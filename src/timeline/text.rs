//! The timeline as text, for a terminal (`prvsight timeline`): one line per row, one character
//! per column, a legend of the characters.

use std::fmt::Write as _;

use super::Timeline;
use crate::error::Result;
use crate::metrics::text::fmt_ns;
use crate::model::Ns;

const SYMBOLS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/// Human time, as the metrics' text report writes it.
fn time_text(ns: Ns) -> String {
    fmt_ns(ns as f64)
}

/// Width of the row names column.
const NAME_COLUMN: usize = 44;

/// `view` over [start, end) in `width` columns: rows with anything in the view, then the legend.
/// A letter is a value covering at least a quarter of its column, `.` less, blank nothing.
pub fn render(t: &Timeline, view: usize, start: Ns, end: Ns, width: usize) -> Result<String> {
    let info = t.view_info(view);
    let slots: Vec<Vec<u32>> = info.rows.iter().map(|&r| vec![r]).collect();
    let frame = t.frame(view, start, end, width, &slots)?;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} · {} to {} · {width} columns of {} each{}",
        info.title,
        time_text(start),
        time_text(end),
        time_text((end - start) / width as u64),
        if frame.from_spans {
            " (drawn from the records)"
        } else {
            ""
        }
    );
    let symbol = |value: u32| {
        info.legend
            .iter()
            .position(|l| l.value == value)
            .and_then(|i| SYMBOLS.get(i))
            .map_or('#', |&c| c as char)
    };
    let nodes: std::collections::BTreeSet<&str> = t.rows.iter().map(|r| r.node.as_str()).collect();
    for (slot, &row) in info.rows.iter().enumerate() {
        let r = &t.rows[row as usize];
        let node = if nodes.len() > 1 {
            format!("{} › ", r.node)
        } else {
            String::new()
        };
        let mut name = match &r.gpu {
            Some(g) => format!(
                "{node}{} › {} {}",
                r.process,
                g.split(" (").next().unwrap_or(g),
                r.label
            ),
            None => format!("{node}{} › {}", r.process, r.label),
        };
        if name.chars().count() > NAME_COLUMN {
            name = name.chars().take(NAME_COLUMN - 1).collect::<String>() + "…";
        }
        let cells = &frame.cells[slot * width..(slot + 1) * width];
        let line: String = cells
            .iter()
            .map(|c| match c.busy {
                0 => ' ',
                1..=63 => '.',
                _ => symbol(c.value),
            })
            .collect();
        let _ = writeln!(out, "{name:<NAME_COLUMN$} |{line}|");
    }
    let plural = if info.values == 1 { "" } else { "s" };
    let _ = writeln!(
        out,
        "\nLegend ({} value{plural}; blank: {}):",
        info.values, info.blank
    );
    for (i, l) in info.legend.iter().enumerate() {
        let c = SYMBOLS.get(i).map_or('#', |&c| c as char);
        let _ = writeln!(out, "  {c}  {}  {}", time_text(l.ns), l.label);
        if i + 1 == SYMBOLS.len() && info.legend.len() > SYMBOLS.len() {
            let _ = writeln!(out, "  #  every other value");
            break;
        }
    }
    Ok(out)
}
