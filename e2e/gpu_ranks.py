"""Writes N rank exports for the timeline's scale test: copies of the page's sample (one process,
four GPU streams), each made rank k of N on its own host `node<k>` by its hostname and the
launcher's environment (events untouched), so that N ranks x 4 streams reach the page.

usage: python3 gpu_ranks.py SAMPLE OUT_DIR N
"""
import shutil
import sqlite3
import sys
from pathlib import Path

src, out, n = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
out.mkdir(parents=True, exist_ok=True)
for k in range(n):
    dst = out / f"rank{k:03d}.sqlite"
    shutil.copyfile(src, dst)
    c = sqlite3.connect(dst)
    c.execute("UPDATE TARGET_INFO_SYSTEM_ENV SET value = ? WHERE name = 'Hostname'", (f"node{k:03d}",))
    env = c.execute("SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'DeviceEnvironment'").fetchone()[0]
    env += f";OMPI_COMM_WORLD_RANK={k};OMPI_COMM_WORLD_SIZE={n}"
    c.execute("UPDATE TARGET_INFO_SYSTEM_ENV SET value = ? WHERE name = 'DeviceEnvironment'", (env,))
    c.commit()
    c.close()
