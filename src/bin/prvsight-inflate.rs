//! `prvsight-inflate`: makes big benchmark inputs out of a small real Nsight Systems export.
//!
//! The export is first copied exactly (`VACUUM INTO`: same tables, same DDL text in sqlite_master,
//! same page size), then its activity is replicated in the copy with `INSERT … SELECT`:
//! * along time: copy k of every activity row is shifted by k·period (period = span of the
//!   activity + 1 µs), and every id that links rows (correlationId, NVTX rangeId, sample ids,
//!   CUDA event ids, grid ids) is offset by k·stride (stride = largest id + 1), so API↔GPU links
//!   stay one-to-one and no id repeats;
//! * across ranks (`--ranks R`): every process is cloned R−1 times with a new pid (and tids),
//!   encoded in globalPid/globalTid exactly as nsys packs them (`hi16<<48 | pid<<24 | tid`), on
//!   new GPUs (deviceId + r·#GPUs), with its identity rows (PROCESSES, ThreadNames, streams,
//!   contexts, GPUs, MPI ranks) cloned too.
//!
//! Usage: `prvsight-inflate IN.sqlite -o OUT.sqlite (--factor N | --target-mb M) [--ranks R]`

#[cfg(target_family = "wasm")]
fn main() {}

#[cfg(not(target_family = "wasm"))]
fn main() {
    match inflate::main(std::env::args().skip(1).collect()) {
        Ok(()) => {}
        Err(e) => {
            eprintln!("prvsight-inflate: error: {e}");
            std::process::exit(1);
        }
    }
}

#[cfg(not(target_family = "wasm"))]
mod inflate {
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    use rusqlite::{Connection, OpenFlags};

    type Res<T> = Result<T, String>;

    const USAGE: &str =
        "usage: prvsight-inflate IN.sqlite -o OUT.sqlite (--factor N | --target-mb M) [--ranks R]";
    /// Gap between two time copies, so that no interval of one copy touches the next.
    const GAP_NS: i64 = 1_000;
    /// nsys packs pid and tid in 24 bits each.
    const ID_BITS_MAX: i64 = 0xFF_FFFF;

    struct Args {
        input: PathBuf,
        output: PathBuf,
        factor: Option<u64>,
        target_mb: Option<u64>,
        ranks: u64,
    }

    fn parse(args: Vec<String>) -> Res<Args> {
        let mut it = args.into_iter();
        let (mut input, mut output, mut factor, mut target_mb, mut ranks) =
            (None, None, None, None, 1);
        let num = |v: Option<String>, what: &str| -> Res<u64> {
            v.ok_or(format!("{what} needs a value"))?
                .parse::<u64>()
                .map_err(|e| format!("{what}: {e}"))
                .and_then(|n| {
                    if n == 0 {
                        Err(format!("{what} must be at least 1"))
                    } else {
                        Ok(n)
                    }
                })
        };
        while let Some(a) = it.next() {
            match a.as_str() {
                "-o" | "--output" => {
                    output = Some(PathBuf::from(it.next().ok_or("-o needs a path")?))
                }
                "--factor" => factor = Some(num(it.next(), "--factor")?),
                "--target-mb" => target_mb = Some(num(it.next(), "--target-mb")?),
                "--ranks" => ranks = num(it.next(), "--ranks")?,
                "-h" | "--help" => return Err(USAGE.into()),
                s if s.starts_with('-') => return Err(format!("unknown option {s}\n{USAGE}")),
                _ if input.is_none() => input = Some(PathBuf::from(a)),
                _ => return Err(format!("one input only\n{USAGE}")),
            }
        }
        if factor.is_some() == target_mb.is_some() {
            return Err(format!(
                "give exactly one of --factor and --target-mb\n{USAGE}"
            ));
        }
        Ok(Args {
            input: input.ok_or(USAGE)?,
            output: output.ok_or(USAGE)?,
            factor,
            target_mb,
            ranks,
        })
    }

    /// A table of the copy and how its rows are replicated.
    struct Table {
        name: String,
        cols: Vec<String>,
        /// Rows present before a pass: rowid ≤ this selects them (nsys tables are rowid tables).
        max_rowid: i64,
        /// Replicated along time (activity), else only cloned per rank (identity rows).
        timed: bool,
    }

    /// Which id family a column belongs to; ids of a family are offset together.
    fn id_family(table: &str, col: &str, pk: bool) -> Option<String> {
        match (table, col) {
            (_, "correlationId") => Some("correlation".into()),
            ("NVTX_EVENTS", "rangeId") => Some("nvtx-range".into()),
            ("COMPOSITE_EVENTS" | "SAMPLING_CALLCHAINS", "id") => Some("sample".into()),
            (_, "eventId") => Some("cuda-event".into()),
            (_, "eventSyncId") => Some("cuda-event-sync".into()),
            (_, "gridId") => Some("grid".into()),
            // Any other key column of an activity table must stay unique too.
            _ if pk => Some(format!("{table}.{col}")),
            _ => None,
        }
    }

    fn is_time_col(col: &str) -> bool {
        matches!(col, "start" | "end" | "timestamp") || col.starts_with("qmd")
    }

    /// Tables without time whose rows describe processes or GPUs: cloned once per extra rank.
    const IDENTITY_TABLES: &[&str] = &[
        "PROCESSES",
        "ThreadNames",
        "ProcessStreams",
        "TARGET_INFO_CUDA_STREAM",
        "TARGET_INFO_CUDA_CONTEXT_INFO",
        "TARGET_INFO_CUDA_DEVICE",
        "TARGET_INFO_GPU",
        "TARGET_INFO_GPU_METRICS",
        "MPI_RANKS",
    ];

    fn q(name: &str) -> String {
        format!("\"{}\"", name.replace('"', "\"\""))
    }

    fn scalar(c: &Connection, sql: &str) -> Res<Option<i64>> {
        c.query_row(sql, [], |r| r.get::<_, Option<i64>>(0))
            .map_err(|e| format!("{sql}: {e}"))
    }

    fn exec(c: &Connection, sql: &str) -> Res<usize> {
        c.execute(sql, []).map_err(|e| format!("{sql}: {e}"))
    }

    pub fn main(args: Vec<String>) -> Res<()> {
        let a = parse(args)?;
        let started = std::time::Instant::now();
        copy_exactly(&a)?;
        let c = Connection::open(&a.output).map_err(|e| format!("{}: {e}", a.output.display()))?;
        // A scratch file: no journal, no fsync.
        c.execute_batch(
            "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -65536;",
        )
        .map_err(|e| e.to_string())?;
        let mut tables = read_tables(&c)?;
        if !tables.iter().any(|t| t.timed) {
            return Err(format!(
                "{}: no activity table (none has a start column)",
                a.input.display()
            ));
        }
        let (first, last) = time_range(&c, &tables)?;
        let period = last
            .checked_sub(first)
            .and_then(|s| s.checked_add(GAP_NS))
            .ok_or("the activity spans more than 2^63 ns")?;
        let strides = strides(&c, &tables)?;
        let rows_before = total_rows(&c, &tables)?;

        c.execute_batch("BEGIN").map_err(|e| e.to_string())?;
        let copies = replicate_in_time(&c, &tables, &a, period, &strides)?;
        if a.ranks > 1 {
            for t in tables.iter_mut() {
                t.max_rowid =
                    scalar(&c, &format!("SELECT max(rowid) FROM {}", q(&t.name)))?.unwrap_or(0);
            }
            replicate_ranks(&c, &tables, a.ranks, copies, &strides)?;
        }
        stretch_session(&c, (copies as i64 - 1) * period)?;
        exec(
            &c,
            &format!(
                "INSERT INTO META_DATA_EXPORT(name, value) SELECT 'INFLATED_BY', 'prvsight-inflate: {copies} copies along time (period {period} ns), {} ranks' \
                 WHERE EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'META_DATA_EXPORT')",
                a.ranks
            ),
        )?;
        c.execute_batch("COMMIT").map_err(|e| e.to_string())?;

        let rows_after = total_rows(&c, &tables)?;
        let bytes = file_bytes(&c)?;
        eprintln!(
            "prvsight-inflate: {} → {}: {copies} time copies × {} ranks, activity rows {rows_before} → {rows_after}, {:.1} MiB, in {:.1} s",
            a.input.display(),
            a.output.display(),
            a.ranks,
            bytes as f64 / (1 << 20) as f64,
            started.elapsed().as_secs_f64()
        );
        Ok(())
    }

    /// The exact copy: SQLite rewrites every page of the source into the new file.
    fn copy_exactly(a: &Args) -> Res<()> {
        let same = |p: &PathBuf| std::fs::canonicalize(p).ok();
        if a.output.exists() && same(&a.output) == same(&a.input) {
            return Err(format!(
                "{}: the output would overwrite the input",
                a.output.display()
            ));
        }
        if a.output.exists() {
            std::fs::remove_file(&a.output).map_err(|e| format!("{}: {e}", a.output.display()))?;
        }
        let src = Connection::open_with_flags(&a.input, OpenFlags::SQLITE_OPEN_READ_ONLY)
            .map_err(|e| format!("{}: {e}", a.input.display()))?;
        let out = a.output.to_str().ok_or("output path is not UTF-8")?;
        src.execute("VACUUM INTO ?1", [out])
            .map_err(|e| format!("copying {}: {e}", a.input.display()))?;
        Ok(())
    }

    fn read_tables(c: &Connection) -> Res<Vec<Table>> {
        let mut st = c
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
            .map_err(|e| e.to_string())?;
        let names: Vec<String> = st
            .query_map([], |r| r.get(0))
            .and_then(|rows| rows.collect())
            .map_err(|e| e.to_string())?;
        let has_samples = names.iter().any(|n| n == "COMPOSITE_EVENTS");
        let mut out = Vec::new();
        for name in names {
            let cols = columns(c, &name)?;
            let has = |col: &str| cols.iter().any(|(c, _)| c == col);
            let timed = has("start")
                || (name == "GPU_METRICS" && has("timestamp"))
                // CUDA events: copied with the calls that made them (by correlation id).
                || (name == "CUPTI_ACTIVITY_KIND_CUDA_EVENT" && has("timestamp"))
                // Call stacks of the samples: keyed by the sample id, so they follow the samples.
                || (name == "SAMPLING_CALLCHAINS" && has_samples);
            if !timed && !IDENTITY_TABLES.contains(&name.as_str()) {
                continue;
            }
            let max_rowid =
                scalar(c, &format!("SELECT max(rowid) FROM {}", q(&name)))?.unwrap_or(0);
            if max_rowid == 0 {
                continue;
            }
            out.push(Table {
                cols: cols.into_iter().map(|(c, _)| c).collect(),
                name,
                max_rowid,
                timed,
            });
        }
        Ok(out)
    }

    /// (name, is the table's single-column primary key) of every column. In a composite key
    /// (SAMPLING_CALLCHAINS: id, stackDepth) only the id family column is offset.
    fn columns(c: &Connection, table: &str) -> Res<Vec<(String, bool)>> {
        let mut st = c
            .prepare(&format!("PRAGMA table_info({})", q(table)))
            .map_err(|e| e.to_string())?;
        let rows: Vec<(String, i64)> = st
            .query_map([], |r| Ok((r.get::<_, String>(1)?, r.get::<_, i64>(5)?)))
            .and_then(|rows| rows.collect())
            .map_err(|e| e.to_string())?;
        let single = rows.iter().filter(|(_, pk)| *pk > 0).count() == 1;
        Ok(rows
            .into_iter()
            .map(|(name, pk)| (name, single && pk > 0))
            .collect())
    }

    /// First and last time of the activity, over every time column of every activity table.
    fn time_range(c: &Connection, tables: &[Table]) -> Res<(i64, i64)> {
        let (mut first, mut last) = (i64::MAX, i64::MIN);
        for t in tables.iter().filter(|t| t.timed) {
            for col in t
                .cols
                .iter()
                .filter(|c| matches!(c.as_str(), "start" | "end" | "timestamp"))
            {
                let sql = format!("SELECT min({0}), max({0}) FROM {1}", q(col), q(&t.name));
                let (lo, hi) = c
                    .query_row(&sql, [], |r| {
                        Ok((r.get::<_, Option<i64>>(0)?, r.get::<_, Option<i64>>(1)?))
                    })
                    .map_err(|e| format!("{sql}: {e}"))?;
                if let (Some(lo), Some(hi)) = (lo, hi) {
                    first = first.min(lo);
                    last = last.max(hi);
                }
            }
        }
        if first > last {
            return Err("the activity tables hold no times".into());
        }
        Ok((first, last))
    }

    /// Per id family: largest id + 1, so that offset copies never meet the originals.
    fn strides(c: &Connection, tables: &[Table]) -> Res<BTreeMap<String, i64>> {
        let mut out: BTreeMap<String, i64> = BTreeMap::new();
        for t in tables.iter().filter(|t| t.timed) {
            for (col, pk) in columns(c, &t.name)? {
                if let Some(fam) = id_family(&t.name, &col, pk && !is_time_col(&col)) {
                    let max = scalar(c, &format!("SELECT max({}) FROM {}", q(&col), q(&t.name)))?
                        .unwrap_or(0);
                    let e = out.entry(fam).or_insert(1);
                    *e = (*e).max(max.saturating_add(1));
                }
            }
        }
        Ok(out)
    }

    fn total_rows(c: &Connection, tables: &[Table]) -> Res<i64> {
        let mut n = 0;
        for t in tables.iter().filter(|t| t.timed) {
            n += scalar(c, &format!("SELECT count(*) FROM {}", q(&t.name)))?.unwrap_or(0);
        }
        Ok(n)
    }

    fn file_bytes(c: &Connection) -> Res<u64> {
        let pages = scalar(c, "PRAGMA page_count")?.unwrap_or(0);
        let size = scalar(c, "PRAGMA page_size")?.unwrap_or(0);
        Ok((pages * size) as u64)
    }

    /// Copies 1.. of the activity; returns how many copies the file holds (the original is copy 0).
    fn replicate_in_time(
        c: &Connection,
        tables: &[Table],
        a: &Args,
        period: i64,
        strides: &BTreeMap<String, i64>,
    ) -> Res<u64> {
        let pks: BTreeMap<&str, Vec<(String, bool)>> = tables
            .iter()
            .map(|t| Ok((t.name.as_str(), columns(c, &t.name)?)))
            .collect::<Res<_>>()?;
        let mut k: u64 = 1;
        loop {
            let done = match (a.factor, a.target_mb) {
                (Some(n), _) => k >= n,
                (_, Some(mb)) => file_bytes(c)? >= mb << 20,
                _ => true,
            };
            if done {
                return Ok(k);
            }
            let shift = (k as i64)
                .checked_mul(period)
                .ok_or("time shift overflows")?;
            for t in tables.iter().filter(|t| t.timed) {
                let exprs: Vec<String> = pks[t.name.as_str()]
                    .iter()
                    .map(|(col, pk)| {
                        if is_time_col(col) {
                            format!("{} + {shift}", q(col))
                        } else if let Some(fam) = id_family(&t.name, col, *pk) {
                            format!("{} + {}", q(col), k as i64 * strides[&fam])
                        } else {
                            q(col)
                        }
                    })
                    .collect();
                insert_select(c, t, &exprs)?;
            }
            k += 1;
        }
    }

    fn insert_select(c: &Connection, t: &Table, exprs: &[String]) -> Res<usize> {
        let cols: Vec<String> = t.cols.iter().map(|c| q(c)).collect();
        exec(
            c,
            &format!(
                "INSERT INTO {0} ({1}) SELECT {2} FROM {0} WHERE rowid <= {3}",
                q(&t.name),
                cols.join(", "),
                exprs.join(", "),
                t.max_rowid
            ),
        )
    }

    /// Clones every process (with all its activity and identity rows) `ranks − 1` times.
    fn replicate_ranks(
        c: &Connection,
        tables: &[Table],
        ranks: u64,
        copies: u64,
        strides: &BTreeMap<String, i64>,
    ) -> Res<()> {
        // New pids and tids start past every id in use, so no clone meets an original thread.
        let mut max_id = 0i64;
        let mut devices = 0i64;
        let mut mpi_ranks = 0i64;
        for t in tables {
            for col in &t.cols {
                let n = &t.name;
                match col.as_str() {
                    "globalTid" | "endGlobalTid" => {
                        let sql = format!("SELECT max(max(({0} >> 24) & {ID_BITS_MAX}, {0} & {ID_BITS_MAX})) FROM {1}", q(col), q(n));
                        max_id = max_id.max(scalar(c, &sql)?.unwrap_or(0));
                    }
                    "globalPid" => {
                        let sql = format!(
                            "SELECT max(({} >> 24) & {ID_BITS_MAX}) FROM {}",
                            q(col),
                            q(n)
                        );
                        max_id = max_id.max(scalar(c, &sql)?.unwrap_or(0));
                    }
                    "pid" | "processId" => {
                        max_id = max_id.max(
                            scalar(c, &format!("SELECT max({}) FROM {}", q(col), q(n)))?
                                .unwrap_or(0),
                        )
                    }
                    "deviceId" | "srcDeviceId" | "dstDeviceId" => {
                        devices = devices.max(
                            scalar(c, &format!("SELECT max({}) + 1 FROM {}", q(col), q(n)))?
                                .unwrap_or(0),
                        )
                    }
                    "rank" if n == "MPI_RANKS" => {
                        mpi_ranks = scalar(c, "SELECT max(rank) + 1 FROM MPI_RANKS")?.unwrap_or(0)
                    }
                    _ => {}
                }
            }
        }
        let step = max_id + 1;
        if step
            .checked_mul(ranks as i64)
            .is_none_or(|top| top > ID_BITS_MAX)
        {
            return Err(format!(
                "{ranks} ranks do not fit in nsys's 24-bit pids (largest pid/tid {max_id})"
            ));
        }
        let devices = devices.max(1);
        for r in 1..ranks as i64 {
            let d = r * step;
            let g = r * devices;
            for t in tables {
                let exprs: Vec<String> = columns(c, &t.name)?
                    .iter()
                    .map(|(col, pk)| {
                        let qc = q(col);
                        let fam = if t.timed {
                            id_family(&t.name, col, *pk && !is_time_col(col))
                        } else {
                            None
                        };
                        match (t.name.as_str(), col.as_str()) {
                            (_, "globalPid") => format!("{qc} + {}", d << 24),
                            (_, "globalTid" | "endGlobalTid") => {
                                format!("{qc} + {}", (d << 24) + d)
                            }
                            (_, "pid" | "processId") => format!("{qc} + {d}"),
                            (_, "deviceId" | "srcDeviceId" | "dstDeviceId") => {
                                format!("{qc} + {g}")
                            }
                            ("TARGET_INFO_GPU", "id" | "cuDevice")
                            | ("TARGET_INFO_CUDA_DEVICE", "cudaId" | "gpuId") => {
                                format!("{qc} + {g}")
                            }
                            // The GPU is the low byte of a metrics typeId.
                            ("GPU_METRICS" | "TARGET_INFO_GPU_METRICS", "typeId") => {
                                format!("{qc} + {g}")
                            }
                            ("MPI_RANKS", "rank") => format!("{qc} + {}", r * mpi_ranks),
                            _ => match fam {
                                Some(f) => format!("{qc} + {}", r * copies as i64 * strides[&f]),
                                None => qc,
                            },
                        }
                    })
                    .collect();
                insert_select(c, t, &exprs)?;
            }
        }
        Ok(())
    }

    /// The session covers the whole inflated activity: ANALYSIS_DETAILS's stop time and duration.
    fn stretch_session(c: &Connection, by: i64) -> Res<()> {
        let has = scalar(
            c,
            "SELECT count(*) FROM sqlite_master WHERE name = 'ANALYSIS_DETAILS'",
        )?
        .unwrap_or(0)
            > 0;
        if has && by > 0 {
            exec(c, &format!("UPDATE ANALYSIS_DETAILS SET stopTime = stopTime + {by}, duration = duration + {by}"))?;
        }
        Ok(())
    }
}
