"""Saved queries: header format, typed `$name` parameters, `groundwork query` errors and listing."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb
import pytest

from groundwork.investigate import queries
from groundwork.core.paths import QUERIES_DIR
from groundwork.core.warehouse import connect
from investigation_support import gw

SAVED = sorted(QUERIES_DIR.glob("*.sql"))
REQUIRED = {"runs_citing_source", "agent_violation_rate", "chat_before_retrieval",
            "evidence_never_verified", "passed_then_failing"}


def test_the_investigations_the_issue_asks_for_exist():
    assert REQUIRED <= {p.stem for p in SAVED}


@pytest.mark.parametrize("path", SAVED, ids=lambda p: p.stem)
def test_saved_query_header_and_parameters_match_the_sql(path):
    saved = queries.parse(path.read_text(encoding="utf-8"), path.stem, path)
    assert saved.title and saved.description
    con = duckdb.connect()
    used = set().union(*(s.named_parameters for s in con.extract_statements(saved.sql)))
    assert {p.name for p in saved.params} == used, "every $name must be declared, every declared param used"


@pytest.mark.parametrize("path", SAVED, ids=lambda p: p.stem)
def test_saved_query_runs_on_an_empty_warehouse(path):
    """Catches misspelt columns and views long before a real investigation."""
    saved = queries.parse(path.read_text(encoding="utf-8"), path.stem, path)
    given = {p.name: {"int": "1", "float": "1.5", "bool": "true", "date": "2026-01-01",
                      "timestamp": "2026-01-01T00:00:00"}.get(p.type, "x") for p in saved.params if p.required}
    con = connect(":memory:")
    con.execute(saved.sql, queries.bind(saved, given) or None)
    assert con.description and con.fetchall() == []


HEADER = """\
-- title: Example
-- description: First line
--   continued here.
-- param: source_id (required) — the cited source id
-- param: since (date, default 2026-01-02) — first day
-- param: limit (int, default 10)
-- param: agent (optional) — one agent
SELECT $source_id, $since, $limit, $agent
"""


def test_header_parsing():
    q = queries.parse(HEADER, "example")
    assert (q.name, q.title, q.description) == ("example", "Example", "First line continued here.")
    assert q.params == (
        queries.Param("source_id", "text", True, None, "the cited source id"),
        queries.Param("since", "date", False, "2026-01-02", "first day"),
        queries.Param("limit", "int", False, "10", ""),
        queries.Param("agent", "text", False, None, "one agent"),
    )


def test_values_are_typed_by_the_header_and_defaults_apply():
    q = queries.parse(HEADER, "example")
    assert queries.bind(q, {"source_id": "src:a'; DROP TABLE runs; --", "limit": "3"}) == {
        "source_id": "src:a'; DROP TABLE runs; --", "since": dt.date(2026, 1, 2), "limit": 3, "agent": None}


def test_values_are_bound_never_pasted():
    q = queries.parse(HEADER, "example")
    con = duckdb.connect()
    hostile = "x'); SELECT 1; --"
    row = con.execute(q.sql, queries.bind(q, {"source_id": hostile})).fetchone()
    assert row == (hostile, dt.date(2026, 1, 2), 10, None)


@pytest.mark.parametrize("given, message", [
    ({}, "query example needs --param source_id=VALUE (the cited source id)"),
    ({"source_id": "a", "nope": "1"}, "query example has no parameter 'nope'; it takes: source_id, since, limit, agent"),
    ({"source_id": "a", "since": "yesterday"}, "query example: param since: expected date (YYYY-MM-DD), got 'yesterday'"),
    ({"source_id": "a", "limit": "ten"}, "query example: param limit: expected int, got 'ten'"),
])
def test_parameter_errors(given, message):
    with pytest.raises(queries.QueryError) as info:
        queries.bind(queries.parse(HEADER, "example"), given)
    assert str(info.value) == message


@pytest.mark.parametrize("text, fragment", [
    ("SELECT 1\n", "needs exactly one `-- title:` line"),
    ("-- title: a\n-- owner: me\nSELECT 1\n", "unknown header key 'owner'"),
    ("-- title: a\n-- param: x (date, default someday)\nSELECT $x\n", "param x: expected date"),
    ("-- title: a\n-- param: x (date)\nSELECT $x\n", "must be exactly one of required, optional or default VALUE"),
    ("-- title: a\n-- param: x (decimal, required)\nSELECT $x\n", "unknown item 'decimal'"),
])
def test_malformed_headers_are_rejected(text, fragment):
    with pytest.raises(queries.QueryError) as info:
        queries.parse(text, "bad", Path("sql/queries/bad.sql"))
    assert fragment in str(info.value) and str(info.value).startswith("sql/queries/bad.sql: ")


@pytest.fixture(scope="module")
def empty_warehouse(tmp_path_factory):
    path = tmp_path_factory.mktemp("query") / "w.duckdb"
    connect(path).close()
    return str(path)


def test_cli_list_names_every_query_and_its_params(monkeypatch, capsys):
    code, out, _ = gw(monkeypatch, capsys, "query", "--list")
    assert code == 0
    for path in SAVED:
        saved = queries.parse(path.read_text(encoding="utf-8"), path.stem, path)
        assert f"{saved.name} — {saved.title}\n" in out
        for p in saved.params:
            assert f"--param {p.name}=<{p.type}>" in out


@pytest.mark.parametrize("args, message", [
    (["runs_citing_source"], "needs --param source_id=VALUE"),
    (["runs_citing_source", "-p", "source_id=a", "-p", "colour=red"], "has no parameter 'colour'"),
    (["agent_violation_rate", "-p", "since=last week"], "param since: expected date"),
    # NaN compares above every number in DuckDB: near_ms=nan made every later chat a near miss
    (["chat_before_retrieval", "-p", "near_ms=nan"], "param near_ms: expected float (a finite number), got 'nan'"),
    (["chat_before_retrieval", "-p", "near_ms=-inf"], "param near_ms: expected float (a finite number), got '-inf'"),
    (["runs_citing_source", "-p", "source_id"], "--param expects NAME=VALUE, got 'source_id'"),
    (["no_such_query"], "no saved query 'no_such_query'; known: "),
    ([], "name a saved query, or use --list"),
    # a command line's undecodable byte (Python keeps it as a lone surrogate): DuckDB's
    # 'Python Conversion Failure' was shown
    (["runs_citing_source", "-p", "source_id=a\udcffb"], "--param source_id: the value is not valid UTF-8 text"),
])
def test_cli_parameter_errors_exit_2(args, message, empty_warehouse, monkeypatch, capsys):
    code, out, err = gw(monkeypatch, capsys, "query", *args, "-w", empty_warehouse)
    assert code == 2 and out == "" and message in err and err.count("\n") == 1


def test_cli_show_prints_the_sql(monkeypatch, capsys):
    code, out, _ = gw(monkeypatch, capsys, "query", "passed_then_failing", "--show")
    assert code == 0 and out == (QUERIES_DIR / "passed_then_failing.sql").read_text(encoding="utf-8")


def test_an_sql_error_in_a_saved_query_names_the_file_and_position(tmp_path, monkeypatch, capsys):
    (tmp_path / "broken.sql").write_text("-- title: Broken\n-- description: d\nSELECT\n  nonesuch FROM runs\n", encoding="utf-8")
    monkeypatch.setattr(queries, "QUERIES_DIR", tmp_path)
    path = tmp_path / "w.duckdb"
    connect(path).close()
    code, out, err = gw(monkeypatch, capsys, "query", "broken", "-w", str(path))
    assert code == 2 and out == ""
    assert err.startswith('groundwork: error: broken.sql: Binder Error: Referenced column "nonesuch" not found')
    assert err.rstrip().endswith("(at line 4, column 3)")
