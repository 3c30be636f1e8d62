"""/sql's queries: investigate.session.run (what `groundwork sql` and `groundwork query` run) on a
confined cursor, with a time limit, a row limit and a size limit per query.

DuckDB has no statement timeout: a timer thread interrupts the cursor when the time is up, and
the time is checked again after each batch fetched (a result already made is not interrupted,
and turning huge values into Python objects takes time). The row limit fetches ``max_rows + 1``
rows and says the result was cut; so does the size limit, after the row that takes the result's
values past ``max_bytes`` (rows are fetched a few at a time: ``SELECT repeat('x', 10000000)
FROM range(150)`` is 1.5 GB, which no page needs)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from groundwork.core.engine import duckdb
from groundwork.investigate.session import SqlError, run

TIME_LIMIT = 10.0
ROW_LIMIT = 1000
BYTE_LIMIT = 16 * 1024 * 1024   # characters of text (bytes of a BLOB) in a result's values
FETCH_ROWS = 16                 # rows fetched at a time


@dataclass
class Table:
    columns: list[str]
    types: list[str]
    rows: list[tuple]
    truncated: bool   # cut at the row limit or at the size limit
    seconds: float
    cut_by_size: bool = False


def _size(value) -> int:
    """What a value adds to a result's size: its length for text and BLOBs, else 8."""
    return len(value) if isinstance(value, (str, bytes, bytearray, memoryview)) else 8


def run_limited(con, sql: str, params: dict | None = None, *, seconds: float = TIME_LIMIT,
                max_rows: int = ROW_LIMIT, max_bytes: int = BYTE_LIMIT) -> Table:
    """Run ``sql`` on ``con`` (bound ``params``); at most ``max_rows`` rows and ``max_bytes`` of
    values (the row that goes past it is the last), at most ``seconds`` seconds (SqlError
    saying so when it ran longer)."""
    fired = threading.Event()

    def stop():
        fired.set()
        con.interrupt()

    timer = threading.Timer(seconds, stop)
    started = time.perf_counter()
    timer.start()
    try:
        result = run(con, sql, params, fetch_rows=FETCH_ROWS)
        rows: list[tuple] = []
        size, cut_by_size = 0, False
        for batch in result.batches:
            for row in batch:
                rows.append(row)
                size += sum(_size(v) for v in row)
                if size > max_bytes and len(rows) <= max_rows:
                    cut_by_size = True
                    break
            if cut_by_size or len(rows) > max_rows:
                break
            if time.perf_counter() - started > seconds:
                fired.set()
                raise SqlError("fetching took too long")
    except SqlError:
        try:   # a statement that failed inside the query's own BEGIN leaves the transaction aborted
            con.execute("ROLLBACK")
        except duckdb.Error:
            pass   # no transaction was open
        if fired.is_set():
            raise SqlError(f"the query was stopped after {seconds:g} s (the time limit of a query here)") from None
        raise
    finally:
        timer.cancel()
    return Table(columns=result.columns, types=result.types, rows=rows[:max_rows],
                 truncated=cut_by_size or len(rows) > max_rows, seconds=time.perf_counter() - started,
                 cut_by_size=cut_by_size)
