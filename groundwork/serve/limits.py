"""/sql's queries: investigate.session.run (what `groundwork sql` and `groundwork query` run) on a
confined cursor, with a time limit and a row limit per query.

DuckDB has no statement timeout: a timer thread interrupts the cursor when the time is up. The
row limit fetches ``max_rows + 1`` rows and says the result was cut."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from groundwork.core.engine import duckdb
from groundwork.investigate.session import SqlError, run

TIME_LIMIT = 10.0
ROW_LIMIT = 1000


@dataclass
class Table:
    columns: list[str]
    types: list[str]
    rows: list[tuple]
    truncated: bool
    seconds: float


def run_limited(con, sql: str, params: dict | None = None, *, seconds: float = TIME_LIMIT,
                max_rows: int = ROW_LIMIT) -> Table:
    """Run ``sql`` on ``con`` (bound ``params``); at most ``max_rows`` rows, at most ``seconds``
    seconds (SqlError saying so when it ran longer)."""
    fired = threading.Event()

    def stop():
        fired.set()
        con.interrupt()

    timer = threading.Timer(seconds, stop)
    started = time.perf_counter()
    timer.start()
    try:
        result = run(con, sql, params)
        rows: list[tuple] = []
        for batch in result.batches:
            rows.extend(batch)
            if len(rows) > max_rows:
                break
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
                 truncated=len(rows) > max_rows, seconds=time.perf_counter() - started)
