"""docs/schema.md documents every table, view and column of the schema (sql/schema/) and never drifts from it."""

from __future__ import annotations

import duckdb
import pytest

from groundwork.investigate import schemadoc
from groundwork.core.warehouse import apply_schema

INVESTIGATION_VIEWS = ("run_summary", "violation_messages", "span_tree", "citations", "latest_lint_diff")


@pytest.fixture(scope="module")
def con():
    con = duckdb.connect()
    apply_schema(con)
    return con


def test_docs_schema_md_is_current(con):
    text = schemadoc.DOC_PATH.read_text(encoding="utf-8")
    assert text == schemadoc.render(con), "docs/schema.md is stale: run `python -m groundwork.investigate.schemadoc`"


def test_every_table_view_and_column_appears_in_the_doc(con):
    text = schemadoc.DOC_PATH.read_text(encoding="utf-8")
    for _, name, _ in schemadoc.relations(con):
        assert f"\n### {name}\n" in text
        for column, ctype, _ in schemadoc.columns(con, name):
            assert f"| `{column}` | {ctype} |" in text


def test_every_table_and_view_has_a_comment(con):
    missing = [name for _, name, comment in schemadoc.relations(con) if not comment]
    assert missing == []


def test_every_table_column_has_a_comment(con):
    missing = [f"{name}.{col}" for kind, name, _ in schemadoc.relations(con) if kind == "table"
               for col, _, comment in schemadoc.columns(con, name) if not comment]
    assert missing == []


def test_every_investigation_view_column_has_a_comment(con):
    names = {name for kind, name, _ in schemadoc.relations(con) if kind == "view"}
    missing = [f"{name}.{col}" for name in INVESTIGATION_VIEWS if name in names
               for col, _, comment in schemadoc.columns(con, name) if not comment]
    assert missing == []


def test_check_mode_reports_a_stale_doc(tmp_path, monkeypatch, capsys):
    stale = tmp_path / "schema.md"
    stale.write_text("# old\n", encoding="utf-8")
    monkeypatch.setattr(schemadoc, "DOC_PATH", stale)
    assert schemadoc.main(["--check"]) == 1
    assert "out of date; run: python -m groundwork.investigate.schemadoc" in capsys.readouterr().err
    assert schemadoc.main([]) == 0 and schemadoc.main(["--check"]) == 0
