"""Run ad-hoc SQL on the warehouse and stream its result; DuckDB errors become one line with a position.

A script may hold several statements; they run in order and the result of the last one is
returned, so `CREATE TEMP VIEW ...; SELECT ...` works.

``open_session`` opens the warehouse read-only and confined to it: DuckDB's own switches
(enable_external_access = false, then lock_configuration = true) refuse every file other than
the warehouse — read_text / read_csv / read_parquet / glob, COPY ... TO, EXPORT DATABASE, ATTACH,
INSTALL / LOAD — and every SET / PRAGMA that would change a setting. ``allow_files=True`` (the
commands' --allow-files) opens it read-only without those switches.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator

from groundwork.core.engine import duckdb
from groundwork.core.errors import GroundworkError
from groundwork.core.warehouse import connect

BATCH_ROWS = 2048

_LINE = re.compile(r"^LINE (\d+): (.*)$")


ALLOW_FILES_FLAG = "--allow-files"
ALLOW_FILES_HELP = ("Let the SQL read and write files other than the warehouse (read_csv, COPY ... TO, ATTACH, ...), "
                    "load extensions and change settings; without it all of that is refused.")
CONFINED = "SQL here is confined to the warehouse (no other files, extensions or settings)"


class SqlError(GroundworkError):
    """DuckDB rejected the SQL; the message is DuckDB's, on one line, with the position. When it
    was refused because the session is confined (``refused``), the message says so and names the
    flag that lifts it; ``text`` is DuckDB's part alone (for a caller without that flag)."""

    def __init__(self, text: str, refused: bool = False):
        super().__init__(f"{text}: {CONFINED}; {ALLOW_FILES_FLAG} lifts that" if refused else text)
        self.text, self.refused = text, refused


def _no_progress_bar(con: duckdb.DuckDBPyConnection) -> None:
    """DuckDB would draw its progress bar into the result stream (on by default)."""
    if con.execute("SELECT current_setting('enable_progress_bar')").fetchall()[0][0]:
        con.execute("SET enable_progress_bar = false")


def confine(con: duckdb.DuckDBPyConnection) -> None:
    """Confine ``con`` to its database: no file, network or extension access, no setting changed
    from now on (DuckDB refuses to undo either once set)."""
    _no_progress_bar(con)
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")


def open_session(path, *, allow_files: bool = False) -> duckdb.DuckDBPyConnection:
    """The warehouse ``path`` opened read-only for ad-hoc SQL, ``confine``d unless ``allow_files``."""
    con = connect(path, read_only=True)
    try:
        if not allow_files:
            confine(con)
    except BaseException:
        con.close()
        raise
    return con


def _refused(exc: Exception) -> bool:
    """Whether DuckDB refused ``exc``'s statement because the connection is confined."""
    return isinstance(exc, duckdb.PermissionException) or (
        isinstance(exc, duckdb.InvalidInputException) and "the configuration has been locked" in str(exc))


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


def _error(sql: str, exc: Exception, offset: int = 0) -> SqlError:
    return SqlError(one_line(sql, exc, offset), refused=_refused(exc))


def statements(con: duckdb.DuckDBPyConnection, sql: str) -> list[tuple[int, duckdb.Statement]]:
    """Split ``sql`` into statements, each with its offset in ``sql``; raise SqlError on a syntax
    error, or on text that is not UTF-8 (bytes an argument or stdin could not decode)."""
    try:
        sql.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise SqlError(f"the SQL is not valid UTF-8 text (character {exc.start + 1})") from None
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


def _batches(con: duckdb.DuckDBPyConnection, sql: str, offset: int, fetch_rows: int) -> Iterator[list[tuple]]:
    while True:
        try:
            rows = con.fetchmany(fetch_rows)
        except duckdb.Error as exc:  # errors can surface while streaming (e.g. a bad cast)
            raise _error(sql, exc, offset) from None
        if not rows:
            return
        yield rows


# Statements a confined session refuses before DuckDB sees them. DuckDB's switches refuse other
# files, but not its own: the warehouse file (ATTACH it again, writable) and its spill folder
# <warehouse>.tmp/ (COPY ... TO a file there, read back). A confined session needs none of these.
REFUSED_WHEN_CONFINED = {
    duckdb.StatementType.ATTACH: "ATTACH", duckdb.StatementType.DETACH: "DETACH",
    duckdb.StatementType.COPY: "COPY", duckdb.StatementType.COPY_DATABASE: "COPY FROM DATABASE",
    duckdb.StatementType.EXPORT: "EXPORT DATABASE", duckdb.StatementType.LOAD: "INSTALL / LOAD",
    # a prepared statement's own type is PREPARE, whatever it holds (a COPY into the spill folder)
    duckdb.StatementType.PREPARE: "PREPARE", duckdb.StatementType.EXECUTE: "EXECUTE",
}


def is_confined(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether ``con`` was ``confine``d (its external access is off)."""
    return not con.execute("SELECT current_setting('enable_external_access')").fetchall()[0][0]


# Refused statements by their first word (a statement type's name, and INSTALL, a LOAD
# statement): an EXPLAIN whose inner statement cannot be read is refused when such a word is
# anywhere in it.
_REFUSED_WORDS = {**{t.name: t for t in REFUSED_WHEN_CONFINED if "_" not in t.name},
                  "INSTALL": duckdb.StatementType.LOAD}
_REFUSED_WORD = re.compile(rf"\b({'|'.join(_REFUSED_WORDS)})\b", re.IGNORECASE)

# EXPLAIN's own words before the statement it explains: `EXPLAIN [ANALYZE] ...` or
# `EXPLAIN (options) ...`, with any whitespace and comments between them.
_GAP = r"(?:\s|--[^\n]*(?:\n|$)|/\*.*?\*/)*"
_EXPLAIN = re.compile(rf"^{_GAP}EXPLAIN{_GAP}(?:ANALY[SZ]E\b|\([^)]*\))?", re.IGNORECASE | re.DOTALL)


def _explained(con: duckdb.DuckDBPyConnection, stmt: duckdb.Statement) -> duckdb.StatementType | None:
    """The type of the statement an EXPLAIN statement explains (EXPLAIN ANALYZE runs it: a
    COPY ... TO inside it writes its file). When it cannot be told, the type a refused keyword in
    the text names (so an EXPLAIN whose words this cannot read is refused rather than run), else None."""
    m = _EXPLAIN.match(stmt.query)
    if m:
        try:
            inner = con.extract_statements(stmt.query[m.end():])
        except duckdb.Error:
            inner = []
        if len(inner) == 1:
            return inner[0].type
    word = _REFUSED_WORD.search(stmt.query)
    return _REFUSED_WORDS[word.group(1).upper()] if word else None


def _refuse_confined(con: duckdb.DuckDBPyConnection, sql: str, found: list[tuple[int, duckdb.Statement]]) -> None:
    """SqlError (refused) for the first statement of ``found`` a confined session refuses (also
    inside an EXPLAIN)."""
    for offset, stmt in found:
        kind = _explained(con, stmt) if stmt.type == duckdb.StatementType.EXPLAIN else stmt.type
        what = REFUSED_WHEN_CONFINED.get(kind)
        if what is not None:
            line = sql.count("\n", 0, offset) + 1
            raise SqlError(f"{what} is not allowed (at line {line})", refused=True)


def run(con: duckdb.DuckDBPyConnection, sql: str, params: dict | None = None, *,
        fetch_rows: int = BATCH_ROWS) -> Result:
    """Execute every statement of ``sql``; return the streamed result of the last one.

    ``params`` are bound by name (``$name``) to the statements that use them, never pasted; the
    result's rows come ``fetch_rows`` at a time. On a confined connection, ATTACH, DETACH, COPY,
    EXPORT, INSTALL / LOAD, PREPARE and EXECUTE are refused before anything runs
    (REFUSED_WHEN_CONFINED).
    """
    found = statements(con, sql)
    _no_progress_bar(con)
    if is_confined(con):
        _refuse_confined(con, sql, found)
    for i, (offset, stmt) in enumerate(found):
        used = {k: v for k, v in (params or {}).items() if k in stmt.named_parameters}
        try:
            con.execute(stmt.query, used or None)
        except duckdb.Error as exc:
            raise _error(sql, exc, offset) from None
        if i < len(found) - 1:
            continue
        description = con.description or []
        return Result(
            columns=[d[0] for d in description],
            types=[str(d[1]) for d in description],
            batches=_batches(con, sql, offset, fetch_rows) if description else iter(()),
        )
    raise AssertionError("unreachable")
