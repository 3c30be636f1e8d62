"""A verify pass over some runs (the nightly's new runs, a watch batch) evaluates the view
source_check_items over temp copies of those runs' rows of the tables it reads, picked by rowid
(groundwork.checks.verify.scoped_items), not by filtering the view. The rows must be the view's
rows of those runs, whichever runs are asked for, and the warehouse's tables must be left as
they were (no copy shadowing them after the pass).
"""

from __future__ import annotations

from pathlib import Path

import pytest

import groundwork.ingest as ingest
from groundwork.checks import verify
from groundwork.core.warehouse import connect
from ingest_support import EXAMPLE

CORPUS = Path(__file__).parent.parent / "fixtures" / "corpus"


def _rows(con, sql: str, params=None) -> list[tuple]:
    return sorted(con.execute(sql, params).fetchall(), key=repr)


@pytest.fixture(scope="module", params=["example", "corpus"])
def con(request, tmp_path_factory):
    runs = EXAMPLE / "runs" if request.param == "example" else CORPUS / "runs"
    con = connect(tmp_path_factory.mktemp("items") / "w.duckdb")
    ingest.ingest_archive(con, runs)
    yield con
    con.close()


def test_scoped_items_are_the_views_rows_of_those_runs(con):
    ids = [r[0] for r in con.execute("SELECT invocation_id FROM runs ORDER BY invocation_id").fetchall()]
    assert len(ids) > 20
    counts = (con.execute("SELECT count(*) FROM evidence").fetchall()[0][0],
              con.execute("SELECT count(*) FROM runs").fetchall()[0][0])
    assert con.execute("SELECT count(*) FROM source_check_items").fetchall()[0][0] > 0
    found = 0
    for runs in (ids, ids[::3], ids[1::5], ids[:1], ids[-1:], ["not-a-run"], []):
        expected = _rows(con, "SELECT * FROM main.source_check_items WHERE list_contains($ids, invocation_id)",
                         {"ids": runs})
        with verify.scoped_items(con, runs):
            got = _rows(con, "SELECT * FROM source_check_items")
            # only the view's result is narrowed: the tables the rules may read are whole
            assert (con.execute("SELECT count(*) FROM evidence").fetchall()[0][0],
                    con.execute("SELECT count(*) FROM runs").fetchall()[0][0]) == counts
        assert got == expected
        found += len(got)
        assert con.execute("SELECT count(*) FROM duckdb_tables() WHERE temporary").fetchall()[0][0] == 0
    assert found > 0


def test_the_view_reads_only_the_tables_scoped_items_narrows():
    """Every table the view names is copied for a scoped pass (a table left out would be read
    whole, still correct, but a table joined across runs would not be: look before adding one)."""
    body = verify.ITEMS_FILE.read_text(encoding="utf-8")
    named = {w for w in ("evidence", "runs", "spans", "payload_refs", "delegations", "run_files", "ingest_issues")
             if f"FROM {w} " in body or f"JOIN {w} " in body}
    assert named == set(verify._ITEM_TABLES)
