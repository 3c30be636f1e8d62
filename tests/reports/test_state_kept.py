"""A nightly keeps its rows of report_state in the warehouse (report_store.state), and the next
nightly with nothing changed, whose passes are its baseline's, reads them through
sql/reports/state_same_passes.sql instead of computing them again (issue 16 point 1: ~0.12 s of
a 0.7 s nightly at 100,000 runs). Those rows must be the ones computing them gives, night after
night; and the kept rows must be taken only when they are the baseline's, under the same key
(passes, runs, severities), never after a change or from a nightly that did not finish.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from groundwork.core.config import Config
from groundwork.core.warehouse import connect
from groundwork.jobs.nightly import run_nightly
from groundwork.reports import data
from ingest_support import EXAMPLE


def _sorted(cur) -> tuple[list[str], list[tuple]]:
    names = [d[0] for d in cur.description]
    return names, sorted(cur.fetchall(), key=repr)


def _computed(con, nightly: int):
    """Nightly ``nightly``'s report_state as computing it gives (report_state.sql)."""
    data.build_violations(con, nightly)
    passes = data._one(con, "nightly_passes", nightly=nightly)
    sql = data.state_sql(passes)
    params = {"nightly": nightly, "baseline": passes["baseline_nightly_id"], "lint": passes["lint_id"],
              "verify": passes["verify_id"]}
    return _sorted(con.execute(sql, {n: v for n, v in params.items() if n in data.named_params(sql)}))


def _kept(con):
    return con.execute(f"SELECT * FROM {data.STATE_KEY}").fetchall(), \
        _sorted(con.execute(f"SELECT * FROM {data.STATE_TABLE}"))


def _built(con, nightly: int):
    """The kept rows, after asserting that nightly ``nightly`` built them (its key row) and that
    they are the rows computing them gives."""
    (key_row,), rows = _kept(con)
    assert key_row[0] == nightly and rows == _computed(con, nightly)
    return rows


@pytest.fixture()
def archive(tmp_path) -> Path:
    root = tmp_path / "archive"
    shutil.copytree(EXAMPLE, root)
    return root


def test_nightlies_with_nothing_changed_read_the_kept_rows_which_are_the_computed_ones(archive, tmp_path):
    wh, out, sources = tmp_path / "w.duckdb", tmp_path / "out", archive / "sources.yaml"
    first = run_nightly(archive / "runs", out=out, warehouse=wh, sources=sources)
    con = connect(wh)
    try:
        (key_row,), rows = _kept(con)
        assert key_row[0] == first.nightly_id
        assert rows == _computed(con, first.nightly_id)   # the first nightly's own rows, 'new' failures and all
        names = rows[0]
        assert "new" in {r[names.index("change")] for r in rows[1]}
    finally:
        con.close()
    for night in range(2):
        again = run_nightly(archive / "runs", out=out, warehouse=wh, sources=sources)
        con = connect(wh)
        try:
            (now_key,), now_rows = _kept(con)
            # Taken, not built: the key row names tonight under the same key, the table is the first
            # nightly's, and the rows read from it are those computing them gives.
            assert now_key == (again.nightly_id, key_row[1]) and now_rows == rows, night
            computed = _computed(con, again.nightly_id)
            assert _sorted(data.execute(con, "state_same_passes")) == computed, night
            assert {r[computed[0].index("change")] for r in computed[1]} == {"still", None}
        finally:
            con.close()
        assert again.totals["new_failing"] == 0 and again.totals["still_failing"] == first.totals["runs_failing"]


def test_kept_rows_are_not_taken_after_a_change_or_without_their_key_row(archive, tmp_path):
    wh, out, sources = tmp_path / "w.duckdb", tmp_path / "out", archive / "sources.yaml"
    run_nightly(archive / "runs", out=out, warehouse=wh, sources=sources)
    # Other severities, the same passes: the key differs, the rows are built again.
    warned = run_nightly(archive / "runs", out=out, warehouse=wh, sources=sources,
                         config=Config(severity={"GW1": "warn", "GW2": "warn"}))
    con = connect(wh)
    try:
        _built(con, warned.nightly_id)
        # As if a nightly had died while building the rows: no key row, so they are never taken.
        con.execute(f"DELETE FROM {data.STATE_KEY}")
        con.execute(f"UPDATE {data.STATE_TABLE} SET agent_id = 'not-this-one'")
    finally:
        con.close()
    night = run_nightly(archive / "runs", out=out, warehouse=wh, sources=sources,
                        config=Config(severity={"GW1": "warn", "GW2": "warn"}))
    con = connect(wh)
    try:
        rows = _built(con, night.nightly_id)
        assert "not-this-one" not in {r[rows[0].index("agent_id")] for r in rows[1]}
    finally:
        con.close()


def test_a_kept_row_of_a_nightly_that_is_not_the_baseline_is_not_taken(archive, tmp_path):
    wh, out, sources = tmp_path / "w.duckdb", tmp_path / "out", archive / "sources.yaml"
    first = run_nightly(archive / "runs", out=out, warehouse=wh, sources=sources)
    con = connect(wh)
    try:
        # A later nightly that built its rows and did not finish (its row names no exit status):
        # the next nightly's baseline is still the first one.
        con.execute("INSERT INTO nightlies (nightly_id, started_at, runs_dir, out_dir) "
                    "SELECT nightly_id + 1, started_at, runs_dir, out_dir FROM nightlies WHERE nightly_id = $n",
                    {"n": first.nightly_id})
        con.execute(f"UPDATE {data.STATE_KEY} SET nightly_id = $n", {"n": first.nightly_id + 1})
        con.execute(f"UPDATE {data.STATE_TABLE} SET agent_id = 'not-this-one'")
    finally:
        con.close()
    night = run_nightly(archive / "runs", out=out, warehouse=wh, sources=sources)
    con = connect(wh)
    try:
        assert data._one(con, "nightly_passes", nightly=night.nightly_id)["baseline_nightly_id"] == first.nightly_id
        (key_row,), rows = _kept(con)
        assert key_row[0] == night.nightly_id
        assert _sorted(data.execute(con, "state_same_passes")) == _computed(con, night.nightly_id)
        assert "not-this-one" not in {r[rows[0].index("agent_id")] for r in rows[1]}
    finally:
        con.close()
