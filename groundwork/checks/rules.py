"""Rule files: parse, validate and run the SELECTs in sql/rules/.

A rule is one ``.sql`` file whose body is a single SELECT (or WITH … SELECT) returning **one row
per violation**. The file starts with a header of ``-- key: value`` lines (the header ends at the
first line that is not one); the rest of the file is the body, which must stay runnable by hand
against a warehouse (``groundwork sql < sql/rules/G1.sql``).

Header keys (an unknown key, a missing required key or a bad value is a ``RuleFileError``):

``code`` (required)
    The code the violation is reported under (``G0``, ``E1``, …, ``GW1``, ``S1``). The file stem
    is the code, or ``<code>_<check>`` when one code is split into several files
    (``G0_tree.sql``).
``title`` (required)
    One line saying what the rule checks.
``kind`` (required)
    ``rule`` — a workbench grounding rule; its rows are the workbench's violations.
    ``finding`` — a groundwork-only finding (GW…); never part of the workbench-compatible output.
    ``source`` — a source-check rule (S1/S2, run by ``groundwork verify``, not by lint).
``modes`` (required)
    ``all`` or a comma list of ``retrieval, input_only, none, delegation``: the modes whose runs
    the rule can report. The body itself restricts to those modes, so the file is the whole
    truth; the header documents it and a test checks that the rows agree.
``needs_succeeded`` (required)
    ``true`` (fires only for a succeeded outcome), ``false``, or ``partly`` (one clause does,
    e.g. G2(b)) — spec 6.4.
``order`` (required, may be empty)
    Comma list of result columns that order a run's rows within the rule (the workbench's order,
    spec 6.2). The runner sorts by ``invocation_id`` then these columns. Empty for a rule that
    reports at most one row per run.
``step`` (required for ``kind: rule``)
    The spec 6.2 step the rule belongs to (1–8). Step 8 rules are ordered within the step as in
    ``MODE_RULES``. Findings come after every workbench violation.

Every result column is available to the rule's message template as ``r.<column>``
(``groundwork/checks/templates/messages/<stem>.txt.j2``, ``Rule.template``). Parameters are written
``$name`` in the body and bound by the runner from the context it is given (never pasted into
the SQL); the runner passes exactly the names the body uses.

Example header::

    -- code: G1
    -- title: No chat span starts before the first retrieval span ends
    -- kind: rule
    -- step: 8
    -- modes: retrieval
    -- needs_succeeded: false
    -- order: parent_key, ord
"""

from __future__ import annotations

import hashlib
import itertools
import os
import queue
import re
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pyarrow as pa

from groundwork.checks.messages import TEMPLATES_DIR
from groundwork.core.errors import GroundworkError
from groundwork.core.paths import RULES_DIR
from groundwork.core.warehouse import memory_at_most, quote_identifier as _quote, transaction

MODES = ("retrieval", "input_only", "none", "delegation")
KINDS = ("rule", "finding", "source")
# Spec 6.2 step 8: the rules each mode applies, in order.
MODE_RULES = {
    "retrieval": ("G1", "G2", "G3", "G4"),
    "input_only": ("R1", "R2", "R3"),
    "none": ("R1", "R2", "R3", "N1"),
    "delegation": ("R1", "D1", "D2", "G4", "D3"),
}
# One order of all step-8 codes that contains every mode's list as a subsequence, so a run's
# step-8 violations can be ordered without looking at its mode (checked by a test).
STEP8_ORDER = ("G1", "G2", "G3", "R1", "R2", "R3", "N1", "D1", "D2", "G4", "D3")
FINDING_STEP = 9

REQUIRED = ("code", "title", "kind", "modes", "needs_succeeded", "order")
OPTIONAL = ("step",)
_HEADER_LINE = re.compile(r"^--\s*([a-z_]+)\s*:\s*(.*?)\s*$")
_CODE = re.compile(r"^[A-Z]{1,2}[0-9]{1,2}$")
_STEM = re.compile(r"^([A-Z]{1,2}[0-9]{1,2})(?:_([a-z][a-z0-9_]*))?$")
_IDENT = re.compile(r"^[a-z_][a-z0-9_]*$")
_PARAM = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
_STRINGS_AND_COMMENTS = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|--[^\n]*|/\*.*?\*/", re.S)


class RuleFileError(GroundworkError):
    """A rule file is malformed; the message names the file and the problem."""


@dataclass(frozen=True)
class Rule:
    """One parsed rule file."""

    code: str
    title: str
    kind: str
    modes: tuple[str, ...]
    needs_succeeded: str
    order: tuple[str, ...]
    step: int
    path: Path
    body: str
    params: tuple[str, ...]

    @property
    def stem(self) -> str:
        return self.path.stem

    @property
    def template(self) -> str:
        """Message template of the rule (every kind), relative to groundwork/checks/templates/."""
        return f"messages/{self.stem}.txt.j2"

    @property
    def rank(self) -> tuple[int, int]:
        """Position of the rule's violations in a report (spec 6.2): step, then step-8 order."""
        if self.kind == "rule" and self.step == 8:
            return (8, STEP8_ORDER.index(self.code))
        return (self.step, 0)

    def sorted_sql(self) -> str:
        """The body wrapped so that rows come out in report order within each run."""
        keys = ", ".join(("invocation_id",) + self.order)
        return f"SELECT * FROM (\n{self.body}\n) AS rule_rows ORDER BY {keys}"


def split_header(text: str) -> tuple[dict[str, str], str]:
    """Split a rule file into its ``-- key: value`` header and its body.

    >>> split_header("-- code: G1\\n-- title: t\\nSELECT 1\\n")
    ({'code': 'G1', 'title': 't'}, 'SELECT 1')
    """
    header: dict[str, str] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = _HEADER_LINE.match(lines[i])
        if not m:
            break
        key, value = m.groups()
        if key in header:
            raise ValueError(f"header key {key!r} given twice")
        header[key] = value
        i += 1
    return header, "\n".join(lines[i:]).strip().rstrip(";").rstrip()


def named_params(sql: str) -> tuple[str, ...]:
    """Names of the ``$name`` parameters a body uses (ignoring strings and comments), sorted.

    >>> named_params("SELECT $b, '$not' -- $nor\\nFROM t WHERE x = $a AND y = $b")
    ('a', 'b')
    """
    return tuple(sorted(set(_PARAM.findall(_STRINGS_AND_COMMENTS.sub(" ", sql)))))


def _comma_list(value: str) -> tuple[str, ...]:
    return tuple(item.strip() for item in value.split(",") if item.strip())


def parse_rule(path: Path, text: str | None = None) -> Rule:
    """Parse and validate one rule file; raise RuleFileError naming the file on any problem."""
    path = Path(path)
    text = path.read_text(encoding="utf-8") if text is None else text

    def bad(problem: str) -> RuleFileError:
        return RuleFileError(f"rule file {path.name}: {problem}")

    try:
        header, body = split_header(text)
    except ValueError as exc:
        raise bad(str(exc)) from None
    unknown = sorted(set(header) - set(REQUIRED) - set(OPTIONAL))
    if unknown:
        raise bad(f"unknown header key(s) {', '.join(unknown)} (allowed: {', '.join(REQUIRED + OPTIONAL)})")
    missing = [k for k in REQUIRED if k not in header or (not header[k] and k != "order")]
    if missing:
        raise bad(f"missing header key(s) {', '.join(missing)}")
    code = header["code"]
    if not _CODE.match(code):
        raise bad(f"code {code!r} is not one or two capital letters and a number")
    stem = _STEM.match(path.stem)
    if not stem or stem.group(1) != code:
        raise bad(f"file name must be {code}.sql or {code}_<check>.sql")
    kind = header["kind"]
    if kind not in KINDS:
        raise bad(f"kind {kind!r} is not one of {', '.join(KINDS)}")
    modes = _comma_list(header["modes"])
    if modes == ("all",):
        modes = MODES
    elif not modes or any(m not in MODES for m in modes):
        raise bad(f"modes {header['modes']!r} must be 'all' or a comma list of {', '.join(MODES)}")
    needs = header["needs_succeeded"]
    if needs not in ("true", "false", "partly"):
        raise bad(f"needs_succeeded {needs!r} must be true, false or partly")
    order = _comma_list(header["order"])
    if any(not _IDENT.match(col) for col in order):
        raise bad(f"order {header['order']!r} must be a comma list of result column names")
    if kind == "rule":
        if not re.fullmatch(r"[1-8]", header.get("step", "")):
            raise bad("a kind: rule file needs step: 1..8 (spec 6.2)")
        step = int(header["step"])
        if step == 8 and code not in STEP8_ORDER:
            raise bad(f"code {code} is not a step-8 rule of spec 6.2 ({', '.join(STEP8_ORDER)})")
    elif "step" in header:
        raise bad("only kind: rule files have a step")
    else:
        step = FINDING_STEP
    code_only = _STRINGS_AND_COMMENTS.sub(" ", body)
    if not re.match(r"(?is)^\s*(select|with)\b", code_only):
        raise bad("the body must be a single SELECT or WITH … SELECT statement")
    if ";" in code_only:
        raise bad("the body must be a single statement (no ';')")
    return Rule(code=code, title=header["title"], kind=kind, modes=modes, needs_succeeded=needs,
                order=order, step=step, path=path, body=body, params=named_params(body))


def load_rules(directory: Path = RULES_DIR, *, kinds: tuple[str, ...] = ("rule", "finding")) -> tuple[Rule, ...]:
    """Load every rule file of ``directory`` of the given kinds, in report order.

    The registry refuses two files that would report under the same code at the same place
    (same code, kind and step), and stems that differ only in case.
    """
    rules: list[Rule] = []
    seen_stems: dict[str, Path] = {}
    seen_slots: dict[tuple, Path] = {}
    for path in sorted(Path(directory).glob("*.sql")):
        rule = parse_rule(path)
        folded = path.stem.lower()
        if folded in seen_stems:
            raise RuleFileError(f"rule files {seen_stems[folded].name} and {path.name} have the same name")
        seen_stems[folded] = path
        slot = (rule.kind, rule.code, rule.step)
        if rule.kind != "source" and slot in seen_slots:
            raise RuleFileError(f"rule files {seen_slots[slot].name} and {path.name} both report "
                                f"{rule.code} at step {rule.step}")
        seen_slots[slot] = path
        if rule.kind in kinds:
            rules.append(rule)
    return tuple(sorted(rules, key=lambda r: (r.rank, r.code, r.stem)))


def select(rules: tuple[Rule, ...], codes: list[str] | None) -> tuple[Rule, ...]:
    """Keep the rules whose code is in ``codes`` (all when None); unknown codes are an error."""
    if not codes:
        return rules
    wanted = {c.strip().upper() for c in codes if c.strip()}
    known = {r.code for r in rules}
    unknown = sorted(wanted - known)
    if unknown:
        raise GroundworkError(f"unknown rule code(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    return tuple(r for r in rules if r.code in wanted)


def ruleset_hash(rules: tuple[Rule, ...], extra: tuple[Path, ...] = ()) -> str:
    """SHA-256 over the files of a rule set (stem and full text, in stem order), their message
    templates when they exist, and any ``extra`` files (e.g. the grounding.txt template)."""
    digest = hashlib.sha256()
    for rule in sorted(rules, key=lambda r: r.stem):
        digest.update(rule.stem.encode() + b"\0" + rule.path.read_bytes() + b"\0")
        template = TEMPLATES_DIR / rule.template
        if template.is_file():
            digest.update(template.read_bytes() + b"\0")
    for path in extra:
        digest.update(Path(path).read_bytes() + b"\0")
    return digest.hexdigest()


def bind(rule: Rule, context: dict | None) -> dict:
    """Exactly the parameters the rule uses, taken from ``context`` (a missing one is an error)."""
    context = context or {}
    missing = [p for p in rule.params if p not in context]
    if missing:
        raise RuleFileError(f"rule file {rule.path.name}: no value for parameter(s) ${', $'.join(missing)}")
    return {p: context[p] for p in rule.params}


def run(con: duckdb.DuckDBPyConnection, rule: Rule, context: dict | None = None):
    """Execute a rule; return (column names, rows as tuples) in report order within each run."""
    try:
        cur = con.execute(rule.sorted_sql(), bind(rule, context) or None)
    except duckdb.Error as exc:
        raise RuleFileError(f"rule file {rule.path.name} failed: {str(exc).splitlines()[0]}") from None
    return [d[0] for d in cur.description], cur.fetchall()


# ------------------------------------------------------------------------------ derived relations

# The derived views of spec 6.1 defined in sql/schema.sql (section "Grounding lint"), in an
# order where each comes after what it reads, with independent chains interleaved (two workers
# build them). ``materialised`` copies them into tables for the duration of a lint.
DERIVED = (
    "lint_runs", "lint_spans", "lint_refs", "lint_root", "lint_evidence", "lint_tree",
    "lint_delegations", "lint_grounded", "lint_cycles", "lint_judged", "lint_retrieved",
    "lint_counts", "lint_citable",
)
WORKERS = 2
MATERIALISE = frozenset(DERIVED) - {"lint_spans", "lint_grounded"}
_DERIVED_NAME = re.compile(r"\b(" + "|".join(DERIVED) + r")\b")
_VIEW_BODY = re.compile(r"(?is)^\s*CREATE\s+(?:OR\s+REPLACE\s+)?VIEW\s+\S+\s+AS\s+(.*?)[\s;]*$")
_workspaces = itertools.count(1)


def reads(sql: str) -> frozenset[str]:
    """The derived relations a statement names (so it can run once they are materialised)."""
    return frozenset(_DERIVED_NAME.findall(_STRINGS_AND_COMMENTS.sub(" ", sql)))


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
        waits = [self._ready[name] for name in sorted(reads(sql)) if name in self._ready]
        outer: Future = Future()
        pending = [len(waits)]
        lock = threading.Lock()

        def finish(inner: Future) -> None:
            if inner.cancelled():
                outer.cancel()
            elif inner.exception() is not None:
                outer.set_exception(inner.exception())
            else:
                outer.set_result(inner.result())

        def start() -> None:
            try:
                self._pool.submit(self._task, work).add_done_callback(finish)
            except RuntimeError as exc:  # the pool is shutting down
                outer.set_exception(exc)

        def input_done(dep: Future) -> None:
            with lock:
                if outer.done():
                    return
                if dep.cancelled() or dep.exception() is not None:
                    outer.set_exception(dep.exception() or RuntimeError("an input of this query was cancelled"))
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


def _derived_bodies(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """The SELECT of each derived view of the warehouse (sql/schema.sql, section Grounding lint)."""
    views = dict(con.execute(
        "SELECT view_name, sql FROM duckdb_views() WHERE database_name = current_database() AND schema_name = 'main'"
        " AND view_name IN (SELECT unnest($names))", {"names": list(DERIVED)}).fetchall())
    return {name: _VIEW_BODY.match(views[name]).group(1) for name in DERIVED}


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
def _workspace(con: duckdb.DuckDBPyConnection, workers: int, search_path: str, schema: str = ""):
    """A ``Workspace`` of ``workers`` cursors with ``search_path``; its pool is shut down and its
    cursors closed when the block ends."""
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


def _derive(workspace: "Workspace", target: str, bodies: dict[str, str], scoped: bool,
            tables: frozenset[str] = MATERIALISE, by_run_key: bool = False) -> None:
    """Queue the CREATE of every derived relation under ``target`` (a qualified schema), in
    dependency order: a table for those in ``tables``, a view for the others; with
    ``by_run_key`` the tables' rows are written in run_key order (``_STORE_ORDER``)."""
    for name in DERIVED:
        body = bodies[name]
        if scoped and name == "lint_runs":
            # Every other derived relation reads through lint_runs, so scoping it scopes them all.
            body = f"SELECT * FROM ({body}) AS v WHERE invocation_id IN (SELECT invocation_id FROM lint_scope)"
        kind = "TABLE" if name in tables else "VIEW"
        rows = (f"SELECT * FROM ({body}) AS kept ORDER BY {_STORE_ORDER.get(name, 'run_key')}"
                if by_run_key and kind == "TABLE" else body)
        sql = f"CREATE {kind} {target}.{name} AS {rows}"
        workspace._ready[name] = workspace._submit(body, lambda cur, sql=sql: cur.execute(sql))


@contextmanager
def materialised(con: duckdb.DuckDBPyConnection, runs: list[str] | None = None, *,
                 scope_query: str | None = None, workers: int = WORKERS):
    """Materialise the derived views as tables for the duration of the context, restricted to
    ``runs`` (a list of invocation ids) or to the ids ``scope_query`` selects, when either is
    given; yield a ``Workspace`` whose workers read them.

    The tables live in an in-memory database attached for the lint (so every worker cursor sees
    them) and are built from the views' own SQL, in dependency order, two at a time where the
    order allows.
    """
    alias = f"lint_work_{os.getpid()}_{next(_workspaces)}"
    database = con.execute("SELECT current_database()").fetchall()[0][0]
    bodies = _derived_bodies(con)
    con.execute(f"ATTACH ':memory:' AS {alias} (READ_WRITE)")
    try:
        scoped = runs is not None or scope_query is not None
        if runs is not None:
            con.register("lint_scope_arrow", pa.table({"invocation_id": pa.array(list(runs), pa.string())}))
            scope_query = "SELECT DISTINCT invocation_id FROM lint_scope_arrow"
        if scoped:
            try:
                con.execute(f"CREATE TABLE {alias}.main.lint_scope AS {scope_query}")
            finally:
                if runs is not None:
                    con.unregister("lint_scope_arrow")
        with _workspace(con, workers, f"{alias}.main,{_quote(database)}.main", f"{alias}.main") as workspace:
            _derive(workspace, workspace.schema, bodies, scoped)
            yield workspace
            workspace.wait()
    finally:
        con.execute(f"DETACH DATABASE IF EXISTS {alias}")


# --------------------------------------------------------------------- derived relations, kept

# A warehouse file keeps the derived relations between lints in its schema lint_store (tables of
# the same names as the views, plus the view lint_grounded reading one), so that
# a full lint, e.g. after a rule file changed, evaluates the rules without deriving again. They
# depend only on the runs' rows and on the derived views' SQL: the store records the digest of
# that SQL (a different digest rebuilds everything) and the runs.ingest_id each run was derived
# from (a run that is new, reloaded, removed or has no ingest_id is derived again, alone, and
# numbered (run_key) after the kept runs). Its tables are written in run_key order, which
# groups the runs of one grounding mode (lint_runs numbers them so): a rule that reads one
# mode's rows, joined with lint_judged on run_key, skips the other modes' row groups (DuckDB
# pushes the join's run_key range into the scan), e.g. R2 ~57 -> ~22 ms, D2 ~29 -> ~10 ms of
# CPU at 100,000 runs.
STORE = "lint_store"
STORE_FORMAT = "3"  # 2: tables written in run_key order; 3: lint_refs by kind, then run_key
# Up to this many changed runs are always derived again into the store, whatever their share.
REFRESH_FLOOR = 1000
# Kept as tables: those a lint materialises, and lint_spans (three rules and lint_cycles read it).
STORE_TABLES = MATERIALISE | {"lint_spans"}
_STATE_TABLE = f"{STORE}.derived_state"
_RUNS_TABLE = f"{STORE}.derived_runs"
_STALE_SQL = f"""
SELECT coalesce(r.invocation_id, s.invocation_id) AS invocation_id, r.invocation_id IS NOT NULL AS present
FROM runs r
FULL OUTER JOIN {_RUNS_TABLE} s USING (invocation_id)
WHERE r.invocation_id IS NULL OR s.invocation_id IS NULL OR NOT coalesce(r.ingest_id = s.ingest_id, false)
"""


def store_usable(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the connection's database is a writable file (an in-memory one dies with the
    process: keeping relations there would gain nothing)."""
    rows = con.execute("SELECT path, readonly FROM duckdb_databases() WHERE database_name = current_database()").fetchall()
    return bool(rows) and rows[0][0] is not None and not rows[0][1]


def derived_digest(bodies: dict[str, str]) -> str:
    """SHA-256 over the derived views' SQL and how the store keeps each (table or view)."""
    digest = hashlib.sha256(STORE_FORMAT.encode() + b"\0")
    for name in DERIVED:
        kind = "table" if name in STORE_TABLES else "view"
        digest.update(f"{name}\0{kind}\0{bodies[name]}\0".encode())
    return digest.hexdigest()


def _stored_digest(con: duckdb.DuckDBPyConnection) -> str | None:
    """The digest the kept relations were derived under (None when there is no complete store:
    never built, interrupted, or a relation of it dropped by hand)."""
    kept = con.execute(
        "SELECT count(*) FROM (SELECT table_name AS name FROM duckdb_tables() WHERE database_name = current_database()"
        " AND schema_name = $store UNION ALL SELECT view_name FROM duckdb_views() WHERE database_name = current_database()"
        " AND schema_name = $store) WHERE name IN (SELECT unnest($names))",
        {"store": STORE, "names": list(DERIVED) + ["derived_state", "derived_runs"]}).fetchall()[0][0]
    if kept != len(DERIVED) + 2:
        return None
    rows = con.execute(f"SELECT value FROM {_STATE_TABLE} WHERE key = 'digest'").fetchall()
    return rows[0][0] if rows else None


def _start_store(con: duckdb.DuckDBPyConnection, target: str) -> None:
    """An empty lint_store (its relations are derived by the pass, its digest written last: a
    pass interrupted half-way leaves a store without one, which the next lint rebuilds)."""
    with transaction(con):
        con.execute(f"DROP SCHEMA IF EXISTS {target} CASCADE")
        con.execute(f"CREATE SCHEMA {target}")
        con.execute(f"CREATE TABLE {target}.derived_state (key VARCHAR PRIMARY KEY, value VARCHAR)")
        con.execute(f"CREATE TABLE {target}.derived_runs AS SELECT invocation_id, ingest_id FROM runs")


def _comment(con: duckdb.DuckDBPyConnection, target: str, name: str, kind: str) -> None:
    con.execute(f"COMMENT ON {kind} {target}.{name} IS "
                f"'Rows of the view main.{name}, kept between lints (groundwork.checks.rules.stored).'")


def _finish_store(con: duckdb.DuckDBPyConnection, target: str, digest: str) -> None:
    with transaction(con):
        for name in DERIVED:
            _comment(con, target, name, "TABLE" if name in STORE_TABLES else "VIEW")
        con.execute(f"INSERT INTO {target}.derived_state VALUES ('digest', $digest)", {"digest": digest})


def _changed_runs(con: duckdb.DuckDBPyConnection) -> pa.Table:
    """Runs new, reloaded or without ingest_id since the store was brought up to date (present)
    and runs removed since (not present)."""
    return con.sql(_STALE_SQL).to_arrow_table()


def _mostly_changed(con: duckdb.DuckDBPyConnection, changed: pa.Table, share: float) -> bool:
    """Whether more than ``share`` of the runs changed (deriving so many again, then deleting
    and inserting their rows, costs about as much as building the store afresh)."""
    if changed.num_rows <= REFRESH_FLOOR:
        return False
    return changed.num_rows > share * con.execute("SELECT count(*) FROM runs").fetchall()[0][0]


def _refresh_store(con: duckdb.DuckDBPyConnection, database: str, workers: int, changed: pa.Table) -> int:
    """Derive again the runs that are new, reloaded or without ingest_id, and drop removed ones
    (``changed``), in one transaction; return how many runs changed."""
    if not changed.num_rows:
        return 0
    target = f"{_quote(database)}.{STORE}"
    present = [i for i, p in zip(changed.column("invocation_id").to_pylist(), changed.column("present").to_pylist()) if p]
    con.register("lint_store_changed", changed)
    try:
        with materialised(con, present, workers=workers) as workspace:
            workspace.wait()
            with transaction(con):
                # run_key is unique within one derivation: the runs derived now are numbered
                # after every kept one.
                offset = con.execute(f"SELECT coalesce(max(run_key), 0) FROM {target}.lint_runs").fetchall()[0][0]
                for name in DERIVED:
                    if name not in STORE_TABLES:  # a view: up to date by itself
                        continue
                    con.execute(f"DELETE FROM {target}.{name} WHERE invocation_id IN (SELECT invocation_id FROM lint_store_changed)")
                    if present:
                        con.execute(f"INSERT INTO {target}.{name} SELECT * REPLACE (run_key + $offset AS run_key) "
                                    f"FROM {workspace.schema}.{name}", {"offset": offset})
                con.execute(f"DELETE FROM {target}.derived_runs WHERE invocation_id IN (SELECT invocation_id FROM lint_store_changed)")
                con.execute(f"INSERT INTO {target}.derived_runs SELECT invocation_id, ingest_id FROM runs "
                            "WHERE invocation_id IN (SELECT invocation_id FROM lint_store_changed WHERE present)")
    finally:
        con.unregister("lint_store_changed")
    return changed.num_rows


def store_readable(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether a full lint may read lint_store: a writable warehouse file whose store is complete
    and was built with the derived views of its schema."""
    return store_usable(con) and _stored_digest(con) == derived_digest(_derived_bodies(con))


def store_runs_agree(con: duckdb.DuckDBPyConnection) -> int | None:
    """The number of runs when runs and lint_store agree on it, on how many have an ingest_id
    (all of them) and on the largest ingest_id; else None. A sign, not a proof, that no run
    changed since the store was brought up to date (an ingest gives the runs it loads a new,
    larger ingest_id): a lint that trusts it checks every run's ingest_id against the store's
    derived_runs while it reads the store."""
    row = con.execute(
        f"SELECT (SELECT count(*) FROM runs), (SELECT count(ingest_id) FROM runs), (SELECT max(ingest_id) FROM runs),"
        f" (SELECT count(*) FROM {_RUNS_TABLE}), (SELECT count(ingest_id) FROM {_RUNS_TABLE}),"
        f" (SELECT max(ingest_id) FROM {_RUNS_TABLE})").fetchall()[0]
    return row[0] if row[:3] == row[3:] and row[0] == row[1] else None


def store_changes(con: duckdb.DuckDBPyConnection) -> pa.Table | None:
    """The runs ``stored`` would derive again before a full lint reads lint_store, or None when
    the lint should derive for itself: no store (or one built with other derived views), an
    in-memory or read-only warehouse, or more than a tenth of the runs changed since the store
    was brought up to date (e.g. the archive was ingested again: ``keep_derived`` catches up
    after answering)."""
    if not store_readable(con):
        return None
    changed = _changed_runs(con)
    return None if _mostly_changed(con, changed, 0.1) else changed


KEEP_MEMORY = "256MiB"  # DuckDB's memory while keep_derived builds the store (lowered, never raised):
                       # unbounded, a 100k-run build peaks at ~550 MB RSS; at this cap ~380 MB, +0.03 s.


def keep_derived(con: duckdb.DuckDBPyConnection, *, workers: int = WORKERS) -> str:
    """Bring the warehouse's lint_store up to date: build it when there is none (or it was built
    with other derived views, or more than half the runs changed since), else derive again only
    the runs new, reloaded or removed since. Returns ``built``, ``refreshed``, ``fresh`` or
    ``unavailable`` (in-memory or read-only warehouse).

    A lint reads the store when it is there but never builds it: writing ~1.7M derived rows of
    100,000 runs costs more than the pass that writes them saves. The nightly job calls this at
    its end, ``groundwork lint --keep-derived`` once its output is printed.
    """
    if not store_usable(con):
        return "unavailable"
    with memory_at_most(con, KEEP_MEMORY):
        return _keep_derived(con, workers)


def _keep_derived(con: duckdb.DuckDBPyConnection, workers: int) -> str:
    database = con.execute("SELECT current_database()").fetchall()[0][0]
    bodies = _derived_bodies(con)
    digest = derived_digest(bodies)
    if _stored_digest(con) == digest:
        changed = _changed_runs(con)
        if not _mostly_changed(con, changed, 0.5):
            return "refreshed" if _refresh_store(con, database, workers, changed) else "fresh"
    target = f"{_quote(database)}.{STORE}"
    _start_store(con, target)
    with _workspace(con, workers, f"{target},{_quote(database)}.main") as workspace:
        _derive(workspace, target, bodies, scoped=False, tables=STORE_TABLES, by_run_key=True)
        workspace.wait()
    _finish_store(con, target, digest)
    return "built"


@contextmanager
def stored(con: duckdb.DuckDBPyConnection, changed: pa.Table | None, *, workers: int = WORKERS):
    """Derive the runs new, reloaded or removed since lint_store was last brought up to date
    (``changed``, from ``store_changes``; None: the caller checks that none did), then yield a
    ``Workspace`` whose workers read the store (every run of the warehouse). ``materialised``
    serves the other lints.
    """
    database = con.execute("SELECT current_database()").fetchall()[0][0]
    target = f"{_quote(database)}.{STORE}"
    if changed is not None:
        _refresh_store(con, database, workers, changed)
    with _workspace(con, workers, f"{target},{_quote(database)}.main", target) as workspace:
        yield workspace
