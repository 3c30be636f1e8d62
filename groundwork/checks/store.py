"""The lint store: the derived relations (groundwork.checks.derived) kept in a warehouse file
between lints, in its schema ``lint_store``.

``keep_derived`` builds or refreshes it (at the end of the nightly job, or after
``groundwork lint --keep-derived`` has printed); ``store_changes`` / ``stored`` let a full lint
read it, deriving again only the runs new, reloaded, removed or without ingest_id since.
"""

from __future__ import annotations

import hashlib
from contextlib import contextmanager
from typing import TYPE_CHECKING

from groundwork.checks import current, derived
from groundwork.checks.derived import MATERIALISE, NAMES, WORKERS, derive, materialised, open_workspace
from groundwork.core.engine import duckdb, full
from groundwork.core.warehouse import memory_at_most, quote_identifier as _quote, transaction

if TYPE_CHECKING:   # annotations only: the tables come from DuckDB (to_arrow_table)
    import pyarrow as pa

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


def derived_digest() -> str:
    """SHA-256 over the derived relations' SQL (their files, in derivation order) and how the
    store keeps each (table or view)."""
    digest = hashlib.sha256(STORE_FORMAT.encode() + b"\0")
    for relation in derived.RELATIONS:
        kind = "table" if relation.name in STORE_TABLES else "view"
        digest.update(f"{relation.name}\0{kind}\0{relation.body}\0".encode())
    return digest.hexdigest()


def _stored_digest(con: duckdb.DuckDBPyConnection) -> str | None:
    """The digest the kept relations were derived under (None when there is no complete store:
    never built, interrupted, or a relation of it dropped by hand)."""
    kept = con.execute(
        "SELECT count(*) FROM (SELECT table_name AS name FROM duckdb_tables() WHERE database_name = current_database()"
        " AND schema_name = $store UNION ALL SELECT view_name FROM duckdb_views() WHERE database_name = current_database()"
        " AND schema_name = $store) WHERE name IN (SELECT unnest($names))",
        {"store": STORE, "names": list(NAMES) + ["derived_state", "derived_runs"]}).fetchall()[0][0]
    if kept != len(NAMES) + 2:
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
                f"'Rows of the view main.{name}, kept between lints (groundwork.checks.store.stored).'")


def _finish_store(con: duckdb.DuckDBPyConnection, target: str, digest: str, read_after: int | None) -> None:
    with transaction(con):
        for name in NAMES:
            _comment(con, target, name, "TABLE" if name in STORE_TABLES else "VIEW")
        con.execute(f"INSERT INTO {target}.derived_state VALUES ('digest', $digest)", {"digest": digest})
        _set_watermark(con, target, read_after)


# derived_state's key 'ingest_id': the latest ingest when the store was last brought up to date
# (compared run by run with the warehouse). While no ingest since changed a run
# (checks.current.runs_changed_since), keep_derived has nothing to do and compares nothing.
def _set_watermark(con: duckdb.DuckDBPyConnection, target: str, read_after: int | None) -> None:
    con.execute(f"DELETE FROM {target}.derived_state WHERE key = 'ingest_id'")
    if read_after is not None:
        con.execute(f"INSERT INTO {target}.derived_state VALUES ('ingest_id', $id)", {"id": str(read_after)})


def _watermark(con: duckdb.DuckDBPyConnection) -> int | None:
    rows = con.execute(f"SELECT value FROM {_STATE_TABLE} WHERE key = 'ingest_id'").fetchall()
    return int(rows[0][0]) if rows else None


def _changed_runs(con: duckdb.DuckDBPyConnection) -> pa.Table:
    """Runs new, reloaded or without ingest_id since the store was brought up to date (present)
    and runs removed since (not present)."""
    full()  # the relational API (con.sql)
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
    present = [i for i, p in zip(changed.column("invocation_id").to_pylist(), changed.column("present").to_pylist()) if p]
    with materialised(con, present, workers=workers) as workspace:
        workspace.wait()
        _replace_runs(con, database, workspace.schema, changed)
    return changed.num_rows


def _replace_runs(con: duckdb.DuckDBPyConnection, database: str, derived_schema: str, changed: pa.Table) -> None:
    """In one transaction: replace the stored rows of the runs of ``changed`` (invocation_id,
    present) by those derived in ``derived_schema`` (the present ones: a workspace of
    ``derived.materialised`` over exactly them), and drop the rows of the others (removed)."""
    target = f"{_quote(database)}.{STORE}"
    con.register("lint_store_changed", changed)
    try:
        # Runs new since the store was brought up to date have no rows in it: when every changed
        # run is new (the usual nightly), no store table is scanned for rows to delete.
        kept = con.execute(f"SELECT count(*) FROM {target}.derived_runs "
                           "WHERE invocation_id IN (SELECT invocation_id FROM lint_store_changed)").fetchall()[0][0]
        present = con.execute("SELECT count(*) FROM lint_store_changed WHERE present").fetchall()[0][0]
        with transaction(con):
            # run_key is unique within one derivation: the runs derived now are numbered
            # after every kept one.
            offset = con.execute(f"SELECT coalesce(max(run_key), 0) FROM {target}.lint_runs").fetchall()[0][0]
            for name in NAMES:
                if name not in STORE_TABLES:  # a view: up to date by itself
                    continue
                if kept:
                    con.execute(f"DELETE FROM {target}.{name} WHERE invocation_id IN (SELECT invocation_id FROM lint_store_changed)")
                if present:
                    con.execute(f"INSERT INTO {target}.{name} SELECT * REPLACE (run_key + $offset AS run_key) "
                                f"FROM {derived_schema}.{name}", {"offset": offset})
            con.execute(f"DELETE FROM {target}.derived_runs WHERE invocation_id IN (SELECT invocation_id FROM lint_store_changed)")
            con.execute(f"INSERT INTO {target}.derived_runs SELECT invocation_id, ingest_id FROM runs "
                        "WHERE invocation_id IN (SELECT invocation_id FROM lint_store_changed WHERE present)")
    finally:
        con.unregister("lint_store_changed")


def keep_from_pass(con: duckdb.DuckDBPyConnection, derived_schema: str, changed: pa.Table, read_after: int | None) -> bool:
    """Bring lint_store up to date from a lint pass's own derivation: ``derived_schema`` holds
    the derived relations of exactly the present runs of ``changed`` (``store_changes(con,
    REBUILD_SHARE)`` and the runs the pass judged), which replace theirs; the removed ones leave. The nightly's lint does
    this, so that its keep_derived has nothing left to do (each changed run derived once). A
    cache: False, and the store as it was, when DuckDB fails."""
    database = con.execute("SELECT current_database()").fetchall()[0][0]
    try:
        _replace_runs(con, database, derived_schema, changed)
        _set_watermark(con, f"{_quote(database)}.{STORE}", read_after)
    except duckdb.Error:
        return False
    return True


def store_readable(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether a full lint may read lint_store: a writable warehouse file whose store is complete
    and was built with the derived views of its schema."""
    return store_usable(con) and _stored_digest(con) == derived_digest()


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


# keep_derived builds the store afresh when more than this share of the runs changed since it was
# brought up to date (below it, the changed runs' rows are replaced: keep_from_pass, _keep_derived).
REBUILD_SHARE = 0.5


def store_changes(con: duckdb.DuckDBPyConnection, share: float = 0.1) -> pa.Table | None:
    """The runs (invocation_id, present) whose stored rows are not those of the warehouse now
    (new, reloaded, without ingest_id or removed since the store was brought up to date): those
    ``stored`` would derive again before a full lint reads lint_store. None when the lint should
    derive for itself: no store (or one built with other derived views), an in-memory or
    read-only warehouse, or more than ``share`` of the runs changed (by default a tenth, e.g. the
    archive was ingested again: ``keep_derived`` catches up after answering)."""
    if not store_readable(con):
        return None
    changed = _changed_runs(con)
    return None if _mostly_changed(con, changed, share) else changed


KEEP_MEMORY = "256MiB"  # DuckDB's memory while keep_derived builds the store (lowered, never raised):
                       # unbounded, a 100k-run build peaks at ~550 MB RSS; at this cap ~380 MB, +0.03 s.


def keep_derived(con: duckdb.DuckDBPyConnection, *, workers: int = WORKERS) -> str:
    """Bring the warehouse's lint_store up to date: build it when there is none (or it was built
    with other derived views, or more than half the runs changed since), else derive again only
    the runs new, reloaded or removed since (nothing is compared when no ingest since it was last
    brought up to date changed a run). Returns ``built``, ``refreshed``, ``fresh`` or
    ``unavailable`` (in-memory or read-only warehouse).

    A lint reads the store when it is there but never builds it: writing ~1.7M derived rows of
    100,000 runs costs more than the pass that writes them saves. The nightly job calls this at
    its end, ``groundwork lint --keep-derived`` once its output is printed.
    """
    if not store_usable(con):
        return "unavailable"
    digest = derived_digest()
    stored_digest = _stored_digest(con)
    if stored_digest == digest and not current.runs_changed_since(con, _watermark(con)):
        return "fresh"   # before lowering the memory limit, which costs DuckDB ~25 ms at 100,000 runs
    with memory_at_most(con, KEEP_MEMORY):
        return _keep_derived(con, workers, digest, stored_digest)


def _keep_derived(con: duckdb.DuckDBPyConnection, workers: int, digest: str, stored_digest: str | None) -> str:
    database = con.execute("SELECT current_database()").fetchall()[0][0]
    target = f"{_quote(database)}.{STORE}"
    read_after = current.latest_ingest(con)  # the runs are read as this ingest left them
    if stored_digest == digest:
        changed = _changed_runs(con)
        if not _mostly_changed(con, changed, REBUILD_SHARE):
            outcome = "refreshed" if _refresh_store(con, database, workers, changed) else "fresh"
            _set_watermark(con, target, read_after)
            return outcome
    _start_store(con, target)
    with open_workspace(con, workers, f"{target},{_quote(database)}.main") as workspace:
        derive(workspace, target, scoped=False, tables=STORE_TABLES, by_run_key=True)
        workspace.wait()
    _finish_store(con, target, digest, read_after)
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
    with open_workspace(con, workers, f"{target},{_quote(database)}.main", target) as workspace:
        yield workspace
