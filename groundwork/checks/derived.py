"""The derived relations the rule files read (docs/schema.md: lint_runs ... lint_citable), and
the workspace a lint evaluates its rules in.

Each derived relation is one file of sql/schema/30_derived/, ``NN_<name>.sql``: one
``CREATE OR REPLACE VIEW <name> AS <select>`` followed by its documentation (COMMENT ON). The
warehouse applies them as plain views (so any rule file also runs by hand against it); the file
name order is the derivation order (each file comes after what it reads; independent chains are
interleaved, since two workers build them). ``RELATIONS`` is that order and each view's SELECT,
read from the files: nothing else lists them.

During a lint, ``materialised`` re-creates each relation from its SELECT under the same name in
an in-memory database attached for the pass, restricted to the runs being linted: as a table
(most of them, so the walk runs once per lint, not once per rule) or as a view (lint_spans,
lint_grounded: cheap, and their readers need different columns). The rule queries run on
cursors whose search_path puts that database first, so they read those relations. A warehouse
file can also keep them between lints (groundwork.checks.store). Rule files read only these
lint_* relations (GW3/GW4 also look children up in ``runs``) and join them on run_key.
"""

from __future__ import annotations

import itertools
import os
import re
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING


from groundwork.checks.rules import STRINGS_AND_COMMENTS, Rule, run
from groundwork.core.engine import arrow, duckdb, full
from groundwork.core.errors import GroundworkError
from groundwork.core.paths import DERIVED_DIR
from groundwork.core.warehouse import quote_identifier as _quote

if TYPE_CHECKING:
    import queue
    from concurrent.futures import Future, ThreadPoolExecutor


@dataclass(frozen=True)
class Relation:
    """One derived relation: its name and the SELECT that defines it, from its file."""

    name: str
    body: str
    path: Path


def relation_name(path: Path) -> str:
    """The relation a schema file defines: its stem without the ``NN_`` order prefix."""
    return path.stem.split("_", 1)[1]


# A statement ends at a ';' outside string literals, quoted identifiers and comments.
_LEXEME = re.compile(STRINGS_AND_COMMENTS.pattern + "|;", re.S)


def _statements(text: str) -> list[str]:
    """The statements of a SQL file, each with the comments before it, without its ';' (a
    lexical split: duckdb.extract_statements would start a DuckDB instance, ~25 ms of every
    process that lints); a part holding only comments is no statement."""
    parts, start = [], 0
    for match in _LEXEME.finditer(text):
        if match.group() == ";":
            parts.append(text[start:match.start()])
            start = match.end()
    parts.append(text[start:])
    return [part for part in parts if STRINGS_AND_COMMENTS.sub(" ", part).strip()]


def view_body(path: Path) -> str:
    """The SELECT of the one view a schema file defines (``20_source_check_items.sql``, a file of
    ``30_derived/``): its first statement must be ``CREATE OR REPLACE VIEW <name> AS`` on a line
    of its own, after the header comment, and every other statement documents it."""
    name = relation_name(path)
    statements = _statements(path.read_text(encoding="utf-8"))
    lines = statements[0].strip().split("\n") if statements else []
    while lines and lines[0].startswith("--"):
        lines.pop(0)
    head = f"CREATE OR REPLACE VIEW {name} AS"
    if not lines or lines[0] != head:
        raise GroundworkError(f"schema file {path.name}: its first statement must be {head} <select>")
    if any(not STRINGS_AND_COMMENTS.sub(" ", s).strip().startswith("COMMENT ON ") for s in statements[1:]):
        raise GroundworkError(f"schema file {path.name}: only COMMENT ON statements may follow the view")
    return "\n".join(lines[1:]).rstrip().rstrip(";").rstrip()


def load_relations(directory: Path = DERIVED_DIR) -> tuple[Relation, ...]:
    """The derived relations of ``directory``, in derivation (file name) order."""
    return tuple(Relation(relation_name(path), view_body(path), path) for path in sorted(directory.glob("*.sql")))


RELATIONS = load_relations()
NAMES = tuple(relation.name for relation in RELATIONS)
WORKERS = 2
# Derived as tables for a lint; the others (cheap, read with different columns) stay views.
MATERIALISE = frozenset(NAMES) - {"lint_spans", "lint_grounded"}
_NAME = re.compile(r"\b(" + "|".join(NAMES) + r")\b")
_workspaces = itertools.count(1)


def reads(sql: str) -> frozenset[str]:
    """The derived relations a statement names (so it can run once they are materialised)."""
    return frozenset(_NAME.findall(STRINGS_AND_COMMENTS.sub(" ", sql)))


class Workspace:
    """The derived relations of one lint, materialised in a private in-memory database, and a
    few worker cursors whose ``search_path`` puts those tables before the warehouse's views.

    ``submit_rule`` / ``submit_arrow`` queue a statement that a worker starts as soon as the
    derived relations it reads exist; DuckDB releases the GIL while it works, so the caller can
    render earlier results meanwhile and the two cores share the queries.
    """

    def __init__(self, pool: ThreadPoolExecutor, cursors: queue.SimpleQueue):
        self._pool = pool
        self._cursors = cursors
        self._ready: dict[str, Future] = {}
        self.schema = ""  # the qualified schema that holds the derived relations

    def wait(self) -> None:
        """Block until every derived relation exists (re-raising a failure)."""
        for future in self._ready.values():
            future.result()

    def _task(self, work):
        cur = self._cursors.get()
        try:
            return work(cur)
        finally:
            self._cursors.put(cur)

    def _submit(self, sql: str, work) -> Future:
        import threading
        from concurrent.futures import Future, InvalidStateError

        waits = [self._ready[name] for name in sorted(reads(sql)) if name in self._ready]
        outer: Future = Future()
        pending = [len(waits)]
        lock = threading.Lock()

        # A workspace left early (at an interrupt, say) cancels ``outer`` meanwhile: setting a
        # cancelled future's outcome, or asking a cancelled input for its exception, raised inside
        # these callbacks, which concurrent.futures logs with its traceback ("exception calling
        # callback for <Future ... state=cancelled>") under the command's one line.
        def settle(how, *value) -> None:
            try:
                how(*value)
            except InvalidStateError:   # cancelled meanwhile
                pass

        def finish(inner: Future) -> None:
            if inner.cancelled():
                outer.cancel()
            elif inner.exception() is not None:
                settle(outer.set_exception, inner.exception())
            else:
                settle(outer.set_result, inner.result())

        def start() -> None:
            try:
                self._pool.submit(self._task, work).add_done_callback(finish)
            except RuntimeError as exc:  # the pool is shutting down
                settle(outer.set_exception, exc)

        def input_done(dep: Future) -> None:
            with lock:
                if outer.done():
                    return
                if dep.cancelled() or dep.exception() is not None:
                    settle(outer.set_exception, RuntimeError("an input of this query was cancelled") if dep.cancelled()
                           else dep.exception())
                    return
                pending[0] -= 1
                go = pending[0] == 0
            if go:
                start()

        if not waits:
            start()
        for dep in waits:
            dep.add_done_callback(input_done)
        return outer

    def submit_rule(self, rule: Rule, context: dict | None = None) -> Future:
        """Future of ``run(rule)``: (column names, rows)."""
        return self._submit(rule.body, lambda cur: run(cur, rule, context))

    def submit_arrow(self, sql: str, params: dict | None = None) -> Future:
        """Future of the statement's result as an Arrow table."""
        return self._submit(sql, lambda cur: cur.sql(sql, params=params).to_arrow_table())


def _open_cursors(con: duckdb.DuckDBPyConnection, workers: int, search_path: str) -> list:
    cursors = []
    try:
        for _ in range(workers):
            cur = con.cursor()
            cursors.append(cur)
            cur.execute("SET search_path = '" + search_path.replace("'", "''") + "'")
    except BaseException:
        for cur in cursors:
            cur.close()
        raise
    return cursors


@contextmanager
def open_workspace(con: duckdb.DuckDBPyConnection, workers: int, search_path: str, schema: str = ""):
    """A ``Workspace`` of ``workers`` cursors with ``search_path``; its pool is shut down and its
    cursors closed when the block ends."""
    # Imported here: the drop-in lint (groundwork.checks.onerun) reads RELATIONS but starts no
    # worker, and concurrent.futures (with logging) is ~4 ms of its process.
    import queue
    from concurrent.futures import ThreadPoolExecutor

    full()  # the workers' results come as Arrow tables (Workspace.submit_arrow: the relational API)
    opened = _open_cursors(con, workers, search_path)
    cursors: queue.SimpleQueue = queue.SimpleQueue()
    for cur in opened:
        cursors.put(cur)
    pool = ThreadPoolExecutor(workers, thread_name_prefix="lint")
    try:
        workspace = Workspace(pool, cursors)
        workspace.schema = schema
        yield workspace
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        for cur in opened:
            cur.close()


# How lint_store orders a table's rows when other than by run_key: lint_refs by kind first, so
# G0_refs reads the few malformed / not_list rows' row groups only (their value_json, ~11 MB at
# 100,000 runs, is never loaded by a full lint), and the refs (lint_grounded) stay in run_key order.
_STORE_ORDER = {"lint_refs": "kind, run_key"}
# A pass over some runs numbers only them: lint_runs reads the scope's rows of runs, not every
# run (its window function numbered the whole warehouse before the scope filter: 0.11 s of a
# watch batch of one run at 20,000 runs). run_key is only ever compared and ordered within a pass.
_RUNS_FROM = "\nFROM runs r\n"
_SCOPED_RUNS_FROM = "\nFROM (SELECT * FROM runs WHERE invocation_id IN (SELECT invocation_id FROM lint_scope)) AS r\n"


def derive(workspace: Workspace, target: str, scoped: bool,
           tables: frozenset[str] = MATERIALISE, by_run_key: bool = False) -> None:
    """Queue the CREATE of every derived relation under ``target`` (a qualified schema), in
    dependency order: a table for those in ``tables``, a view for the others; with
    ``by_run_key`` the tables' rows are written in run_key order (``_STORE_ORDER``)."""
    for relation in RELATIONS:
        name, body = relation.name, relation.body
        if scoped and name == "lint_runs":
            # Every other derived relation reads through lint_runs, so scoping it scopes them all.
            body = body.replace(_RUNS_FROM, _SCOPED_RUNS_FROM, 1)
            body = f"SELECT * FROM (\n{body}\n) AS v WHERE invocation_id IN (SELECT invocation_id FROM lint_scope)"
        kind = "TABLE" if name in tables else "VIEW"
        rows = (f"SELECT * FROM (\n{body}\n) AS kept ORDER BY {_STORE_ORDER.get(name, 'run_key')}"
                if by_run_key and kind == "TABLE" else body)
        sql = f"CREATE {kind} {target}.{name} AS\n{rows}"
        workspace._ready[name] = workspace._submit(body, lambda cur, sql=sql: cur.execute(sql))


# The run tables the derived relations read besides runs, always joined with the scope's runs.
NARROWED = ("spans", "payload_refs", "evidence", "delegations")
# Up to this fraction of the warehouse's runs, a pass over some runs copies their rows.
_COPY_FRACTION = 0.1


def _narrow(con: duckdb.DuckDBPyConnection, alias: str, database: str) -> None:
    """For a pass over some runs: shadow each table of NARROWED, in the workspace's database
    (first on the search path), by the scope's rows only, selected by rowid: a copy when the
    scope is a few runs (``_COPY_FRACTION`` of them), else a view. The derived relations join
    these tables with the scope's runs anyway, but a join scans every row of the probed table
    (~70 ms for spans and for payload_refs at 100,000 runs, and lint_spans, a view, is read by
    several rules); rows picked by rowid (from a scan of invocation_id alone) are fetched alone,
    and runs new or reloaded since the last pass are together at the end of each table. Nothing
    writes these tables during a pass. A copy is read by every derived relation and rule without
    fetching again (through a view DuckDB scanned all of spans filtered by name for lint_root,
    ~0.1-0.3 s at 100,000 runs, rather than fetch by rowid); a copy is one statement per table
    (picking its rowids into a table first, then counting them, cost a watch batch ~12 ms more).
    A view's rowids are picked once, into a table."""
    present = {r[0] for r in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = $db AND schema_name = 'main'",
        {"db": database}).fetchall()}
    scope, runs = con.execute(f"SELECT (SELECT count(*) FROM {alias}.main.lint_scope), "
                              f"(SELECT count(*) FROM {_quote(database)}.main.runs)").fetchall()[0]
    kind = "TABLE" if scope <= runs * _COPY_FRACTION else "VIEW"
    for table in NARROWED:
        if table not in present:
            continue
        source = f"{_quote(database)}.main.{table}"
        rowids = f"SELECT rowid AS r FROM {source} WHERE invocation_id IN (SELECT invocation_id FROM {alias}.main.lint_scope)"
        if kind == "VIEW":  # read by several relations: its rowids are picked once
            con.execute(f"CREATE TABLE {alias}.main._rows_{table} AS {rowids}")
            rowids = f"SELECT r FROM {alias}.main._rows_{table}"
        con.execute(f"CREATE {kind} {alias}.main.{table} AS SELECT * FROM {source} WHERE rowid IN ({rowids})")


@contextmanager
def materialised(con: duckdb.DuckDBPyConnection, runs: list[str] | None = None, *,
                 scope_query: str | None = None, workers: int = WORKERS):
    """Materialise the derived views as tables for the duration of the context, restricted to
    ``runs`` (a list of invocation ids) or to the ids ``scope_query`` selects, when either is
    given; yield a ``Workspace`` whose workers read them.

    The tables live in an in-memory database attached for the lint (so every worker cursor sees
    them) and are built from the SELECT of each relation's file, in derivation order, two at a time where the
    order allows.
    """
    alias = f"lint_work_{os.getpid()}_{next(_workspaces)}"
    database = con.execute("SELECT current_database()").fetchall()[0][0]
    con.execute(f"ATTACH ':memory:' AS {alias} (READ_WRITE)")
    try:
        scoped = runs is not None or scope_query is not None
        if runs is not None:
            pa = arrow()  # here: a drop-in lint (groundwork.checks.onerun) never needs it

            con.register("lint_scope_arrow", pa.table({"invocation_id": pa.array(list(runs), pa.string())}))
            scope_query = "SELECT DISTINCT invocation_id FROM lint_scope_arrow"
        if scoped:
            try:
                con.execute(f"CREATE TABLE {alias}.main.lint_scope AS {scope_query}")
            finally:
                if runs is not None:
                    con.unregister("lint_scope_arrow")
            _narrow(con, alias, database)
        with open_workspace(con, workers, f"{alias}.main,{_quote(database)}.main", f"{alias}.main") as workspace:
            derive(workspace, workspace.schema, scoped)
            yield workspace
            workspace.wait()
    finally:
        con.execute(f"DETACH DATABASE IF EXISTS {alias}")
