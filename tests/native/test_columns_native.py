"""The C fast path for the Arrow columns of parsed rows (ingest/_columns_native.c) against pyarrow.

The oracle is pyarrow.array over the same values with the column's type (what tables.to_arrow
does with the C path off): every column the C path builds is the same array (values, nulls,
types); a column it declines is converted by pyarrow.array, so to_arrow gives the same table or
raises the same error. It must also really be taken for the rows ingest makes.

Skipped when the extension is not built, unless GROUNDWORK_REQUIRE_NATIVE=1 (CI sets it).
"""

from __future__ import annotations

import datetime as dt
import math

import pyarrow as pa
import pytest

from groundwork.ingest import tables as T
from groundwork.ingest.parse import ROW_FIELDS, parse_run
from groundwork.ingest.scan import list_and_read
from groundwork.ingest.tables import RUN_TABLES, RowSet

from ingest_support import CORPUS_RUNS, EXAMPLE_RUNS, synthetic_runs
from native_support import built

native = built("groundwork.ingest._columns_native")


def both(table: str, rows: list[tuple], fields: tuple[str, ...]) -> tuple[pa.Table, pa.Table]:
    """to_arrow's table with the C path, and with it off (pyarrow.array for every column)."""
    fast = T.to_arrow(table, rows, fields)
    saved, T._columns_native = T._columns_native, None
    try:
        slow = T.to_arrow(table, rows, fields)
    finally:
        T._columns_native = saved
    return fast, slow


def test_loaded():
    assert T._columns_native is native


@pytest.mark.parametrize("kind, typ, values", [
    ("s", pa.string(), ["abc", "", None, "é", "日本語", "\U0001F600", "x" * 10_000, None]),
    ("s", pa.string(), [None, None, None]),
    ("s", pa.string(), [""] * 9),
    ("i", pa.int32(), [0, 1, -1, 2**31 - 1, -(2**31), None, 7]),
    ("l", pa.int64(), [0, 2**63 - 1, -(2**63), None, 12345678901234]),
    ("l", pa.timestamp("us"), [0, 1_700_000_000_123_456, None, -1]),
    ("b", pa.bool_(), [True, False, None, True, True, False, False, True, True, None]),
    ("d", pa.float64(), [0.0, -0.0, 1.5, None, math.inf, -math.inf, 1e308]),
])
def test_column_is_what_pyarrow_builds(kind, typ, values):
    nulls, validity, buf, data = native.column([(v,) for v in values], 0, kind)
    buffers = [None if validity is None else pa.py_buffer(validity), pa.py_buffer(buf)]
    buffers += [] if data is None else [pa.py_buffer(data)]
    got = pa.Array.from_buffers(typ, len(values), buffers, null_count=nulls)
    got.validate(full=True)
    assert got.equals(pa.array(values, type=typ))
    assert got.to_pylist() == [v if typ != pa.timestamp("us") or v is None
                               else dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=v) for v in values]
    assert nulls == values.count(None)
    assert (validity is None) == (nulls == 0)


def test_nan_stays_a_value():
    nulls, validity, buf, _ = native.column([(math.nan,), (None,)], 0, "d")
    got = pa.Array.from_buffers(pa.float64(), 2, [pa.py_buffer(validity), pa.py_buffer(buf)], null_count=nulls)
    assert nulls == 1 and math.isnan(got[0].as_py()) and got[1].as_py() is None


@pytest.mark.parametrize("kind, values", [
    ("s", ["a", b"bytes"]), ("s", ["a", 1]), ("s", ["\ud800"]),
    ("i", [1, 2**31]), ("i", [1, -(2**31) - 1]), ("i", [True]), ("i", [1.0]), ("i", ["1"]),
    ("l", [2**63]), ("l", [False]),
    ("b", [1]), ("b", [0]), ("b", ["true"]),
    ("d", [1]), ("d", [True]),
])
def test_declines_what_it_does_not_build_as_pyarrow_would(kind, values):
    assert native.column([(v,) for v in values], 0, kind) is None


def test_declines_rows_that_are_not_tuples_holding_the_column():
    assert native.column([("a",), ["b"]], 0, "s") is None
    assert native.column([("a",), ()], 0, "s") is None
    assert native.column([("a", "b")], 2, "s") is None
    assert native.column([("a",)], -1, "s") is None
    assert native.column([("a",)], 0, "?") is None


def test_declined_column_converted_by_pyarrow():
    fields = ROW_FIELDS["run_files"]
    row = dict(zip(fields, ("inv", "spans.jsonl", 10, 2**40, "ab" * 32)))
    fast, slow = both("run_files", [tuple(row[f] for f in fields), tuple({**row, "size": 3.0}[f] for f in fields)],
                      fields)
    assert fast.equals(slow)
    assert fast.column("size").to_pylist() == [10, 3]  # pyarrow's conversion of the float
    with pytest.raises(pa.ArrowInvalid):
        T.to_arrow("run_files", [tuple({**row, "size": "ten"}[f] for f in fields)], fields)


@pytest.mark.parametrize("runs_dir", [CORPUS_RUNS, EXAMPLE_RUNS])
def test_tables_of_parsed_runs_unchanged_and_built_in_c(runs_dir, tmp_path):
    rows = RowSet()
    for folder in (runs_dir, synthetic_runs(tmp_path, 40, 3)):
        for name in sorted(p.name for p in folder.iterdir() if p.is_dir()):
            rows.extend(parse_run(list_and_read(str(folder), str(folder), name), 1)[0])
    kinds = {t: [T.NATIVE_KINDS[code] for _, code in T.COLUMN_TYPES[t]] for t in RUN_TABLES}
    tables = 0
    for table in RUN_TABLES:
        if rows.rows[table]:
            fast, slow = both(table, rows.rows[table], rows.fields[table])
            fast.validate(full=True)
            assert fast.equals(slow), table
            tables += 1
            # every column of the rows ingest makes is built in C, none left to pyarrow.array
            for name, kind in zip(T.COLUMN_NAMES[table], kinds[table]):
                assert native.column(rows.rows[table], rows.fields[table].index(name), kind) is not None, (table, name)
    assert tables >= 6
