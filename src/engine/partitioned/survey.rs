//! The survey: one plain scan per member of `rowid, order, aux, <partition columns>` that cuts
//! every resource's rows into maximal runs sorted in rowid order, or declines.

use rusqlite::types::ValueRef;
use rusqlite::Connection;

use super::{Aux, AuxRule, Key, Run, Spec, GROUPED_FETCHES};
use crate::engine::prepass::{Prepass, Sql};
use crate::engine::row::Fields;
use crate::engine::select::{Expr, Select};
use crate::FastMap;

/// A survey gives up past this many runs (each costs ~250 bytes while reading, and a query).
const MAX_RUNS: usize = 200_000;
/// ... or when a resource has more than this many runs and they average fewer than
/// [`MIN_MEAN_RUN`] rows: a run costs a query (a few rows' worth of reading), so rows in nearly
/// random order are cheaper to sort. Long traces have many long runs (nsys writes some tables in
/// blocks: one more run per thread and block), which are read as runs.
const FEW_RUNS: usize = 64;
const MIN_MEAN_RUN: u64 = 4;
/// ... or when the filtered range scans would visit this many rows per row read.
const MAX_VISITS_PER_ROW: i64 = 48;
/// Rowids listed over a member's sparse runs at most (8 bytes each); a run is no longer listed
/// once it has [`DENSE_AFTER`] rows and is not sparse so far.
const MOST_LISTED: usize = 1 << 18;
const DENSE_AFTER: usize = 64;
/// Groups a grouped member's survey takes at most (a fetch then buffers up to an eighth of a
/// run: ~32 000 rows).
const GROUPED_MOST: usize = 1 << 18;

/// The surveyed runs of one cursor; `None` from [`survey`] means "use the SQL path".
pub struct Survey {
    pub(super) runs: Vec<Run>,
    pub(super) keys: Vec<Key>,
    /// Run indices of each partition.
    pub(super) by_partition: Vec<Vec<usize>>,
    /// Whether [`PartitionedRows::aux_floor`] is right: the aux column increases strictly along
    /// every run, and no NULL comes before an integer in a run (always, under
    /// [`AuxRule::Decline`]).
    pub(super) aux_sound: bool,
}

impl Survey {
    /// The resources' keys, by partition index.
    pub fn keys(&self) -> &[Key] {
        &self.keys
    }

    /// Whether the aux column bounds each resource's remaining rows (see [`AuxRule`]).
    pub fn aux_sound(&self) -> bool {
        self.aux_sound
    }

    /// Splits the resources into groups (e.g. per process): one survey per group, in group order.
    pub fn split_by<G: Ord>(
        self,
        group: impl Fn(&Key) -> G,
    ) -> std::collections::BTreeMap<G, Survey> {
        let mut out: std::collections::BTreeMap<G, Survey> = std::collections::BTreeMap::new();
        for (p, key) in self.keys.iter().enumerate() {
            let part = out.entry(group(key)).or_insert_with(|| Survey {
                runs: Vec::new(),
                keys: Vec::new(),
                by_partition: Vec::new(),
                aux_sound: self.aux_sound,
            });
            let np = part.keys.len();
            part.keys.push(*key);
            let mut ids = Vec::new();
            for &r in &self.by_partition[p] {
                ids.push(part.runs.len());
                part.runs.push(Run {
                    partition: np,
                    ..self.runs[r].clone()
                });
            }
            part.by_partition.push(ids);
        }
        out
    }
}

/// The survey of one spec: a scan per member, which cuts its rows into per-resource sorted runs
/// (see the module comment). The scans may go side by side with others (engine/prepass/lockstep.rs);
/// [`SurveyScans::finish`] then gives what scanning the members one after the other gives.
pub struct SurveyScans<'s> {
    spec: &'s Spec,
    /// One per member; none when the spec cannot be surveyed.
    members: Vec<MemberSurvey>,
}

impl<'s> SurveyScans<'s> {
    pub fn new(spec: &'s Spec) -> SurveyScans<'s> {
        let members = if surveyable(spec) {
            (0..spec.members.len())
                .map(|m| MemberSurvey::new(spec, m))
                .collect()
        } else {
            Vec::new()
        };
        SurveyScans { spec, members }
    }

    /// Adds the members' scans to `set`, in member order (by the direct reader where a member
    /// compiles for it: the same rows either way); [`finish`](Self::finish) takes how they
    /// ended. Returns how many were added.
    pub fn register<'a>(&'a mut self, set: &mut Prepass<'a>) -> usize {
        let (spec, n) = (self.spec, self.members.len());
        for scan in self.members.iter_mut() {
            let query = survey_query(spec, scan.member);
            let sql = Sql::Given(member_scan_sql(spec, scan.member));
            set.add(
                query.as_ref(),
                sql,
                Box::new(move |row| match row {
                    Ok(row) => scan.row(row),
                    // A page that breaks the format: SQLite reads the table instead (it reads
                    // some damage without noticing; the survey's own checks may then decline).
                    Err(_) => {
                        scan.declined = true;
                        Ok(false)
                    }
                }),
            );
        }
        n
    }

    /// How many scans [`register`](Self::register) adds.
    pub fn scan_count(&self) -> usize {
        self.members.len()
    }

    /// The runs, or `None` when the survey declines, from how each member's scan ended (in
    /// member order): the first decline or error decides, as when scanned one after the other.
    pub fn finish(self, ended: Vec<rusqlite::Result<()>>) -> rusqlite::Result<Option<Survey>> {
        if self.members.is_empty() {
            return Ok(None);
        }
        let mut done = Vec::with_capacity(self.members.len());
        for (end, scan) in ended.into_iter().zip(self.members) {
            end?;
            let Some(m) = scan.finish() else {
                return Ok(None);
            };
            done.push(m);
        }
        Ok(combine(done))
    }
}

/// A survey made on its own (its members' scans in one pass per table).
pub fn survey(
    conn: &Connection,
    spec: &Spec,
    page_reader: bool,
) -> rusqlite::Result<Option<Survey>> {
    let mut survey = SurveyScans::new(spec);
    let mut set = Prepass::new(conn, page_reader);
    survey.register(&mut set);
    let ended = set.run();
    survey.finish(ended)
}

/// Whether a spec can be surveyed at all (its partition fits a [`Key`]).
fn surveyable(spec: &Spec) -> bool {
    !spec.partition.is_empty() && spec.partition.len() <= 4
}

/// The scan of member `m`: rowid, order, aux and partition columns, in rowid order.
fn member_scan_sql(spec: &Spec, m: usize) -> String {
    let partition: Vec<String> = spec.partition.iter().map(Expr::sql).collect();
    format!(
        "SELECT rid, {}, {}, {} FROM ({}) ORDER BY rid",
        spec.order.sql(),
        Aux::expr(&spec.aux).sql(),
        partition.join(", "),
        spec.members[m].select.sql()
    )
}

/// What the survey of member `m` reads, in the order of [`member_scan_sql`]'s columns (rid,
/// order, aux, partition), as a query of its own table.
fn survey_query(spec: &Spec, m: usize) -> Option<Select> {
    let rid = Expr::out("rid");
    let aux = Aux::expr(&spec.aux);
    let exprs: Vec<&Expr> = [&rid, &spec.order, &aux]
        .into_iter()
        .chain(&spec.partition)
        .collect();
    spec.members[m].select.project(&exprs)
}

/// Resources looked up by a linear search rather than a hash (see [`MemberSurvey::take`]).
const FEW_KEYS: usize = 8;

/// One member's scan in progress: its runs, over its own resource numbering (in order of first
/// appearance; [`combine`] renumbers them as one scan after the other would have).
pub(super) struct MemberSurvey {
    member: usize,
    /// The spec's aux rule, where it has an aux column.
    aux: Option<AuxRule>,
    partition_len: usize,
    runs: Vec<Run>,
    keys: Vec<Key>,
    index: FastMap<Key, usize>,
    /// Per partition (by index): its open run, the order value of the run's last row, and its
    /// aux.
    open: Vec<Option<(usize, i64, RunAux)>>,
    /// Under [`AuxRule::Note`]: false once a run breaks the rule.
    aux_sound: bool,
    last: Option<(Key, usize)>,
    first_rid: Option<i64>,
    last_rid: i64,
    declined: bool,
    /// Per run: its rowids so far, while it may be sparse (see [`SPARSE`]); and how many are
    /// listed over all runs.
    listing: Vec<Option<Vec<i64>>>,
    listed: usize,
    /// Rows taken; a grouped member takes [`GROUPED_MOST`] at most.
    rows: usize,
    grouped: bool,
}

/// What one member's scan found.
pub(super) struct MemberRuns {
    runs: Vec<Run>,
    keys: Vec<Key>,
    aux_sound: bool,
    /// Rowids from the member's first row to its last (0 without rows).
    span_rows: i64,
    /// Whether the member groups its rows (see [`GROUPED_FETCHES`]).
    grouped: bool,
}

impl MemberSurvey {
    pub(super) fn new(spec: &Spec, member: usize) -> MemberSurvey {
        MemberSurvey {
            member,
            aux: spec.aux.as_ref().map(|a| a.rule),
            partition_len: spec.partition.len(),
            runs: Vec::new(),
            keys: Vec::new(),
            index: FastMap::default(),
            open: Vec::new(),
            aux_sound: true,
            last: None,
            first_rid: None,
            last_rid: 0,
            declined: false,
            listing: Vec::new(),
            listed: 0,
            rows: 0,
            grouped: spec.members[member].grouped(),
        }
    }

    /// Takes the next row of the scan (`rid, order, aux, partition…`); false when the survey
    /// declines (no more rows needed).
    fn row<R: Fields + ?Sized>(&mut self, row: &R) -> rusqlite::Result<bool> {
        let mut v = [ValueRef::Null; 7];
        row.values(0, &mut v[..3 + self.partition_len])?;
        let ValueRef::Integer(rid) = v[0] else {
            self.declined = true;
            return Ok(false);
        };
        let mut key = [ValueRef::Null; 4];
        key[..self.partition_len].copy_from_slice(&v[3..3 + self.partition_len]);
        Ok(self.take(rid, v[1], v[2], &key))
    }

    /// Takes the next row of the scan; false when the survey declines (no more rows needed).
    pub(super) fn take(
        &mut self,
        rid: i64,
        order: ValueRef,
        aux: ValueRef,
        parts: &[ValueRef; 4],
    ) -> bool {
        let declined = |s: &mut MemberSurvey| {
            s.declined = true;
            false
        };
        let ValueRef::Integer(order) = order else {
            return declined(self);
        };
        let aux = match (aux, self.aux) {
            (ValueRef::Integer(v), _) => Some(v),
            (ValueRef::Null, None | Some(AuxRule::Note)) => None,
            _ => return declined(self),
        };
        let mut key: Key = [None; 4];
        for (k, part) in key.iter_mut().zip(parts).take(self.partition_len) {
            *k = match *part {
                ValueRef::Null => None,
                ValueRef::Integer(v) => Some(v),
                _ => return declined(self),
            };
        }
        // Rowids come in increasing order from a sound table B-tree; a damaged file may not
        // (runs are rowid ranges, so that would read rows twice): leave it to the SQL path.
        if self.first_rid.is_some() && rid <= self.last_rid {
            return declined(self);
        }
        self.rows += 1;
        if self.grouped && self.rows > GROUPED_MOST {
            return declined(self);
        }
        self.first_rid.get_or_insert(rid);
        self.last_rid = rid;
        // Consecutive rows are mostly on the same resource: skip the hash lookup then, and
        // while there are few resources (rows of a few threads or streams that alternate).
        let p = match self.last {
            Some((k, p)) if k == key => p,
            _ => {
                let next = self.keys.len();
                let few = (next <= FEW_KEYS)
                    .then(|| self.keys.iter().position(|k| *k == key))
                    .flatten();
                let p = few.unwrap_or_else(|| *self.index.entry(key).or_insert(next));
                if p == next {
                    self.keys.push(key);
                    self.open.push(None);
                }
                self.last = Some((key, p));
                p
            }
        };
        match &mut self.open[p] {
            Some((r, prev, run_aux)) if order >= *prev => {
                match self.aux {
                    Some(AuxRule::Decline) if aux <= run_aux.last => {
                        return declined(self); // the aux column does not increase along the run
                    }
                    Some(AuxRule::Note) if !run_aux.follows(aux) => self.aux_sound = false,
                    _ => {}
                }
                run_aux.take(aux);
                let run = &mut self.runs[*r];
                run.hi = rid;
                run.rows += 1;
                run.last_order = order;
                *prev = order;
                let r = *r;
                self.list(r, rid);
            }
            _ => {
                if self.runs.len() == MAX_RUNS {
                    return declined(self);
                }
                let mut run_aux = RunAux::default();
                run_aux.take(aux);
                self.open[p] = Some((self.runs.len(), order, run_aux));
                self.runs.push(Run {
                    member: self.member,
                    partition: p,
                    lo: rid,
                    hi: rid,
                    first_order: order,
                    first_aux: aux,
                    last_order: order,
                    rows: 1,
                    rowids: None,
                });
                self.listing.push(None);
                self.list(self.runs.len() - 1, rid);
            }
        }
        true
    }

    /// Adds row `rid` to the list of run `r` (just extended with it), while the run may be
    /// sparse and the member's lists have room.
    fn list(&mut self, r: usize, rid: i64) {
        let run = &self.runs[r];
        let listing = &mut self.listing[r];
        if run.rows == 1 && self.listed < MOST_LISTED {
            *listing = Some(vec![rid]);
            self.listed += 1;
            return;
        }
        let Some(list) = listing else {
            return;
        };
        let dense = list.len() >= DENSE_AFTER && !run.is_sparse();
        if dense || self.listed == MOST_LISTED {
            self.listed -= list.len();
            *listing = None;
        } else {
            list.push(rid);
            self.listed += 1;
        }
    }

    /// Its runs, or `None` when it declined.
    pub(super) fn finish(self) -> Option<MemberRuns> {
        if self.declined {
            return None;
        }
        let span_rows = self.first_rid.map_or(0, |f| self.last_rid - f + 1);
        let mut runs = self.runs;
        for (run, list) in runs.iter_mut().zip(self.listing) {
            if let Some(list) = list.filter(|_| run.is_sparse()) {
                debug_assert_eq!(list.len() as u64, run.rows, "every row listed");
                run.rowids = Some(list.into());
            }
        }
        Some(MemberRuns {
            runs,
            keys: self.keys,
            aux_sound: self.aux_sound,
            span_rows,
            grouped: self.grouped,
        })
    }
}

/// The aux values of a run so far: its last one, and whether a NULL came.
#[derive(Clone, Copy, Default)]
struct RunAux {
    last: Option<i64>,
    null_seen: bool,
}

impl RunAux {
    fn take(&mut self, aux: Option<i64>) {
        match aux {
            Some(_) => self.last = aux,
            None => self.null_seen = true,
        }
    }

    /// Whether `aux` keeps the floor right ([`AuxRule::Note`]): a NULL always does (the run's
    /// head is then left out of the floor, and so must every later row be: only NULLs may
    /// follow); an integer only above the last one and before any NULL.
    fn follows(&self, aux: Option<i64>) -> bool {
        match aux {
            None => true,
            Some(a) => !self.null_seen && self.last.is_none_or(|l| a > l),
        }
    }
}

/// The survey of all members (in member order), or a decline (see the module comment).
pub(super) fn combine(members: Vec<MemberRuns>) -> Option<Survey> {
    // A grouped member's fetches each pass over its table (see GROUPED_FETCHES).
    let rows = |grouped: bool| -> u64 {
        (members.iter().filter(|m| m.grouped == grouped))
            .flat_map(|m| &m.runs)
            .map(|r| r.rows)
            .sum()
    };
    if rows(true).saturating_mul(GROUPED_FETCHES) > rows(false) {
        return None;
    }
    let mut runs: Vec<Run> = Vec::new();
    let mut keys: Vec<Key> = Vec::new();
    let mut index: FastMap<Key, usize> = FastMap::default();
    let mut span_rows = 0i64;
    let aux_sound = members.iter().all(|m| m.aux_sound);
    for m in members {
        // The member's resources in its order of first appearance: new ones numbered next, as
        // one scan after the other numbers them.
        let renumber: Vec<usize> = m
            .keys
            .iter()
            .map(|key| {
                let next = keys.len();
                let p = *index.entry(*key).or_insert(next);
                if p == next {
                    keys.push(*key);
                }
                p
            })
            .collect();
        if runs.len() + m.runs.len() > MAX_RUNS {
            return None;
        }
        runs.extend(m.runs.into_iter().map(|r| Run {
            partition: renumber[r.partition],
            ..r
        }));
        span_rows += m.span_rows;
    }
    // A run's query visits every row of its member in lo..=hi; rowids are dense in exports.
    let visits: i64 = runs.iter().map(|r| r.hi - r.lo + 1).sum();
    if visits > MAX_VISITS_PER_ROW.saturating_mul(span_rows.max(1)) {
        return None;
    }
    let mut by_partition = vec![Vec::new(); keys.len()];
    for (i, r) in runs.iter().enumerate() {
        by_partition[r.partition].push(i);
    }
    let fragmented = |p: &Vec<usize>| {
        let rows: u64 = p.iter().map(|&r| runs[r].rows).sum();
        p.len() > FEW_RUNS && rows < MIN_MEAN_RUN * p.len() as u64
    };
    if by_partition.iter().any(fragmented) {
        return None;
    }
    Some(Survey {
        runs,
        keys,
        by_partition,
        aux_sound,
    })
}
