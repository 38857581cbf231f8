#!/usr/bin/env bash
# Fuzzes the whole conversion (fuzz/fuzz_targets/convert.rs: bytes → Export::from_bytes →
# pipeline with the Paraver writer → trace checker) for a bounded time, then prints libFuzzer's
# final statistics. Findings (crashing inputs) land in fuzz/artifacts/convert/.
#
#   scripts/fuzz.sh [SECONDS]        # default 300
#
# Needs the nightly toolchain and cargo-fuzz (installed here when missing) and the sqlite3 CLI
# (for the small seeds). Seeds, rebuilt each run into fuzz/corpus/convert/ (git-ignored, kept
# between runs so the corpus grows): the real export in tests/data, and trimmed copies of it
# (only the tables the converter reads, few rows, small pages) that mutate much faster.
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-300}

rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
command -v sqlite3 >/dev/null || { apt-get update -qq && apt-get install -y -qq sqlite3 >/dev/null; }

CORPUS=fuzz/corpus/convert
mkdir -p "$CORPUS"
cp tests/data/testcuda_report1.sqlite "$CORPUS/seed-testcuda.sqlite"

# Trimmed seeds: drop what the converter never reads, keep N rows per table, 512-byte pages.
trim() { # N OUT
  local out="$CORPUS/$2"
  rm -f "$out"
  cp tests/data/testcuda_report1.sqlite "$out"
  chmod u+w "$out"
  sqlite3 "$out" "
    DROP TABLE SAMPLING_CALLCHAINS; DROP TABLE COMPOSITE_EVENTS; DROP TABLE OSRT_CALLCHAINS;
    DROP TABLE DIAGNOSTIC_EVENT; DROP TABLE PROFILER_OVERHEAD; DROP TABLE TARGET_INFO_SYSTEM_ENV;
    DELETE FROM OSRT_API WHERE rowid > $1; DELETE FROM SCHED_EVENTS WHERE rowid > $1;
    DELETE FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE rowid > $1;
    DELETE FROM ThreadNames WHERE rowid > $1; DELETE FROM PROCESSES WHERE rowid > $1;
    PRAGMA page_size = 512; VACUUM;"
}
trim 20 seed-trim20.sqlite
trim 3 seed-trim3.sqlite
# With nested NVTX push/pop ranges written in end order (the sample has none): the keyed reader.
trim 20 seed-nvtx.sqlite
sqlite3 "$CORPUS/seed-nvtx.sqlite" "
  CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
    text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER, domainId INTEGER);
  WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 29),
    base(t) AS (SELECT min(start) FROM OSRT_API), tid(g) AS (SELECT globalTid FROM OSRT_API LIMIT 1)
  INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId)
  SELECT CASE WHEN i % 5 = 4 THEN t + (i / 5) * 50000 ELSE t + i * 10000 END,
         CASE WHEN i % 5 = 4 THEN t + (i / 5) * 50000 + 49000 ELSE t + i * 10000 + 5000 END,
         59, 'r' || (i % 3), g, 0
  FROM n, base, tid ORDER BY i;
  VACUUM;"
ls -l "$CORPUS" | sed -n '1,8p'

# --sanitizer none: the crate is safe Rust (SQLite's C is not instrumented anyway), so speed
# matters more; --debug-assertions makes integer overflows findings, as in debug test builds.
cargo +nightly fuzz run convert --sanitizer none --debug-assertions "$CORPUS" -- \
  -max_total_time="$SECS" -timeout=20 -rss_limit_mb=2048 -max_len=1048576 -print_final_stats=1
