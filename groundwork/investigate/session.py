"""Run ad-hoc SQL on the warehouse and stream its result; DuckDB errors become one line with a position.

A script may hold several statements; they run in order and the result of the last one is
returned, so `SET ...; SELECT ...` and `CREATE TEMP VIEW ...; SELECT ...` work.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator

import duckdb

from groundwork.core.errors import GroundworkError

BATCH_ROWS = 2048

_LINE = re.compile(r"^LINE (\d+): (.*)$")


class SqlError(GroundworkError):
    """DuckDB rejected the SQL; the message is DuckDB's, on one line, with the position."""


@dataclass
class Result:
    """A streamed query result: column names, DuckDB type names and an iterator of row batches."""

    columns: list[str]
    types: list[str]
    batches: Iterator[list[tuple]]


def error_position(sql: str, message: str) -> tuple[int, int] | None:
    """Return the 1-based (line, column) DuckDB points at in ``message``, or None.

    DuckDB prints the offending line (shortened with ``...`` when long) and a caret below it.

    >>> error_position("SELECT x FROM t", 'Binder Error: no x\\n\\nLINE 1: SELECT x FROM t\\n               ^')
    (1, 8)
    """
    lines = message.split("\n")
    for i, line in enumerate(lines[:-1]):
        m = _LINE.match(line)
        caret_line = lines[i + 1]
        if not m or "^" not in caret_line:
            continue
        line_no, context = int(m.group(1)), m.group(2)
        caret = caret_line.index("^") - (len(line) - len(context))
        if not context.startswith("..."):
            return line_no, caret + 1
        core = context[3:]
        if core.endswith("..."):
            core = core[:-3]
        source = sql.split("\n")
        text = source[line_no - 1] if 0 < line_no <= len(source) else ""
        start = text.find(core)
        return (line_no, start + caret - 3 + 1) if start >= 0 else (line_no, None)
    return None


def one_line(sql: str, exc: Exception, offset: int = 0) -> str:
    """Return DuckDB's error message on one line, with its position in the whole script.

    ``offset`` is where the failing statement starts inside ``sql``.
    """
    message = str(exc)
    head = message.split("\n\nLINE ")[0]
    text = " ".join(part.strip() for part in head.split("\n") if part.strip())
    statement = sql[offset:]
    pos = error_position(statement, message)
    if pos is None:
        return text
    line, column = pos
    before = sql[:offset]
    if column is not None and line == 1:
        column += len(before) - (before.rfind("\n") + 1)
    line += before.count("\n")
    where = f"line {line}" if column is None else f"line {line}, column {column}"
    return f"{text} (at {where})"


def statements(con: duckdb.DuckDBPyConnection, sql: str) -> list[tuple[int, duckdb.Statement]]:
    """Split ``sql`` into statements, each with its offset in ``sql``; raise SqlError on a syntax error."""
    try:
        found = con.extract_statements(sql)
    except duckdb.Error as exc:
        raise SqlError(one_line(sql, exc)) from None
    out, cursor = [], 0
    for stmt in found:
        at = sql.find(stmt.query, cursor)
        at = cursor if at < 0 else at
        out.append((at, stmt))
        cursor = at + len(stmt.query)
    if not out:
        raise SqlError("no SQL statement given")
    return out


def _batches(con: duckdb.DuckDBPyConnection, sql: str, offset: int) -> Iterator[list[tuple]]:
    while True:
        try:
            rows = con.fetchmany(BATCH_ROWS)
        except duckdb.Error as exc:  # errors can surface while streaming (e.g. a bad cast)
            raise SqlError(one_line(sql, exc, offset)) from None
        if not rows:
            return
        yield rows


def run(con: duckdb.DuckDBPyConnection, sql: str, params: dict | None = None) -> Result:
    """Execute every statement of ``sql``; return the streamed result of the last one.

    ``params`` are bound by name (``$name``) to the statements that use them, never pasted.
    """
    found = statements(con, sql)
    con.execute("SET enable_progress_bar = false")  # DuckDB would draw it into the result stream
    for i, (offset, stmt) in enumerate(found):
        used = {k: v for k, v in (params or {}).items() if k in stmt.named_parameters}
        try:
            con.execute(stmt.query, used or None)
        except duckdb.Error as exc:
            raise SqlError(one_line(sql, exc, offset)) from None
        if i < len(found) - 1:
            continue
        description = con.description or []
        return Result(
            columns=[d[0] for d in description],
            types=[str(d[1]) for d in description],
            batches=_batches(con, sql, offset) if description else iter(()),
        )
    raise AssertionError("unreachable")
