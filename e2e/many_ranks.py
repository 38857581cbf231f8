"""Writes N rank exports for the page's scale test: copies of the real 4-rank MPI capture
(../shared/traces/generated/mpi4), each made rank k of N on its own host `node<k>` (hostname,
launcher environment and MPI_RANKS rewritten; events untouched).

usage: python3 many_ranks.py MPI4_DIR OUT_DIR N
"""
import shutil
import sqlite3
import sys
from pathlib import Path

src, out, n = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
out.mkdir(parents=True, exist_ok=True)
for k in range(n):
    base = k % 4
    dst = out / f"rank{k:03d}.sqlite"
    shutil.copyfile(src / f"rank{base}.sqlite", dst)
    c = sqlite3.connect(dst)
    c.execute("UPDATE TARGET_INFO_SYSTEM_ENV SET value = ? WHERE name = 'Hostname'", (f"node{k:03d}",))
    env = c.execute("SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'DeviceEnvironment'").fetchone()[0]
    pairs = [p.split("=", 1) for p in env.split(";") if "=" in p]
    fixed = {"OMPI_COMM_WORLD_RANK": str(k), "PMIX_RANK": str(k), "OMPI_COMM_WORLD_SIZE": str(n)}
    env = ";".join(f"{a}={fixed.get(a, b)}" for a, b in pairs)
    c.execute("UPDATE TARGET_INFO_SYSTEM_ENV SET value = ? WHERE name = 'DeviceEnvironment'", (env,))
    c.execute("UPDATE MPI_RANKS SET rank = ?", (k,))
    c.commit()
    c.close()
