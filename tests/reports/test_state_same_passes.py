"""A nightly whose passes are its baseline's (nothing changed: it names the passes that still
hold) reads its rows of nightly_changes from sql/reports/changes_same_passes.sql, which does not
join each pass with itself (issue 16 point 1). Those rows, and the report_state built on them,
must equal what the view nightly_changes gives: after a nightly with nothing changed, one whose
finding severities changed (the view judges findings by the nightly's own severities, the
baseline's pass included), and one without a verify pass after one with it (but not the one with
a verify pass after it, whose baseline has none).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from groundwork.core.config import Config
from groundwork.core.warehouse import connect
from groundwork.jobs.nightly import run_nightly
from groundwork.reports import data
from ingest_support import EXAMPLE


def _sorted(cur) -> tuple[list[str], list[tuple]]:
    names = [d[0] for d in cur.description]
    return names, sorted(cur.fetchall(), key=repr)


def _view_rows(con, nightly: int):
    return _sorted(con.execute("SELECT * FROM nightly_changes WHERE nightly_id = $n", {"n": nightly}))


def _shortcut_rows(con, nightly: int, passes: dict):
    return _sorted(data.execute(con, "changes_same_passes", nightly=nightly, lint=passes["lint_id"],
                                verify=passes["verify_id"]))


def _state(con, nightly: int, passes: dict, *, shortcut: bool):
    sql = data.state_sql(passes, shortcut=shortcut)
    params = {"nightly": nightly, "baseline": passes["baseline_nightly_id"], "lint": passes["lint_id"],
              "verify": passes["verify_id"]}
    return _sorted(con.execute(sql, {n: v for n, v in params.items() if n in data.named_params(sql)}))


@pytest.fixture()
def archive(tmp_path) -> Path:
    """The example archive, with a groundwork finding (GW2: a duplicated span line, severity
    error by default) in three runs."""
    root = tmp_path / "archive"
    shutil.copytree(EXAMPLE, root)
    changed = 0
    for spans in sorted(root.glob("runs/*/spans.jsonl")):
        lines = spans.read_text(encoding="utf-8").splitlines(keepends=True)
        if changed < 3 and lines and '"name": "policy_gate"' in lines[0]:
            spans.write_text("".join(lines) + lines[0], encoding="utf-8")
            changed += 1
    assert changed == 3
    return root


def test_a_nightly_with_its_baselines_passes_gets_the_views_rows(archive, tmp_path):
    wh, out = tmp_path / "w.duckdb", tmp_path / "out"
    sources = archive / "sources.yaml"
    nights = [
        ("first", {"sources": sources}),
        ("nothing changed", {"sources": sources}),
        # GW2 only warns from now on: fewer runs fail, with the same passes.
        ("severities changed", {"sources": sources, "config": Config(severity={"GW2": "warn"})}),
        ("no verify pass", {"sources": None}),
        # Its baseline has no verify pass: the source check's failures are new again.
        ("verify pass again", {"sources": sources}),
    ]
    failing_by_night = {}
    for label, kw in nights:
        result = run_nightly(archive / "runs", out=out, warehouse=wh, **kw)
        n = result.nightly_id
        con = connect(wh)
        try:
            passes = data._one(con, "nightly_passes", nightly=n)
            data.build_violations(con, n)   # report_violations, which report_state reads
            view = _view_rows(con, n)
            if label in ("first", "verify pass again"):
                assert not data.same_passes(passes), label
                assert data.state_sql(passes) == data.state_sql(passes, shortcut=False)
                continue
            assert data.same_passes(passes), label
            assert passes["verify_id"] is None if label == "no verify pass" else passes["verify_id"] is not None
            # The shortcut's rows are the view's, column for column.
            assert _shortcut_rows(con, n, passes) == view, label
            # And so is the report state built on them.
            assert _state(con, n, passes, shortcut=True) == _state(con, n, passes, shortcut=False), label
            names, rows = view
            failing = {r[names.index("invocation_id")] for r in rows if r[names.index("failing")]}
            assert failing, label
            assert {r[names.index("change")] for r in rows} <= {"still", None}, label
            failing_by_night[label] = failing
        finally:
            con.close()
    # The severities took effect: the nights compare other sets of failing runs.
    assert failing_by_night["severities changed"] != failing_by_night["nothing changed"]


def test_a_nightly_that_recorded_a_new_pass_reads_the_view(archive, tmp_path):
    wh, out = tmp_path / "w.duckdb", tmp_path / "out"
    run_nightly(archive / "runs", out=out, warehouse=wh, sources=archive / "sources.yaml")
    (archive / "sources.yaml").write_text((archive / "sources.yaml").read_text(encoding="utf-8") + "# reviewed\n",
                                          encoding="utf-8")   # a new verify pass, the same lint pass
    night = run_nightly(archive / "runs", out=out, warehouse=wh, sources=archive / "sources.yaml")
    assert night.lint.kept and not night.verify.kept
    con = duckdb.connect(str(wh), read_only=True)
    try:
        passes = data._one(con, "nightly_passes", nightly=night.nightly_id)
    finally:
        con.close()
    assert not data.same_passes(passes)
    assert data.state_sql(passes) == data.state_sql(passes, shortcut=False)
