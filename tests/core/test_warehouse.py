"""The warehouse schema: a throwaway in-memory warehouse gets every table and view exactly as a
warehouse file does, without the documentation comments; a file gets them all."""

from __future__ import annotations

import os
import re
import shutil

import duckdb
import pytest

from groundwork.core import warehouse
from groundwork.core.paths import SCHEMA_DIR
from groundwork.core.warehouse import _COMMENT, _without_comments, apply_schema, connect, schema_sql

# A view's text as DuckDB shows it. A view read back from a warehouse file (its catalog in
# warehouse.STORAGE_VERSION) names the type STRING (the derived relations use it, as Spark SQL
# does) VARCHAR, its other name; one made in this process keeps the name it was written with.
VIEW_SQL = r"regexp_replace(sql, '\bSTRING\b', 'VARCHAR', 'g')"
SHAPE = f"""
SELECT 'column', table_name, column_name, data_type FROM duckdb_columns()
WHERE database_name = current_database() AND schema_name = 'main'
UNION ALL
SELECT 'view', view_name, NULL, {VIEW_SQL} FROM duckdb_views()
WHERE database_name = current_database() AND schema_name = 'main' AND NOT internal
UNION ALL
SELECT 'table', table_name, NULL, sql FROM duckdb_tables()
WHERE database_name = current_database() AND schema_name = 'main'
ORDER BY ALL
"""
COMMENTS = """
SELECT count(*) FILTER (WHERE comment IS NOT NULL), count(*) FROM duckdb_columns()
WHERE database_name = current_database() AND schema_name = 'main'
"""


def test_a_warehouse_without_comments_has_the_same_tables_views_and_columns():
    documented, bare = duckdb.connect(), duckdb.connect()
    apply_schema(documented)
    apply_schema(bare, comments=False)
    assert bare.execute(SHAPE).fetchall() == documented.execute(SHAPE).fetchall()
    assert bare.execute(COMMENTS).fetchall()[0][0] == 0
    with_comments, columns = documented.execute(COMMENTS).fetchall()[0]
    assert with_comments > 0.95 * columns > 300


def test_only_comment_statements_are_left_out():
    text = schema_sql()
    stripped = _without_comments(text)
    removed = len(_COMMENT.findall(text))
    assert removed == sum(1 for s in duckdb.extract_statements(text) if "\nCOMMENT ON " in "\n" + s.query)
    assert len(duckdb.extract_statements(stripped)) == len(duckdb.extract_statements(text)) - removed
    assert "\nCOMMENT ON" not in stripped


def test_connect_documents_a_file_warehouse_and_not_an_in_memory_one(tmp_path):
    file_con = connect(tmp_path / "w.duckdb")
    memory_con = connect(":memory:")
    comment = "SELECT comment FROM duckdb_columns() WHERE table_name = 'runs' AND column_name = 'invocation_id'"
    assert file_con.execute(comment).fetchall()[0][0]
    assert memory_con.execute(comment).fetchall() == [(None,)]
    assert memory_con.execute(SHAPE).fetchall() == file_con.execute(SHAPE).fetchall()


def test_a_warehouse_file_keeps_its_name_and_cursors_see_it(tmp_path):
    from groundwork.core.warehouse import cursor

    con = connect(tmp_path / "fleet.duckdb")
    assert con.execute("SELECT current_database()").fetchall() == [("fleet",)]
    con.execute("INSERT INTO ingests (ingest_id, runs_dir, started_at, tool_version) VALUES (1, 'x', now(), 't')")
    cur = cursor(con)
    assert cur.execute("SELECT current_database(), count(*) FROM ingests").fetchall() == [("fleet", 1)]
    con.close()
    again = duckdb.connect(str(tmp_path / "fleet.duckdb"), read_only=True)  # a plain DuckDB client reads it
    assert again.execute("SELECT count(*) FROM ingests").fetchall() == [(1,)]


def test_a_warehouse_named_like_a_duckdb_catalog_still_opens(tmp_path):
    con = connect(tmp_path / "memory.duckdb")
    assert con.execute("SELECT current_database()").fetchall() == [("warehouse",)]
    assert con.execute("SELECT count(*) FROM runs").fetchall() == [(0,)]


def test_what_groundwork_writes_is_stored_in_small_row_groups(tmp_path):
    # Each checkpoint rewrites the row groups appended to since the last one: with DuckDB's
    # 122,880-row groups every checkpoint of a large ingest recompressed all runs loaded so far.
    from groundwork.core.warehouse import ROW_GROUP_SIZE

    con = connect(tmp_path / "w.duckdb")
    con.execute("INSERT INTO run_files SELECT 'run' || range, 'spans.jsonl', 1, 1, 'x' FROM range(50000)")
    con.execute("CHECKPOINT")
    groups = con.execute("SELECT count(DISTINCT row_group_id) FROM pragma_storage_info('run_files')").fetchall()[0][0]
    assert groups == -(-50000 // ROW_GROUP_SIZE) > 1


def test_a_query_too_big_for_memory_spills_next_to_the_warehouse_not_into_the_current_directory(tmp_path, monkeypatch):
    # The warehouse is attached to an in-memory database, whose default spill folder is ./.tmp of
    # whatever directory the user runs groundwork from.
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    con = connect(tmp_path / "w.duckdb")
    assert con.execute("SELECT current_setting('temp_directory')").fetchall() == [(str(tmp_path / "w.duckdb") + ".tmp",)]
    con.execute("SET memory_limit = '40MB'")
    con.execute("SET threads = 1")
    con.execute("CREATE TEMP TABLE big AS SELECT range AS k, random() AS r FROM range(3000000)")
    assert con.execute("SELECT count(*) FROM (SELECT k FROM big ORDER BY r, k)").fetchall() == [(3000000,)]
    assert list(cwd.iterdir()) == []
    con.close()


def catalog(con) -> dict:
    """Everything a warehouse's schema consists of (its schema main; keep_derived's lint_store is
    a cache): columns with types and comments, tables and views with comments and view text,
    constraints, and the schema_info rows."""
    db = con.execute("SELECT current_database()").fetchall()[0][0]
    q = lambda sql: sorted(map(tuple, con.execute(sql + " AND schema_name = 'main'", [db]).fetchall()))  # noqa: E731
    return {
        "columns": q("SELECT table_name, column_name, data_type, comment, column_default FROM duckdb_columns() WHERE database_name = ?"),
        "tables": q("SELECT schema_name, table_name, comment FROM duckdb_tables() WHERE database_name = ?"),
        "views": q(f"SELECT schema_name, view_name, comment, {VIEW_SQL} FROM duckdb_views() WHERE database_name = ? AND NOT internal"),
        "constraints": q("SELECT table_name, constraint_type, constraint_text FROM duckdb_constraints() WHERE database_name = ?"),
        "info": sorted(con.execute("SELECT * FROM schema_info").fetchall()),
    }


@pytest.fixture
def schema_cache(tmp_path, monkeypatch):
    folder = tmp_path / "schema-cache"
    monkeypatch.setenv("GROUNDWORK_SCHEMA_CACHE", str(folder))
    return folder


def test_a_new_warehouse_copied_from_the_cached_template_is_the_schema_applied(tmp_path, schema_cache, monkeypatch):
    first, second = connect(tmp_path / "a.duckdb"), connect(tmp_path / "b.duckdb")  # builds, then copies
    assert [p.name for p in schema_cache.iterdir()] == [warehouse._template_path().name]
    monkeypatch.setenv("GROUNDWORK_SCHEMA_CACHE", "off")
    direct = connect(tmp_path / "c.duckdb")
    assert catalog(first) == catalog(second) == catalog(direct)
    assert catalog(direct)["columns"] and all(c[3] for c in catalog(direct)["columns"] if c[0] == "runs")
    second.execute("INSERT INTO ingests (ingest_id, runs_dir, started_at, tool_version) VALUES (1, 'x', now(), 't')")
    assert first.execute("SELECT count(*) FROM ingests").fetchall() == [(0,)]  # copies, not one file
    for con in (first, second, direct):
        con.close()


def test_a_damaged_template_is_replaced_and_the_warehouse_still_correct(tmp_path, schema_cache, monkeypatch):
    connect(tmp_path / "a.duckdb").close()
    template = warehouse._template_path()
    template.write_bytes(b"not a duckdb file" * 1000)
    con = connect(tmp_path / "b.duckdb")
    monkeypatch.setenv("GROUNDWORK_SCHEMA_CACHE", "off")
    direct = connect(tmp_path / "c.duckdb")
    assert catalog(con) == catalog(direct)
    assert not template.exists() or template.read_bytes()[:17] != b"not a duckdb file"
    con.close()
    direct.close()


def test_the_template_never_replaces_an_existing_file_and_can_be_switched_off(tmp_path, schema_cache, monkeypatch):
    monkeypatch.setenv("GROUNDWORK_SCHEMA_CACHE", "off")
    connect(tmp_path / "w.duckdb").close()
    assert not schema_cache.exists()
    monkeypatch.setenv("GROUNDWORK_SCHEMA_CACHE", str(schema_cache))
    taken = tmp_path / "taken.duckdb"
    taken.write_bytes(b"someone else's")
    assert warehouse._copy_template(taken) is False
    assert taken.read_bytes() == b"someone else's"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["schema-cache", "taken.duckdb", "w.duckdb"]  # no leftovers


def test_a_cache_folder_others_can_write_to_is_not_used(tmp_path, schema_cache):
    schema_cache.mkdir(mode=0o777)
    os.chmod(schema_cache, 0o777)
    connect(tmp_path / "w.duckdb").close()
    assert list(schema_cache.iterdir()) == []


def test_the_schema_is_its_files_in_file_name_order():
    names = [p.relative_to(SCHEMA_DIR).as_posix() for p in warehouse.schema_files()]
    assert names[:3] == ["00_migrations.sql", "10_tables.sql", "20_source_check_items.sql"]
    assert names[3] == "30_derived/01_lint_runs.sql" and names[-3:] == ["40_history.sql", "45_reports.sql", "50_investigation.sql"]
    assert schema_sql() == "\n".join(p.read_text(encoding="utf-8") for p in warehouse.schema_files())


def test_an_older_warehouse_gets_todays_columns_from_the_migrations(tmp_path):
    """A warehouse made before the columns of 00_migrations.sql existed (they are dropped here, last
    added first) ends, once opened, with exactly the catalog of a new one: same columns in the
    same order, same comments and views."""
    new = connect(tmp_path / "new.duckdb")
    old = connect(tmp_path / "old.duckdb")
    added = [re.search(r"ALTER TABLE IF EXISTS (\w+) ADD COLUMN IF NOT EXISTS (\w+)", s.query).groups()
             for s in duckdb.extract_statements((SCHEMA_DIR / "00_migrations.sql").read_text(encoding="utf-8"))]
    assert ("lints", "all_rules") in added
    for table, column in reversed(added):
        old.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
    old.execute("DELETE FROM schema_info WHERE key = 'schema_sha256'")  # as written by that older groundwork
    old.close()
    old = connect(tmp_path / "old.duckdb")
    assert catalog(old) == catalog(new)


def test_the_cached_template_is_keyed_by_every_schema_file(tmp_path, schema_cache, monkeypatch):
    key = warehouse._template_path()
    copy = tmp_path / "schema"
    shutil.copytree(SCHEMA_DIR, copy)
    monkeypatch.setattr(warehouse, "SCHEMA_DIR", copy)
    assert warehouse._template_path() == key
    counts = next((copy / "30_derived").glob("*_lint_counts.sql"))
    counts.write_text(counts.read_text(encoding="utf-8") + "-- changed\n", encoding="utf-8")
    assert warehouse._template_path() != key
