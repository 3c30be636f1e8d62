"""groundwork.core.keepout: a process that keeps pandas and numpy out still has working pyarrow
(pyarrow.compute included) and DuckDB, and the command entry keeps them out of a nightly."""

from __future__ import annotations

import subprocess
import sys

import pytest

CHECK = r"""
import sys
from groundwork.core.keepout import keep_out
keep_out()
import duckdb, pyarrow as pa, pyarrow.compute as pc
table = pa.table({"id": pa.array(["b", "a"], pa.string()), "n": pa.array([2, 1], pa.int32())})
con = duckdb.connect()
con.register("t", table)
rows = con.execute("SELECT id FROM t ORDER BY id").fetchall()
back = con.sql("SELECT id, n, TIMESTAMP '2026-01-02 03:04:05' AS at FROM t ORDER BY n").to_arrow_table()
refused = []
for name in ("pandas", "numpy"):
    try:
        __import__(name)
    except ModuleNotFoundError:
        refused.append(name)
print(rows, pc.min(table.column("n")).as_py(), back.to_pylist()[0]["at"].isoformat(), refused,
      "pandas" in sys.modules, "numpy" in sys.modules)
"""


def test_pyarrow_and_duckdb_work_without_pandas_and_numpy_and_both_are_refused():
    pytest.importorskip("pandas")  # only meaningful where pandas (and so numpy) is installed
    out = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout == "[('a',), ('b',)] 1 2026-01-02T03:04:05 ['pandas', 'numpy'] False False\n"


def test_nothing_is_refused_once_numpy_is_imported():
    pytest.importorskip("numpy")
    code = ("import numpy, sys\nfrom groundwork.core.keepout import keep_out\nkeep_out()\n"
            "import pandas\nprint('pandas' in sys.modules)")
    pytest.importorskip("pandas")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout == "True\n"
