"""groundwork.core.keepout: a process that keeps pandas out still has working pyarrow and DuckDB."""

from __future__ import annotations

import subprocess
import sys

import pytest

CHECK = r"""
import sys
from groundwork.core.keepout import keep_pandas_out
keep_pandas_out()
import duckdb, pyarrow as pa
table = pa.table({"id": pa.array(["a", "b"], pa.string())})
con = duckdb.connect()
con.register("t", table)
rows = con.execute("SELECT id FROM t ORDER BY id").fetchall()
try:
    import pandas  # noqa: F401
    refused = False
except ModuleNotFoundError:
    refused = True
print(rows, refused, "pandas" in sys.modules)
"""


def test_pyarrow_and_duckdb_work_without_pandas_and_pandas_is_refused():
    pytest.importorskip("pandas")  # only meaningful where pandas is installed
    out = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout == "[('a',), ('b',)] True False\n"

