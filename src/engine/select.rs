//! The plain queries the sort-free readers run over one table: named outputs and simple row
//! conditions, written once and run either by SQLite (rendered as SQL here) or by the page reader
//! (compiled in page_reader.rs): one description for both is what makes them give the same rows.

/// One output of a [`Select`].
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    /// A column of the table.
    Column(String),
    /// The row's rowid.
    Rowid,
    /// An integer constant (a family number).
    Int(i64),
    Null,
    /// `COALESCE(value, default)`
    Coalesce(Box<Val>, i64),
    /// Any other SQL (an aggregate): a query with one is only run by SQLite.
    Sql(&'static str),
}

impl Val {
    pub fn col(name: &str) -> Val {
        Val::Column(name.to_owned())
    }

    /// The column where `present`, else NULL (columns come and go across nsys versions).
    pub fn col_if(present: bool, name: &str) -> Val {
        if present {
            Val::col(name)
        } else {
            Val::Null
        }
    }

    fn sql(&self) -> String {
        match self {
            Val::Column(c) => quoted(c),
            Val::Rowid => "rowid".into(),
            Val::Int(v) => v.to_string(),
            Val::Null => "NULL".into(),
            Val::Coalesce(v, d) => format!("COALESCE({}, {d})", v.sql()),
            Val::Sql(s) => (*s).to_owned(),
        }
    }
}

/// A condition every row of a [`Select`] meets.
#[derive(Clone, Debug, PartialEq)]
pub enum Cond {
    /// `col IS NOT NULL`
    NotNull(String),
    /// `col IN (values)`
    In(String, Vec<i64>),
    /// `(col IS NULL OR col NOT IN (values))`
    NullOrNotIn(String, Vec<i64>),
    /// `col >= value`
    AtLeast(String, i64),
}

impl Cond {
    /// The column the condition tests.
    pub fn column(&self) -> &str {
        match self {
            Cond::NotNull(c) | Cond::In(c, _) | Cond::NullOrNotIn(c, _) | Cond::AtLeast(c, _) => c,
        }
    }

    pub fn sql(&self) -> String {
        let list = |vs: &[i64]| vs.iter().map(i64::to_string).collect::<Vec<_>>().join(", ");
        match self {
            Cond::NotNull(c) => format!("{} IS NOT NULL", quoted(c)),
            Cond::In(c, vs) => format!("{} IN ({})", quoted(c), list(vs)),
            Cond::NullOrNotIn(c, vs) => {
                format!("({0} IS NULL OR {0} NOT IN ({1}))", quoted(c), list(vs))
            }
            Cond::AtLeast(c, v) => format!("{} >= {v}", quoted(c)),
        }
    }
}

/// `SELECT outputs FROM table WHERE conds [GROUP BY …]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Select {
    pub table: String,
    /// (name, value), in order.
    pub outputs: Vec<(String, Val)>,
    pub conds: Vec<Cond>,
    /// `GROUP BY` columns: a grouped query is only run by SQLite.
    pub group_by: Option<&'static str>,
}

impl Select {
    pub fn new(table: &str) -> Select {
        Select {
            table: table.to_owned(),
            outputs: Vec::new(),
            conds: Vec::new(),
            group_by: None,
        }
    }

    pub fn output(mut self, name: &str, v: Val) -> Select {
        self.outputs.push((name.to_owned(), v));
        self
    }

    pub fn when(mut self, c: Cond) -> Select {
        self.conds.push(c);
        self
    }

    pub fn not_null(self, col: &str) -> Select {
        self.when(Cond::NotNull(col.to_owned()))
    }

    /// The value of output `name`.
    pub fn get(&self, name: &str) -> Option<&Val> {
        self.outputs
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v)
    }

    /// The same rows with other outputs: `exprs` over this query's outputs, named by position
    /// (`c0`, `c1`…). `None` if one names an output this query lacks.
    pub fn project(&self, exprs: &[&Expr]) -> Option<Select> {
        let outputs = exprs
            .iter()
            .enumerate()
            .map(|(i, e)| Some((format!("c{i}"), e.over(self)?)))
            .collect::<Option<Vec<_>>>()?;
        Some(Select {
            table: self.table.clone(),
            outputs,
            conds: self.conds.clone(),
            group_by: self.group_by,
        })
    }

    /// The query as SQL.
    pub fn sql(&self) -> String {
        let outputs: Vec<String> = self
            .outputs
            .iter()
            .map(|(n, v)| format!("{} AS {}", v.sql(), quoted(n)))
            .collect();
        let mut sql = format!("SELECT {} FROM {}", outputs.join(", "), quoted(&self.table));
        if !self.conds.is_empty() {
            let conds: Vec<String> = self.conds.iter().map(Cond::sql).collect();
            sql.push_str(" WHERE ");
            sql.push_str(&conds.join(" AND "));
        }
        if let Some(g) = self.group_by {
            sql.push_str(" GROUP BY ");
            sql.push_str(g);
        }
        sql
    }
}

/// An expression over a [`Select`]'s outputs (what the readers take from a member's rows).
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// An output, by name.
    Out(String),
    Null,
    /// `COALESCE(output, value)`
    Coalesce(String, i64),
}

impl Expr {
    pub fn out(name: &str) -> Expr {
        Expr::Out(name.to_owned())
    }

    pub fn sql(&self) -> String {
        match self {
            Expr::Out(n) => quoted(n),
            Expr::Null => "NULL".into(),
            Expr::Coalesce(n, v) => format!("COALESCE({}, {v})", quoted(n)),
        }
    }

    /// The expression as a value of `select`'s table.
    fn over(&self, select: &Select) -> Option<Val> {
        Some(match self {
            Expr::Out(n) => select.get(n)?.clone(),
            Expr::Null => Val::Null,
            Expr::Coalesce(n, d) => Val::Coalesce(Box::new(select.get(n)?.clone()), *d),
        })
    }

    /// What messages call it.
    pub fn name(&self) -> &str {
        match self {
            Expr::Out(n) | Expr::Coalesce(n, _) => n,
            Expr::Null => "NULL",
        }
    }
}

/// An SQL identifier, quoted.
fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rendered_as_sql() {
        let s = Select::new("OSRT_API")
            .output("fam", Val::Int(5))
            .output("rid", Val::Rowid)
            .output("nm", Val::col("nameId"))
            .output("txt", Val::Null)
            .not_null("start")
            .when(Cond::NullOrNotIn("eventClass".into(), vec![31, 32]));
        assert_eq!(
            s.sql(),
            "SELECT 5 AS \"fam\", rowid AS \"rid\", \"nameId\" AS \"nm\", NULL AS \"txt\" FROM \"OSRT_API\" \
             WHERE \"start\" IS NOT NULL AND (\"eventClass\" IS NULL OR \"eventClass\" NOT IN (31, 32))"
        );
        assert_eq!(s.get("NM"), Some(&Val::col("nameId")));
        let mut g = Select::new("t")
            .output("n", Val::Sql("COUNT(*)"))
            .when(Cond::In("k".into(), vec![1]));
        g.group_by = Some("a, b");
        assert_eq!(
            g.sql(),
            "SELECT COUNT(*) AS \"n\" FROM \"t\" WHERE \"k\" IN (1) GROUP BY a, b"
        );
        assert_eq!(
            Expr::Coalesce("contextId".into(), 0).sql(),
            "COALESCE(\"contextId\", 0)"
        );
        let p = s
            .project(&[
                &Expr::out("rid"),
                &Expr::Coalesce("nm".into(), 7),
                &Expr::Null,
            ])
            .unwrap();
        assert_eq!(
            p.outputs,
            [
                ("c0".to_owned(), Val::Rowid),
                (
                    "c1".to_owned(),
                    Val::Coalesce(Box::new(Val::col("nameId")), 7)
                ),
                ("c2".to_owned(), Val::Null)
            ]
        );
        assert_eq!(p.conds, s.conds);
        assert!(s.project(&[&Expr::out("missing")]).is_none());
    }
}
