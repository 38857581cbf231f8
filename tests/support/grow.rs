//! Bigger real-schema exports for tests: an export with every kernel row repeated `copies` more
//! times, copy k shifted k·spacing ns later (same stream, correlation and names). Keeps the
//! export's own schema, so the reader sees a genuine nsys layout, only with more rows.

pub fn with_more_kernels(export: &[u8], copies: u32, spacing_ns: i64) -> Vec<u8> {
    let mut conn = rusqlite::Connection::open_in_memory().unwrap();
    conn.deserialize_read_exact(rusqlite::MAIN_DB, export, export.len(), false)
        .unwrap();
    let cols: Vec<String> = {
        let mut st = conn
            .prepare("SELECT name FROM pragma_table_info('CUPTI_ACTIVITY_KIND_KERNEL')")
            .unwrap();
        let rows = st.query_map([], |r| r.get::<_, String>(0)).unwrap();
        rows.map(Result::unwrap).collect()
    };
    let list = cols
        .iter()
        .map(|c| format!("\"{c}\""))
        .collect::<Vec<_>>()
        .join(", ");
    let shifted = cols
        .iter()
        .map(|c| match c.as_str() {
            "start" | "end" => format!("\"{c}\" + n.i * {spacing_ns}"),
            _ => format!("\"{c}\""),
        })
        .collect::<Vec<_>>()
        .join(", ");
    conn.execute_batch(&format!(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {copies})
         INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL ({list})
         SELECT {shifted} FROM CUPTI_ACTIVITY_KIND_KERNEL, n;"
    ))
    .unwrap();
    conn.serialize(rusqlite::MAIN_DB).unwrap().to_vec()
}
