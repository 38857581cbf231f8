//! The plain queries of the readers (select.rs) run by the direct reader of the file format
//! (src/sqlfile) instead of SQLite: the same rows, the same values, without SQLite's bytecode
//! engine and rusqlite's per-column calls (docs/PERFORMANCE.md).
//!
//! A query is compiled against its table as SQLite describes it; one the direct reader cannot
//! run exactly as SQLite would is not compiled (`None`) and stays with SQL: a grouped or
//! aggregate query, a table it does not read (sqlfile), a missing column (SQLite then gives its
//! own error), a column with a default, or a comparison on a TEXT-affinity column (SQLite would
//! compare the numbers as text there).

use std::sync::Arc;

use rusqlite::types::ValueRef;

use super::row::Fields;
use super::select::{Cond, Select, Val};
use crate::sqlfile::{Affinity, Pager, Record, Table};

/// Where a value of a row comes from. A column's affinity is chosen here, once: only REAL
/// changes what a read gives (a test of the affinity per value was a tenth of a row's copy).
#[derive(Clone, Debug, PartialEq)]
enum Src {
    /// A column stored in the record (not the rowid's alias), of any affinity but REAL.
    Column(usize),
    /// A column of REAL affinity (its integers read as reals).
    RealColumn(usize),
    Rowid,
    Int(i64),
    Null,
    /// `COALESCE(column, k)`: a column stored in the record, or `k` where it is NULL.
    ColumnOr(usize, i64),
    RealColumnOr(usize, i64),
}

impl Src {
    /// A column stored in the record, of this affinity.
    fn column(i: usize, affinity: Affinity) -> Src {
        if affinity == Affinity::Real {
            Src::RealColumn(i)
        } else {
            Src::Column(i)
        }
    }

    /// `COALESCE(self, k)`, flat: only a column can be NULL, and a value that never is (a
    /// rowid, a number, another `COALESCE`) stays itself. Flat, [`PageQuery::eval`] is not
    /// recursive, and so it inlines into the per-row loops.
    fn or(self, k: i64) -> Src {
        match self {
            Src::Column(i) => Src::ColumnOr(i, k),
            Src::RealColumn(i) => Src::RealColumnOr(i, k),
            Src::Null => Src::Int(k),
            never_null @ (Src::Rowid | Src::Int(_) | Src::ColumnOr(..) | Src::RealColumnOr(..)) => {
                never_null
            }
        }
    }

    /// The record column it reads, if any.
    fn record_column(&self) -> Option<usize> {
        match self {
            Src::Column(i) | Src::RealColumn(i) | Src::ColumnOr(i, _) | Src::RealColumnOr(i, _) => {
                Some(*i)
            }
            Src::Rowid | Src::Int(_) | Src::Null => None,
        }
    }
}

/// A test of one condition.
#[derive(Clone, Debug, PartialEq)]
enum Test {
    NotNull,
    In(Vec<i64>),
    NullOrNotIn(Vec<i64>),
    AtLeast(i64),
}

/// A [`Select`] compiled for the direct reader.
pub struct PageQuery {
    /// Shared with the pager's lookup; `Arc` so that a compiled query can go to another thread's pass
    /// (engine/prepass.rs).
    pub table: Arc<Table>,
    /// Record columns to parse: one past the last column read.
    pub upto: usize,
    conds: Vec<(Src, Test)>,
    outputs: Vec<Src>,
    names: Vec<String>,
}

/// One row of a table: its rowid and its record, parsed from its payload.
#[derive(Clone, Copy)]
pub struct PageRow<'p, 'r> {
    pub rowid: i64,
    pub payload: &'p [u8],
    pub record: &'r Record,
}

impl PageQuery {
    /// `select` compiled against its table as `pager`'s connection describes it, or `None` where
    /// the direct reader does not run it (see the module doc).
    pub fn compile(pager: &Pager, select: &Select) -> rusqlite::Result<Option<PageQuery>> {
        if select.group_by.is_some() {
            return Ok(None);
        }
        let Some(table) = pager.table(&select.table)? else {
            return Ok(None);
        };
        let column = |name: &str| -> Option<usize> {
            let i = table.column(name)?;
            (!table.columns[i].has_default).then_some(i)
        };
        let column_src = |name: &str| -> Option<Src> {
            let i = column(name)?;
            let c = &table.columns[i];
            Some(if c.rowid_alias {
                Src::Rowid
            } else {
                Src::column(i, c.affinity)
            })
        };
        fn src(v: &Val, column: &dyn Fn(&str) -> Option<Src>) -> Option<Src> {
            Some(match v {
                Val::Column(c) => column(c)?,
                Val::Rowid => Src::Rowid,
                Val::Int(k) => Src::Int(*k),
                Val::Null => Src::Null,
                Val::Coalesce(v, d) => src(v, column)?.or(*d),
                Val::Sql(_) => return None,
            })
        }
        let mut conds = Vec::new();
        for c in &select.conds {
            let Some(i) = column(c.column()) else {
                return Ok(None);
            };
            let numeric = table.columns[i].affinity != Affinity::Text;
            let test = match c {
                Cond::NotNull(_) => Test::NotNull,
                Cond::In(_, vs) if numeric => Test::In(vs.clone()),
                Cond::NullOrNotIn(_, vs) if numeric => Test::NullOrNotIn(vs.clone()),
                // Beyond 2^53 the bound has no exact double to compare reals with.
                Cond::AtLeast(_, v) if numeric && v.unsigned_abs() <= 1 << 53 => Test::AtLeast(*v),
                _ => return Ok(None),
            };
            conds.push((column_src(c.column()).expect("found above"), test));
        }
        let Some(outputs) = select
            .outputs
            .iter()
            .map(|(_, v)| src(v, &column_src))
            .collect::<Option<Vec<Src>>>()
        else {
            return Ok(None);
        };
        let upto = outputs
            .iter()
            .chain(conds.iter().map(|(src, _)| src))
            .filter_map(Src::record_column)
            .max()
            .map_or(0, |c| c + 1);
        Ok(Some(PageQuery {
            table,
            upto,
            conds,
            outputs,
            names: select.outputs.iter().map(|(n, _)| n.clone()).collect(),
        }))
    }

    /// Whether this plan's conditions are `other`'s (a row of their table meets both or
    /// neither: [`admits`](Self::admits) gives one answer for the two).
    pub fn same_conditions(&self, other: &PageQuery) -> bool {
        self.conds == other.conds
    }

    /// Whether the row meets the query's conditions (its `WHERE`).
    #[inline]
    pub fn admits(&self, row: &PageRow) -> bool {
        self.conds.iter().all(|(src, test)| {
            let v = self.eval(row, src);
            match test {
                Test::NotNull => v != ValueRef::Null,
                Test::In(vs) => is_in(v, vs),
                Test::NullOrNotIn(vs) => v == ValueRef::Null || !is_in(v, vs),
                Test::AtLeast(k) => at_least(v, *k),
            }
        })
    }

    /// Output `i` of the row.
    #[inline]
    pub fn value<'p>(&self, row: &PageRow<'p, '_>, i: usize) -> ValueRef<'p> {
        self.eval(row, &self.outputs[i])
    }

    #[inline(always)]
    fn eval<'p>(&self, row: &PageRow<'p, '_>, src: &Src) -> ValueRef<'p> {
        match src {
            Src::Column(i) => row.record.stored_value(row.payload, *i),
            Src::RealColumn(i) => row.record.real_value(row.payload, *i),
            Src::Rowid => ValueRef::Integer(row.rowid),
            Src::Int(k) => ValueRef::Integer(*k),
            Src::Null => ValueRef::Null,
            Src::ColumnOr(i, k) => or_int(row.record.stored_value(row.payload, *i), *k),
            Src::RealColumnOr(i, k) => or_int(row.record.real_value(row.payload, *i), *k),
        }
    }
}

/// `COALESCE(v, k)`.
#[inline(always)]
fn or_int(v: ValueRef<'_>, k: i64) -> ValueRef<'_> {
    match v {
        ValueRef::Null => ValueRef::Integer(k),
        v => v,
    }
}

/// A row as its query's outputs, by index (what the SQL path's rows give).
pub struct QueryRow<'a, 'p, 'r> {
    pub compiled: &'a PageQuery,
    pub row: PageRow<'p, 'r>,
}

impl Fields for QueryRow<'_, '_, '_> {
    fn value(&self, i: usize) -> rusqlite::Result<ValueRef<'_>> {
        if i < self.compiled.outputs.len() {
            Ok(self.compiled.value(&self.row, i))
        } else {
            Err(rusqlite::Error::InvalidColumnIndex(i))
        }
    }

    fn column_name(&self, i: usize) -> &str {
        self.compiled.names.get(i).map_or("?", String::as_str)
    }

    fn values<'s>(&'s self, first: usize, out: &mut [ValueRef<'s>]) -> rusqlite::Result<()> {
        let last = first + out.len();
        let Some(srcs) = self.compiled.outputs.get(first..last) else {
            return Err(rusqlite::Error::InvalidColumnIndex(last.saturating_sub(1)));
        };
        for (v, src) in out.iter_mut().zip(srcs) {
            *v = self.compiled.eval(&self.row, src);
        }
        Ok(())
    }
}

/// `v IN (vs)` for a column of numeric (not TEXT) affinity: numbers compare by value; text,
/// blobs and NULL are never equal to a number.
fn is_in(v: ValueRef, vs: &[i64]) -> bool {
    vs.iter().any(|&k| same_number(v, Some(k)))
}

/// `v >= k` for a column of numeric affinity (k within ±2^53, exact as a double): SQLite orders
/// NULL < numbers < text < blobs, and a comparison with NULL is not true.
fn at_least(v: ValueRef, k: i64) -> bool {
    match v {
        ValueRef::Null => false,
        ValueRef::Integer(x) => x >= k,
        ValueRef::Real(x) => x >= k as f64,
        ValueRef::Text(_) | ValueRef::Blob(_) => true,
    }
}

/// `v IS k` where k is an integer or NULL.
pub fn same_number(v: ValueRef, k: Option<i64>) -> bool {
    match (v, k) {
        (ValueRef::Null, None) => true,
        (ValueRef::Integer(x), Some(k)) => x == k,
        // Exact, as SQLite compares them: an integer beyond 2^53 is not equal to the double
        // nearest to it.
        (ValueRef::Real(x), Some(k)) => x as i64 == k && k as f64 == x,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_compare_by_value_and_exactly() {
        assert!(same_number(ValueRef::Integer(59), Some(59)));
        assert!(same_number(ValueRef::Real(59.0), Some(59)));
        assert!(!same_number(ValueRef::Real(59.5), Some(59)));
        assert!(!same_number(ValueRef::Text(b"59"), Some(59)));
        assert!(!same_number(ValueRef::Null, Some(0)));
        assert!(same_number(ValueRef::Null, None));
        assert!(!same_number(ValueRef::Integer(0), None));
        // 2^53 + 1 has no double: the double 2^53 is not equal to it.
        let k = (1i64 << 53) + 1;
        assert!(!same_number(ValueRef::Real((1i64 << 53) as f64), Some(k)));
        assert!(is_in(ValueRef::Integer(70), &[59, 70]));
        assert!(!is_in(ValueRef::Null, &[59, 70]));
        assert!(at_least(ValueRef::Integer(0), 0));
        assert!(!at_least(ValueRef::Integer(-1), 0));
        assert!(at_least(ValueRef::Real(0.0), 0));
        assert!(!at_least(ValueRef::Real(-0.5), 0));
        assert!(at_least(ValueRef::Text(b"-5"), 0));
        assert!(!at_least(ValueRef::Null, 0));
    }
}
