//! A row whose columns are read by index, whatever holds it (a live SQLite row, a row the page
//! reader parsed, a row copied out), and rusqlite's conversions of a column's value.

use rusqlite::types::ValueRef;

/// A row whose columns can be read by index: a live SQLite row, or one buffered in memory.
pub trait Fields {
    fn value(&self, i: usize) -> rusqlite::Result<ValueRef<'_>>;
    fn column_name(&self, i: usize) -> &str;

    /// Values `first`, `first + 1`, … into `out`: several in one call where a row is read
    /// through `&dyn Fields` (discovery's scans, a call per value otherwise).
    fn values<'s>(&'s self, first: usize, out: &mut [ValueRef<'s>]) -> rusqlite::Result<()> {
        for (k, v) in out.iter_mut().enumerate() {
            *v = self.value(first + k)?;
        }
        Ok(())
    }
}

impl Fields for rusqlite::Row<'_> {
    fn value(&self, i: usize) -> rusqlite::Result<ValueRef<'_>> {
        self.get_ref(i)
    }
    fn column_name(&self, i: usize) -> &str {
        self.as_ref().column_name(i).unwrap_or("?")
    }
}

/// Column `i` of a row (an SQL row or one the direct reader gives) converted as rusqlite's
/// `Row::get` converts it, with the same errors.
pub fn get<T: rusqlite::types::FromSql, R: Fields + ?Sized>(
    row: &R,
    i: usize,
) -> rusqlite::Result<T> {
    convert(row, i, row.value(i)?)
}

/// `value`, column `i` of `row`, converted as [`get`] converts it.
pub fn convert<T: rusqlite::types::FromSql, R: Fields + ?Sized>(
    row: &R,
    i: usize,
    value: ValueRef,
) -> rusqlite::Result<T> {
    use rusqlite::types::FromSqlError;
    T::column_result(value).map_err(|err| match err {
        FromSqlError::InvalidType => {
            rusqlite::Error::InvalidColumnType(i, row.column_name(i).to_owned(), value.data_type())
        }
        FromSqlError::OutOfRange(v) => rusqlite::Error::IntegralValueOutOfRange(i, v),
        FromSqlError::Utf8Error(e) => rusqlite::Error::Utf8Error(i, e),
        FromSqlError::Other(e) => {
            rusqlite::Error::FromSqlConversionFailure(i, value.data_type(), e)
        }
        other => rusqlite::Error::FromSqlConversionFailure(i, value.data_type(), Box::new(other)),
    })
}

/// Position of `col` in `columns`, evaluated at compile time where decoders name their columns
/// (`const { column_index(..) }`), not looked up per row.
pub const fn column_index(columns: &[&str], col: &str) -> usize {
    let mut i = 0;
    while i < columns.len() {
        let (a, b) = (columns[i].as_bytes(), col.as_bytes());
        if a.len() == b.len() {
            let mut j = 0;
            while j < a.len() && a[j] == b[j] {
                j += 1;
            }
            if j == a.len() {
                return i;
            }
        }
        i += 1;
    }
    panic!("unknown column")
}
