//! Resolves nsys string ids (StringIds.id) to interned names, once per distinct id.

use rusqlite::{Connection, OptionalExtension, Statement};

use crate::error::{Error, Result};
use crate::model::{NameId, Names};
use crate::FastMap;

pub struct StringCache<'c> {
    conn: &'c Connection,
    /// The lookup's SQL, and the lookup once prepared: at the first string asked (the contexts
    /// of every input are made for each group of a run of many, most never asked).
    sql: String,
    lookup: Option<Statement<'c>>,
    cache: FastMap<i64, NameId>,
    file: String,
}

impl<'c> StringCache<'c> {
    pub fn new(conn: &'c Connection, strings_table: &str, file: &str) -> Self {
        StringCache {
            conn,
            sql: format!("SELECT value FROM {strings_table} WHERE id = ?1"),
            lookup: None,
            cache: FastMap::default(),
            file: file.to_owned(),
        }
    }

    /// The raw string of id `id`; `None` if the export has no such id.
    pub fn text(&mut self, id: i64) -> Result<Option<String>> {
        let read = |e| Error::read(&self.file, "StringIds", e);
        let lookup = match &mut self.lookup {
            Some(lookup) => lookup,
            None => self
                .lookup
                .insert(self.conn.prepare(&self.sql).map_err(read)?),
        };
        lookup
            .query_row([id], |r| r.get::<_, Option<String>>(0))
            .optional()
            .map(Option::flatten)
            .map_err(read)
    }

    /// The name of a call whose name is string `id`, with a placeholder where it has none.
    pub fn call_name(&mut self, id: Option<i64>) -> Result<String> {
        Ok(match id {
            Some(id) => (self.text(id)?).unwrap_or_else(|| format!("<unknown string {id}>")),
            None => "<unnamed call>".to_owned(),
        })
    }

    /// Interned name of string id `id`; a missing id becomes `<unknown string N>` so nothing is lost.
    pub fn name(&mut self, id: i64, names: &mut Names) -> Result<NameId> {
        self.name_with(id, names, |s| s.to_owned())
    }

    /// Like [`name`](Self::name), rewriting the string once with `f` before interning.
    pub fn name_with(
        &mut self,
        id: i64,
        names: &mut Names,
        f: impl Fn(&str) -> String,
    ) -> Result<NameId> {
        if let Some(&n) = self.cache.get(&id) {
            return Ok(n);
        }
        let text = self
            .text(id)?
            .unwrap_or_else(|| format!("<unknown string {id}>"));
        let n = names.intern(&f(&text));
        self.cache.insert(id, n);
        Ok(n)
    }
}
