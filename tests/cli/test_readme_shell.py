"""The README's `duckdb -readonly warehouse.duckdb.example` step works as written with the DuckDB
shell a user can install from the package registry (duckdb-cli, installed by the `test` extra):
groundwork writes its warehouses in a storage version that shell reads (warehouse.STORAGE_VERSION)."""

from __future__ import annotations

import csv
import io
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb

from groundwork.jobs.example import EXAMPLE_PATH

ROOT = Path(__file__).resolve().parents[2]


def readme_step() -> tuple[str, str]:
    """The shell line and the SQL after it in the README's "Investigating with SQL" section."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Investigating with SQL\n", 1)[1].split("\n## ", 1)[0]
    shell = re.search(r"```sh\n(.*?)```", section, re.S).group(1).strip()
    sql = re.search(r"```sql\n(.*?)```", section, re.S).group(1)
    return shell, sql


def test_the_readme_opens_the_example_with_the_registrys_duckdb_shell():
    shell, sql = readme_step()
    assert shell == "duckdb -readonly warehouse.duckdb.example"
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    cli = shutil.which("duckdb", path=env["PATH"])
    assert cli is not None and Path(cli).parent == Path(sys.executable).parent, "pip install -e '.[test]' installs duckdb-cli"
    version = subprocess.run([cli, "-version"], capture_output=True, text=True, timeout=60).stdout
    assert version.startswith("v1."), version  # an older DuckDB than the one groundwork writes with
    done = subprocess.run(["sh", "-c", shell], cwd=ROOT, env=env, input=".mode csv\n" + sql,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and not done.stderr, done.stderr
    shown = [tuple(row) for row in csv.reader(io.StringIO(done.stdout))]
    con = duckdb.connect(str(EXAMPLE_PATH), read_only=True)
    expected = con.execute(sql).fetchall()
    names = [d[0] for d in con.description]
    con.close()
    assert shown[0] == tuple(names)
    assert shown[1:] == [tuple(str(v) for v in row) for row in expected] and len(expected) > 3
