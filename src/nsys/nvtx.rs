//! NVTX_EVENTS: push/pop and start/end ranges, marks. Names come from the inline `text` or, for
//! registered strings, from `textId`; domains and categories were named during discovery.

use super::context::{int, text, SourceCx};
use super::ids::process_key;
use super::query::{CursorKind, Partitioned, Query};
use super::Schema;
use crate::engine::row::Fields;
use crate::engine::select::{Cond, Select, Val};
use crate::engine::sort_keys::KeySpec;
use crate::error::Result;
use crate::model::{Names, NvtxMark, NvtxRange, NvtxRangeKind, Record};
use rusqlite::types::ValueRef;

/// eventType of push/pop ranges (NvtxPushPopRange, and the Nvtxt variant).
pub const NVTX_PUSH_POP_TYPES: [i64; 2] = [59, 70];
/// eventType of start/end ranges (NvtxStartEndRange, and the Nvtxt variant).
pub const NVTX_START_END_TYPES: [i64; 2] = [60, 71];
/// All range event types.
pub const NVTX_RANGE_TYPES: [i64; 4] = [59, 70, 60, 71];
/// eventType of instant marks.
pub const NVTX_MARK: i64 = 34;
/// eventType of category naming rows.
pub const NVTX_CATEGORY: i64 = 33;

const T: &str = "NVTX_EVENTS";

/// The rows the NVTX reader reads, both ways (by sort keys or SQL-sorted): ranges and marks with a
/// start and a thread. Discovery groups the same rows (their threads, domains and span).
pub fn read_rows() -> Select {
    Select::new(T)
        .when(Cond::In(
            "eventType".into(),
            NVTX_RANGE_TYPES
                .iter()
                .chain([NVTX_MARK].iter())
                .copied()
                .collect(),
        ))
        .not_null("start")
        .not_null("globalTid")
}

pub fn query(schema: &Schema, source: usize) -> Query {
    let c = |col: &str| schema.column_or_null(T, col);
    // The decoder's columns, in its order. The extended payload (`--include-json`) is inline
    // text or a string id, both read: the decoder looks the id up, so that the rows' fetch is a
    // plain read of the table (the direct reader's) rather than a subquery per row.
    let fields: [(&str, Val); 12] = [
        ("start", Val::col("start")),
        ("end", Val::col("end")),
        ("eventType", Val::col("eventType")),
        ("globalTid", Val::col("globalTid")),
        ("endGlobalTid", c("endGlobalTid")),
        ("text", Val::col("text")),
        ("textId", c("textId")),
        ("domainId", c("domainId")),
        ("category", c("category")),
        ("color", c("color")),
        ("jsonText", c("jsonText")),
        ("jsonTextId", c("jsonTextId")),
    ];
    let with_fields = |q: Select| (fields.iter()).fold(q, |q, (name, v)| q.output(name, v.clone()));
    let columns = with_fields(Select::new(T));
    let keys = read_rows()
        .output("start", Val::col("start"))
        .output("end", Val::col("end"))
        .output("rowid", Val::Rowid);
    let filter = keys
        .conds
        .iter()
        .map(Cond::sql)
        .collect::<Vec<_>>()
        .join(" AND ");
    // Both readers give this order (sort_keys.rs reproduces it from narrow keys).
    let sql = format!(
        "{} WHERE {filter} ORDER BY start, (end IS NULL OR end < start) DESC, end DESC, rowid",
        columns.sql()
    );
    let fetch = with_fields(Select::new(T).output("rowid", Val::Rowid));
    let keys = KeySpec {
        keys,
        fetch,
        columns: fields.iter().map(|(name, _)| (*name).to_owned()).collect(),
    };
    Query {
        kind: CursorKind::Nvtx,
        source,
        sql,
        what: "NVTX events",
        partitioned: Some(Partitioned::Keys(keys)),
    }
}

pub fn decode<R: Fields + ?Sized>(
    row: &R,
    cx: &mut SourceCx,
    names: &mut Names,
) -> Result<Option<Record>> {
    let Some(start_raw) = int(row, 0, cx, T)? else {
        return Ok(None);
    };
    let end_raw = int(row, 1, cx, T)?;
    let event_type = int(row, 2, cx, T)?.unwrap_or(0);
    let Some(gtid) = int(row, 3, cx, T)? else {
        return Ok(None);
    };
    let thread = cx.thread(T, gtid)?;
    let pkey = process_key(gtid);
    let name = match text(row, 5, cx, T)? {
        Some(t) => names.intern(&t),
        None => match int(row, 6, cx, T)? {
            Some(id) => cx.strings.name(id, names)?,
            None => names.intern("<unnamed>"),
        },
    };
    let domain_id = int(row, 7, cx, T)?.unwrap_or(0);
    let domain = if domain_id == 0 {
        0
    } else {
        cx.domains.get(&(pkey, domain_id)).copied().unwrap_or(0)
    };
    if event_type == NVTX_MARK {
        let time = cx.time(start_raw);
        return Ok(Some(Record::Mark(NvtxMark {
            thread,
            time,
            domain,
            name,
        })));
    }
    let kind = if NVTX_START_END_TYPES.contains(&event_type) {
        NvtxRangeKind::StartEnd
    } else {
        NvtxRangeKind::PushPop
    };
    let start = cx.time(start_raw);
    let (end, unterminated) = match end_raw {
        Some(e) if e >= start_raw => (cx.time(e), false),
        _ => {
            cx.warn(format!("{T}: NVTX ranges never ended (capture stopped inside them); closed at the end of the trace"));
            (cx.end_time, true)
        }
    };
    let end_thread = match int(row, 4, cx, T)? {
        Some(et) if kind == NvtxRangeKind::StartEnd => {
            cx.threads.get(&et).copied().unwrap_or(thread)
        }
        _ => thread,
    };
    let category = match int(row, 8, cx, T)? {
        Some(c) if c != 0 => Some(
            *cx.categories
                .entry((pkey, c))
                .or_insert_with(|| names.intern(&format!("category {c}"))),
        ),
        _ => None,
    };
    let color = int(row, 9, cx, T)?.map(|c| c as u32);
    // COALESCE(jsonText, the string of jsonTextId), as SQL reads it: an id that is not an
    // integer, or not in the strings table, gives none.
    let payload_json = match row.value(10) {
        Ok(ValueRef::Null) => match row.value(11) {
            Ok(ValueRef::Integer(id)) => cx.strings.text(id)?,
            _ => None,
        },
        _ => text(row, 10, cx, T)?,
    };
    Ok(Some(Record::Nvtx(NvtxRange {
        thread,
        end_thread,
        start,
        end,
        kind,
        domain,
        name,
        category,
        color,
        unterminated,
        payload_json,
    })))
}

/// The most frequent NVTX range names of an export, with their counts (for `info` and the page's
/// "chop to a range" choice): [`range_names_by_sql`]'s answer, counted over one scan of the
/// table by the direct reader where it can ([`RangeTexts`]): SQLite's GROUP BY sorts every range
/// by its name. The page's inspection counts them in discovery's own pass.
pub fn range_names(ex: &super::Export, limit: usize) -> Result<Vec<(String, u64)>> {
    use crate::engine::prepass::Prepass;
    let mut texts = RangeTexts::default();
    let ended = {
        let mut set = Prepass::new(&ex.conn, true);
        texts.register(&ex.schema, &mut set);
        set.run()
    };
    texts.ended(ended);
    texts.names(ex, limit)
}

/// A range's name as its row gives it: its own text, or a registered string's id.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum RangeText {
    Inline(String),
    Id(i64),
}

/// NVTX ranges counted per name as their rows give it, in a scan that joins a pass over the
/// table (on its own in [`range_names`], or in discovery's for the page's inspection).
#[derive(Clone, Debug, Default)]
pub struct RangeTexts {
    counts: crate::FastMap<RangeText, u64>,
    /// Whether the table has what the scan reads (else there are no names).
    scanned: bool,
    /// Whether the scan stopped before the end of the table: the direct reader met a page it
    /// cannot read, or SQLite failed ([`names`](Self::names) then asks SQL).
    failed: bool,
}

impl RangeTexts {
    /// Adds the scan to `set`, where the table has the columns it reads; returns how many scans
    /// it added (0 or 1), whose outcomes go to [`ended`](Self::ended) in order.
    pub fn register<'a>(
        &'a mut self,
        schema: &Schema,
        set: &mut crate::engine::prepass::Prepass<'a>,
    ) -> usize {
        use crate::engine::prepass::Sql;
        use rusqlite::types::ValueRef;
        if !schema.has_columns(T, &["eventType", "text"]) {
            return 0;
        }
        self.scanned = true;
        let query = Select::new(T)
            .output("text", Val::col("text"))
            .output("textId", schema.column_or_null(T, "textId"))
            .when(Cond::In("eventType".into(), NVTX_RANGE_TYPES.to_vec()));
        let (counts, failed) = (&mut self.counts, &mut self.failed);
        set.add(
            Some(&query),
            Sql::Query,
            Box::new(move |row| {
                let Ok(row) = row else {
                    *failed = true;
                    return Ok(false);
                };
                // COALESCE(text, the string of textId), as SQL reads it: any stored value that
                // is not NULL is the name, as its text.
                let key = match row.value(0)? {
                    ValueRef::Text(t) | ValueRef::Blob(t) => {
                        RangeText::Inline(String::from_utf8_lossy(t).into_owned())
                    }
                    ValueRef::Integer(i) => RangeText::Inline(i.to_string()),
                    ValueRef::Real(x) => RangeText::Inline(x.to_string()),
                    ValueRef::Null => match row.value(1)? {
                        ValueRef::Integer(id) => RangeText::Id(id),
                        _ => return Ok(true),
                    },
                };
                *counts.entry(key).or_default() += 1;
                Ok(true)
            }),
        );
        1
    }

    /// How the scans [`register`](Self::register) added ended.
    pub fn ended(&mut self, ended: impl IntoIterator<Item = rusqlite::Result<()>>) {
        self.failed |= ended.into_iter().any(|e| e.is_err());
    }

    /// The `limit` most frequent names, registered strings looked up once per distinct id;
    /// where the scan did not read the whole table, SQL's answer ([`range_names_by_sql`], which
    /// reads what the direct reader could not, or names the damage).
    pub fn names(self, ex: &super::Export, limit: usize) -> Result<Vec<(String, u64)>> {
        if self.failed {
            return range_names_by_sql(ex, limit);
        }
        if !self.scanned {
            return Ok(Vec::new());
        }
        let s = &ex.schema;
        // Ids come only from a table with a textId column.
        let mut strings = match s.has_column(T, "textId") {
            true => Some(super::strings::StringCache::new(
                &ex.conn,
                &s.strings_table,
                &ex.label,
            )),
            false => None,
        };
        let mut named: crate::FastMap<String, u64> = crate::FastMap::default();
        for (text, n) in self.counts {
            let name = match (text, strings.as_mut()) {
                (RangeText::Inline(t), _) => t,
                (RangeText::Id(id), Some(strings)) => match strings.text(id)? {
                    Some(t) => t,
                    // Not registered, or NULL: no name, as SQL's COALESCE gives none.
                    None => continue,
                },
                (RangeText::Id(_), None) => continue,
            };
            *named.entry(name).or_default() += n;
        }
        let mut names: Vec<(String, u64)> = named.into_iter().collect();
        // As ORDER BY n DESC, name: by count, then by the text's bytes.
        names.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        names.truncate(limit);
        Ok(names)
    }
}

/// The most frequent NVTX range names by SQL (`GROUP BY` the name): what [`range_names`]
/// answers, where the direct reader cannot read the table.
pub fn range_names_by_sql(ex: &super::Export, limit: usize) -> Result<Vec<(String, u64)>> {
    let s = &ex.schema;
    if !s.has_columns(T, &["eventType", "text"]) {
        return Ok(Vec::new());
    }
    let text = if s.has_column(T, "textId") {
        format!(
            "COALESCE(text, (SELECT value FROM {} WHERE id = textId))",
            s.strings_table
        )
    } else {
        "text".to_owned()
    };
    let sql = format!(
        "SELECT {text} AS name, COUNT(*) AS n FROM {T} WHERE eventType IN (59, 70, 60, 71) \
         GROUP BY name HAVING name IS NOT NULL ORDER BY n DESC, name LIMIT ?1"
    );
    let err = |e| crate::error::Error::read(&ex.label, "NVTX range names", e);
    let mut st = ex.conn.prepare(&sql).map_err(err)?;
    let rows = st
        .query_map([limit.min(i64::MAX as usize) as i64], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64))
        })
        .map_err(err)?;
    rows.collect::<rusqlite::Result<Vec<_>>>().map_err(err)
}
