"""What warehouse.connect opens: a warehouse of an older groundwork is migrated forward in one
transaction, every row kept; one of a newer groundwork, and a file of another application, are
refused with one line and left byte for byte as they were; a file connect creates is removed
again when it fails; new files are written in STORAGE_VERSION.

tests/fixtures/warehouse-v1.duckdb is a warehouse written by the release before schema_version 2
(commit 3fa4741, schema_version 1): `groundwork nightly examples/archive/runs --sources
examples/archive/sources.yaml --warehouse x.duckdb --out r`, then copied into 16 KiB blocks with
DuckDB's COPY FROM DATABASE (same catalog and rows; 1.1 MB instead of 11 MB). Never rebuild it
with a newer groundwork: it stands for the warehouses users already have.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from groundwork.core import warehouse
from groundwork.core.errors import GroundworkError
from groundwork.core.warehouse import NewerWarehouse, NotAWarehouse, connect, schema_version
from test_warehouse import catalog

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "warehouse-v1.duckdb"
ROOT = Path(__file__).resolve().parents[2]


def tables(path: Path) -> dict[str, tuple[list[str], list[str]]]:
    """Every table of every schema of the warehouse file: (column names, rows as sorted reprs),
    read with a plain DuckDB connection."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        out = {}
        names = con.execute("SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = current_database()"
                            " ORDER BY ALL").fetchall()
        for schema, table in names:
            columns = [r[0] for r in con.execute(
                "SELECT column_name FROM duckdb_columns() WHERE database_name = current_database() AND schema_name = ?"
                " AND table_name = ? ORDER BY column_index", [schema, table]).fetchall()]
            out[f"{schema}.{table}"] = (columns, rows(con, schema, table, columns))
        return out
    finally:
        con.close()


def rows(con, schema: str, table: str, columns: list[str]) -> list[str]:
    select = ", ".join(f'"{c}"' for c in columns)
    return sorted(map(repr, con.execute(f'SELECT {select} FROM "{schema}"."{table}"').fetchall()))


def file_catalog(path: Path) -> dict:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return catalog(con)
    finally:
        con.close()


def stored(path: Path) -> int:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return int(con.execute("SELECT value FROM schema_info WHERE key = 'schema_version'").fetchall()[0][0])
    finally:
        con.close()


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def v1(tmp_path) -> Path:
    path = tmp_path / "v1.duckdb"
    shutil.copyfile(FIXTURE, path)
    return path


def test_the_fixture_is_a_small_schema_version_1_warehouse_with_history():
    assert stored(FIXTURE) == 1 < schema_version()
    assert FIXTURE.stat().st_size < 3 * 2**20
    held = tables(FIXTURE)
    assert len(held["main.runs"][1]) == 99 and len(held["main.lint_verdicts"][1]) == 99
    assert len(held["main.nightlies"][1]) == 1 and len(held["lint_store.derived_runs"][1]) == 99


def test_migrating_a_v1_warehouse_keeps_every_row_of_every_table_and_ends_with_a_new_ones_catalog(v1, tmp_path):
    before = tables(v1)
    con = connect(v1)
    migrated = catalog(con)
    con.close()
    after = duckdb.connect(str(v1), read_only=True)
    try:
        for name, (columns, kept) in before.items():
            schema, table = name.split(".")
            if name == "main.schema_info":
                continue
            assert rows(after, schema, table, columns) == kept, name
        info = dict(after.execute("SELECT key, value FROM schema_info").fetchall())
    finally:
        after.close()
    assert info["schema_version"] == str(schema_version())
    new = connect(tmp_path / "new.duckdb")
    assert migrated == catalog(new)  # every column today's warehouse has, in the same order
    new.close()


_KILL_BEFORE_COMMIT = """
import os, signal, sys
from contextlib import contextmanager
from groundwork.core import warehouse

@contextmanager
def transaction(con):
    con.execute("BEGIN TRANSACTION")
    yield
    os.kill(os.getpid(), signal.SIGKILL)  # every statement of the migration ran; COMMIT never does

warehouse.transaction = transaction
warehouse.connect(sys.argv[1])
"""


def test_a_migration_killed_before_it_commits_leaves_the_old_warehouse_as_it_was(v1):
    before, shape = tables(v1), file_catalog(v1)
    done = subprocess.run([sys.executable, "-c", _KILL_BEFORE_COMMIT, str(v1)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == -9, done.stderr
    assert stored(v1) == 1
    assert tables(v1) == before
    assert file_catalog(v1) == shape
    connect(v1).close()  # and the next command migrates it
    assert stored(v1) == schema_version()


def test_a_migration_that_fails_leaves_the_old_warehouse_as_it_was(v1, monkeypatch):
    before = tables(v1)
    text = warehouse.schema_sql()
    monkeypatch.setattr(warehouse, "schema_sql", lambda: text + "\nSELECT error('the last statement fails');\n")
    with pytest.raises(duckdb.Error, match="the last statement fails"):
        connect(v1)
    assert stored(v1) == 1 and tables(v1) == before


@pytest.fixture
def newer(tmp_path) -> Path:
    path = tmp_path / "newer.duckdb"
    connect(path).close()
    con = duckdb.connect(str(path))
    con.execute("UPDATE schema_info SET value = $v WHERE key = 'schema_version'", {"v": str(schema_version() + 1)})
    con.close()
    return path


@pytest.mark.parametrize("mode", [{}, {"read_only": True}, {"create": False}])
def test_a_warehouse_of_a_newer_groundwork_is_refused_in_one_line_and_left_untouched(newer, mode):
    was, listing = digest(newer), sorted(os.listdir(newer.parent))
    with pytest.raises(NewerWarehouse) as exc:
        connect(newer, **mode)
    message = str(exc.value)
    assert "\n" not in message and f"schema version {schema_version() + 1}" in message and "newer groundwork" in message
    assert digest(newer) == was and sorted(os.listdir(newer.parent)) == listing


def _duckdb_of_another_application(path: Path) -> None:
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE runs (x INTEGER); INSERT INTO runs VALUES (1)")
    con.execute("CREATE TABLE schema_info (k INTEGER)")  # a table of that name, of another shape
    con.close()


def _duckdb_with_a_pending_log(path: Path) -> None:
    """Another application's database as it is after a crash: its last change only in <file>.wal."""
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE x (a INTEGER); INSERT INTO x VALUES (1)")
    con.execute("CHECKPOINT")
    con.execute("SET checkpoint_threshold = '1GB'")
    con.execute("INSERT INTO x VALUES (2)")
    shutil.copyfile(path, path.with_name("crashed"))
    shutil.copyfile(f"{path}.wal", path.with_name("crashed.wal"))
    con.close()
    os.replace(path.with_name("crashed"), path)
    os.replace(path.with_name("crashed.wal"), f"{path}.wal")


def _sqlite(path: Path) -> None:
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE t (a)")
    db.commit()
    db.close()


FOREIGN = {
    "duckdb": (_duckdb_of_another_application, "of another application"),
    "duckdb-with-wal": (_duckdb_with_a_pending_log, "of another application"),
    "sqlite": (_sqlite, "not a DuckDB database file"),
    "text": (lambda p: p.write_text("name,value\nx,1\n"), "not a DuckDB database file"),
    "empty file": (lambda p: p.write_bytes(b""), "not a DuckDB database file"),
    "directory": (lambda p: p.mkdir(), "a directory"),
}


@pytest.mark.parametrize("kind", sorted(FOREIGN))
@pytest.mark.parametrize("mode", [{}, {"read_only": True}, {"create": False}])
def test_a_file_of_another_application_is_refused_in_one_line_and_never_modified(tmp_path, kind, mode):
    make, why = FOREIGN[kind]
    path = tmp_path / "other.duckdb"
    make(path)
    files = sorted(p for p in tmp_path.rglob("*"))
    was = {p: digest(p) for p in files if p.is_file()}
    with pytest.raises(NotAWarehouse) as exc:
        connect(path, **mode)
    message = str(exc.value)
    assert "\n" not in message and message.startswith(f"{path} is not a groundwork warehouse") and why in message
    assert sorted(p for p in tmp_path.rglob("*")) == files
    assert {p: digest(p) for p in files if p.is_file()} == was


def test_a_file_whose_tables_do_not_take_the_schema_is_refused_in_one_line_and_never_modified(tmp_path):
    # a schema_info that says schema 4 but no other table, and no key on it (a file half made by
    # hand): applying the schema failed deep inside ('internal error: BinderException ... ON CONFLICT')
    path = tmp_path / "half.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE schema_info (key VARCHAR, value VARCHAR)")
    con.execute("INSERT INTO schema_info VALUES ('schema_version', '4')")
    con.close()
    was = digest(path)
    with pytest.raises(NotAWarehouse) as exc:
        connect(path)
    message = str(exc.value)
    assert "\n" not in message and message.startswith(f"{path} is not a groundwork warehouse (its tables do not "
                                                      "take this groundwork's schema: Binder Error: ")
    assert digest(path) == was and sorted(tmp_path.iterdir()) == [path]


def test_an_empty_duckdb_database_becomes_a_warehouse_but_is_not_read_as_one(tmp_path):
    # e.g. a warehouse whose creation stopped before its schema was committed
    path = tmp_path / "empty.duckdb"
    duckdb.connect(str(path)).close()
    with pytest.raises(GroundworkError, match="empty DuckDB database"):
        connect(path, read_only=True)
    con = connect(path)
    assert con.execute("SELECT count(*) FROM runs").fetchall() == [(0,)]
    con.close()
    assert stored(path) == schema_version()


def test_a_warehouse_file_connect_creates_is_removed_when_it_fails(tmp_path, monkeypatch):
    monkeypatch.setenv("GROUNDWORK_SCHEMA_CACHE", "off")
    text = warehouse.schema_sql()
    monkeypatch.setattr(warehouse, "schema_sql", lambda: text + "\nSELECT error('cannot apply');\n")
    with pytest.raises(duckdb.Error, match="cannot apply"):
        connect(tmp_path / "w.duckdb")
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("cache", ["off", "on"])
def test_new_warehouse_files_are_written_in_the_storage_version_the_registrys_shell_reads(tmp_path, monkeypatch, cache):
    monkeypatch.setenv("GROUNDWORK_SCHEMA_CACHE", "off" if cache == "off" else str(tmp_path / "cache"))
    for name in ("a.duckdb", "b.duckdb"):  # with the cache: built, then copied
        connect(tmp_path / name).close()
        con = duckdb.connect(str(tmp_path / name), read_only=True)
        tags = con.execute("SELECT tags FROM duckdb_databases() WHERE database_name = current_database()").fetchall()
        con.close()
        assert tags == [({"storage_version": f"{warehouse.STORAGE_VERSION}+"},)]


def test_the_schema_version_is_stored_by_one_line_of_the_schema():
    assert schema_version() == 4  # 3: lints.all_runs; 4: ingests.runs_changed, lints.ingest_id, source_files, nightly_failing, nightly_agent_counts, nightly_rule_counts, nightly_counted
    assert warehouse.schema_sql().count("'schema_version'") == 1
