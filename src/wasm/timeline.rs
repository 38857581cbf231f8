//! The timeline of the last conversion, kept in the worker that ran its sinks and asked per
//! frame by the page (through `www/bridge.js`): zoom and pan never convert again.

use std::cell::RefCell;

use js_sys::{Array, Uint32Array, Uint8Array, Uint8ClampedArray};
use wasm_bindgen::prelude::*;

use super::convert::set_fields;
use super::errors::{to_js, to_value};
use crate::timeline::Timeline;
use crate::Error;

thread_local! {
    static LAST: RefCell<Option<Timeline>> = const { RefCell::new(None) };
}

/// Keeps `t` as the timeline the next requests read (the last conversion's).
pub fn keep(t: Option<Timeline>) {
    LAST.with(|l| *l.borrow_mut() = t);
}

fn with<T>(f: impl FnOnce(&Timeline) -> crate::Result<T>) -> Result<T, JsValue> {
    LAST.with(|l| match l.borrow().as_ref() {
        Some(t) => f(t).map_err(to_js),
        None => Err(to_js(Error::Usage(
            "no timeline: convert a file first (with the timeline on)".into(),
        ))),
    })
}

fn view_of(t: &Timeline, id: &str) -> crate::Result<usize> {
    t.view(id)
        .ok_or_else(|| Error::Usage(format!("the timeline has no view {id:?}")))
}

fn ns(v: f64, what: &str) -> crate::Result<u64> {
    if v.is_finite() && v >= 0.0 && v <= 2f64.powi(62) {
        Ok(v as u64)
    } else {
        Err(Error::Usage(format!("{what}: not a time in ns ({v})")))
    }
}

/// `{start_ns, end_ns, rows, views, bin_ns, bins, spans_kept, spans_shorter_not_kept_ns,
/// bytes}` of the last conversion's timeline.
#[wasm_bindgen]
pub fn timeline_info() -> Result<JsValue, JsValue> {
    with(|t| Ok(to_value(&t.info())))
}

/// One frame of `view` over [start, end) ns at `width` pixels: `slots` is an array of arrays
/// of rows (each drawn as one line). Returns `{ rgba, values, busy, from_spans }`: `width ×
/// slots` RGBA pixels, slot by slot, and each cell's value (Uint32Array) and how much of its
/// pixel anything covers (Uint8Array, 0–255).
#[wasm_bindgen]
pub fn timeline_frame(
    view: &str,
    start: f64,
    end: f64,
    width: u32,
    slots: Array,
) -> Result<JsValue, JsValue> {
    let slots: Vec<Vec<u32>> = slots
        .iter()
        .map(|s| {
            Array::from(&s)
                .iter()
                .map(|r| r.as_f64().map_or(u32::MAX, |r| r as u32))
                .collect()
        })
        .collect();
    with(|t| {
        let v = view_of(t, view)?;
        let frame = t.frame(
            v,
            ns(start, "start")?,
            ns(end, "end")?,
            width as usize,
            &slots,
        )?;
        let rgba = t.rgba(v, &frame);
        let values: Vec<u32> = frame.cells.iter().map(|c| c.value).collect();
        let busy: Vec<u8> = frame.cells.iter().map(|c| c.busy).collect();
        let out = js_sys::Object::new().into();
        set_fields(
            &out,
            &[
                ("rgba", Uint8ClampedArray::from(&rgba[..]).into()),
                ("values", Uint32Array::from(&values[..]).into()),
                ("busy", Uint8Array::from(&busy[..]).into()),
                ("from_spans", frame.from_spans.into()),
            ],
        )
        .map_err(|_| Error::Usage("internal error: a frame could not be built".into()))?;
        Ok(out)
    })
}

/// What is at `t` ns on `row` in `view` (within `tolerance` ns): the hover's record, or null.
#[wasm_bindgen]
pub fn timeline_at(view: &str, row: u32, t: f64, tolerance: f64) -> Result<JsValue, JsValue> {
    with(|tl| {
        let v = view_of(tl, view)?;
        let hover = tl.at(v, row as usize, ns(t, "time")?, ns(tolerance, "tolerance")?)?;
        Ok(to_value(&hover))
    })
}

/// The efficiency factors of [start, end) ns: `{start_ns, end_ns, resolution_ns, efficiency}`.
#[wasm_bindgen]
pub fn timeline_range(start: f64, end: f64) -> Result<JsValue, JsValue> {
    with(|t| {
        Ok(to_value(
            &t.range_factors(ns(start, "start")?, ns(end, "end")?),
        ))
    })
}

/// Frees the timeline (a new conversion starts, or the page asked).
#[wasm_bindgen]
pub fn timeline_drop() {
    keep(None);
}
