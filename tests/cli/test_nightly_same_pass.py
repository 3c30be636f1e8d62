"""A nightly with nothing changed records no new pass (groundwork.checks.current, issue 16 point 1).

When no ingest since the latest lint (verify) pass of every run changed a run, and the checks are
the same (rule files and templates, groundwork version, sources configuration), the nightly's
nightlies row names that pass: no verdict row is copied, and compared with a baseline that names
the same pass the nightly finds nothing new and everything still failing. Any change to what the
verdicts depend on records a new pass again: a run added, edited or gone, another sources.yaml, a
changed message template; and so does a pass recorded in between under other checks (the pass
latest_lint / latest_verify read would otherwise not be the nightly's).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from groundwork.checks import current, rules as rules_mod
from groundwork.checks.lint import lint_warehouse
from groundwork.checks.verify import verify_warehouse
from groundwork.core.warehouse import connect
from groundwork.jobs.nightly import run_nightly
from ingest_support import EXAMPLE


def _rows(wh: Path, sql: str, params=None) -> list[tuple]:
    con = duckdb.connect(str(wh), read_only=True)
    try:
        return con.execute(sql, params).fetchall()
    finally:
        con.close()


def _history(wh: Path) -> dict:
    """Counts of every history table, and the passes of the latest nightly."""
    counts = _rows(wh, "SELECT (SELECT count(*) FROM lints), (SELECT count(*) FROM lint_verdicts), "
                       "(SELECT count(*) FROM lint_violations), (SELECT count(*) FROM verify_verdicts), "
                       "(SELECT count(*) FROM verify_unresolved)")[0]
    night = _rows(wh, "SELECT lint_id, verify_id, new_failing, resolved, still_failing, runs_failing, exit_status "
                      "FROM nightlies ORDER BY nightly_id DESC LIMIT 1")[0]
    return {"tables": counts, "lint": night[0], "verify": night[1], "new": night[2], "resolved": night[3],
            "still": night[4], "failing": night[5], "exit": night[6]}


def _complete(wh: Path, lint_id: int, table: str) -> bool:
    """The pass holds a verdict of every run of the warehouse (the contract readers rely on)."""
    judged, runs = _rows(wh, f"SELECT (SELECT count(*) FROM {table} WHERE lint_id = $id), "
                             "(SELECT count(*) FROM runs)", {"id": lint_id})[0]
    return judged == runs


@pytest.fixture()
def archive(tmp_path) -> Path:
    root = tmp_path / "archive"
    shutil.copytree(EXAMPLE, root)
    return root


def _night(archive: Path, wh: Path, out: Path, sources: Path | None = None):
    return run_nightly(archive / "runs", out=out, warehouse=wh, sources=sources or archive / "sources.yaml")


def test_nothing_changed_names_the_same_passes_and_finds_nothing_new(archive, tmp_path):
    wh, out = tmp_path / "w.duckdb", tmp_path / "out"
    first = _night(archive, wh, out)
    assert not first.lint.kept and not first.verify.kept
    h1 = _history(wh)
    second = _night(archive, wh, out)
    h2 = _history(wh)
    assert second.lint.kept and second.verify.kept
    assert (h2["lint"], h2["verify"]) == (h1["lint"], h1["verify"]) == (first.lint.lint_id, first.verify.lint_id)
    assert h2["tables"] == h1["tables"], "no verdict row was copied"
    # Compared with a baseline naming the same passes: nothing new, nothing resolved, all still failing.
    assert second.exit_status == 0 and h1["failing"] > 0
    assert (h2["new"], h2["resolved"], h2["still"], h2["failing"]) == (0, 0, h1["failing"], h1["failing"])
    changes = dict(_rows(wh, "SELECT change, count(*) FROM nightly_changes WHERE nightly_id = 2 AND change IS NOT NULL "
                             "GROUP BY ALL"))
    assert changes == {"still": h1["failing"]}
    # The kept results count as the pass they name.
    assert second.lint.counts == first.lint.counts and second.lint.findings_count == first.lint.findings_count
    assert second.verify.totals_line() == first.verify.totals_line()


def test_each_change_the_verdicts_depend_on_records_a_new_pass(archive, tmp_path, monkeypatch):
    wh, out = tmp_path / "w.duckdb", tmp_path / "out"
    first = _night(archive, wh, out)
    lint0, verify0 = first.lint.lint_id, first.verify.lint_id

    # Another sources.yaml (other bytes): a new verify pass; the lint pass still holds.
    sources = archive / "sources.yaml"
    sources.write_text(sources.read_text(encoding="utf-8") + "# reviewed\n", encoding="utf-8")
    night = _night(archive, wh, out)
    assert night.lint.kept and night.lint.lint_id == lint0
    assert not night.verify.kept and night.verify.lint_id > verify0 and _complete(wh, night.verify.lint_id, "verify_verdicts")
    verify1 = night.verify.lint_id

    # A changed message template: a new lint pass; the verify pass still holds.
    templates = tmp_path / "templates"
    shutil.copytree(rules_mod.TEMPLATES_DIR, templates)
    n1 = templates / "messages" / "N1.txt.j2"
    n1.write_text(n1.read_text(encoding="utf-8") + "{# reworded #}\n", encoding="utf-8")
    monkeypatch.setattr(rules_mod, "TEMPLATES_DIR", templates)
    night = _night(archive, wh, out)
    assert not night.lint.kept and night.lint.lint_id > verify1 and _complete(wh, night.lint.lint_id, "lint_verdicts")
    assert night.verify.kept and night.verify.lint_id == verify1
    lint1 = night.lint.lint_id
    night = _night(archive, wh, out)
    assert (night.lint.lint_id, night.verify.lint_id) == (lint1, verify1)

    # A pass with some rules only does not count; one of every run under other rules does.
    con = connect(wh)
    try:
        lint_warehouse(con, codes=["N1"])
    finally:
        con.close()
    assert _night(archive, wh, out).lint.lint_id == lint1
    monkeypatch.undo()
    con = connect(wh)
    try:
        other = lint_warehouse(con).lint_id   # the original templates: another rule set
    finally:
        con.close()
    monkeypatch.setattr(rules_mod, "TEMPLATES_DIR", templates)
    night = _night(archive, wh, out)
    assert not night.lint.kept and night.lint.lint_id > other
    assert _rows(wh, "SELECT DISTINCT lint_id FROM latest_lint") == [(night.lint.lint_id,)]

    # A verify pass under another sources.yaml in between: latest_verify would name it, so the
    # nightly records its own.
    other_sources = tmp_path / "other-sources.yaml"
    other_sources.write_text(sources.read_text(encoding="utf-8") + "# other\n", encoding="utf-8")
    shutil.copytree(archive / "snapshots", tmp_path / "snapshots")
    con = connect(wh)
    try:
        verify_warehouse(con, other_sources)
    finally:
        con.close()
    night = _night(archive, wh, out)
    assert night.lint.kept and not night.verify.kept
    assert _rows(wh, "SELECT DISTINCT lint_id FROM latest_verify") == [(night.verify.lint_id,)]


def test_a_run_gone_missing_records_a_new_pass_that_judges_its_parent_again(archive, tmp_path):
    """Marking a run missing reloads nothing, yet its delegating run's GW4 finding changes: the
    ingest counts the flip (ingests.runs_changed), so no pass is kept."""
    wh, out = tmp_path / "w.duckdb", tmp_path / "out"
    _night(archive, wh, out)
    parent, child = _rows(wh, "SELECT d.invocation_id, d.delegated_invocation_id FROM delegations d "
                              "JOIN runs c ON c.invocation_id = d.delegated_invocation_id "
                              "WHERE NOT coalesce(c.missing, false) ORDER BY ALL LIMIT 1")[0]
    gw4 = "SELECT count(*) FROM lint_violations WHERE lint_id = $id AND invocation_id = $run AND code = 'GW4'"
    kept = _night(archive, wh, out)
    assert kept.lint.kept
    assert _rows(wh, gw4, {"id": kept.lint.lint_id, "run": parent}) == [(0,)]
    shutil.rmtree(archive / "runs" / child)
    night = _night(archive, wh, out)
    assert _rows(wh, "SELECT runs_loaded, runs_changed FROM ingests ORDER BY ingest_id DESC LIMIT 1") == [(0, 1)]
    assert not night.lint.kept and not night.verify.kept
    assert _rows(wh, gw4, {"id": night.lint.lint_id, "run": parent}) == [(1,)]


def test_what_an_ingest_changed_decides_whether_a_pass_still_holds(archive, tmp_path):
    wh = tmp_path / "w.duckdb"
    con = connect(wh)
    try:
        from groundwork.ingest import ingest_archive
        ingest_archive(con, archive / "runs")
        fresh = lint_warehouse(con, same_pass=True)
        pass_id = fresh.lint_id
        kept = lint_warehouse(con, same_pass=True)
        assert kept.kept and kept.lint_id == pass_id and not fresh.kept
        assert [v.report() for v in kept.verdicts] == [v.report() for v in fresh.verdicts]
        assert [v.report() for v in kept.not_passed()] == [v.report() for v in fresh.not_passed()]
        assert (kept.counts, kept.findings_count, kept.exit_code) == (fresh.counts, fresh.findings_count, fresh.exit_code)
        assert not lint_warehouse(con).kept   # without same_pass: a pass recorded
        checked = verify_warehouse(con, archive / "sources.yaml", reuse=True, same_pass=True)
        again = verify_warehouse(con, archive / "sources.yaml", reuse=True, same_pass=True)
        assert again.kept and again.lint_id == checked.lint_id and not checked.kept
        assert [v.as_json() for v in again.runs] == [v.as_json() for v in checked.runs]
        assert [v.text for v in again.runs] == [v.text for v in checked.runs]
        assert again.totals_line() == checked.totals_line()
        pass_id = lint_warehouse(con, same_pass=True).lint_id
        ruleset = con.execute("SELECT ruleset_hash, tool_version FROM lints WHERE lint_id = $id", {"id": pass_id}).fetchall()[0]
        assert current.current_pass(con, "lint", *ruleset) == pass_id
        ingest_archive(con, archive / "runs")                       # nothing changed
        assert current.current_pass(con, "lint", *ruleset) == pass_id
        assert current.current_pass(con, "lint", "another rule set", ruleset[1]) is None
        assert current.current_pass(con, "verify", *ruleset) is None
        # An ingest that did not finish may have changed runs.
        con.execute("INSERT INTO ingests (ingest_id, runs_dir, started_at) "
                    "SELECT max(ingest_id) + 1, 'x', now() FROM ingests")
        assert current.current_pass(con, "lint", *ruleset) is None
        read_after = con.execute("SELECT ingest_id FROM lints WHERE lint_id = $id", {"id": pass_id}).fetchall()[0][0]
        assert current.runs_changed_since(con, read_after) and current.runs_changed_since(con, None)
    finally:
        con.close()


def test_the_watchs_ingest_counts_the_runs_it_changed(archive, tmp_path):
    """ingest_runs (the watch's batches) records runs_changed too: a run reloaded or back from
    missing is a change, an unchanged one is not."""
    from groundwork.ingest import ingest_archive
    from groundwork.ingest.load import ingest_runs

    runs = archive / "runs"
    con = connect(tmp_path / "w.duckdb")
    try:
        ingest_archive(con, runs)
        names = sorted(p.name for p in runs.iterdir() if p.is_dir() and p.name != "schemas")[:2]
        changed = "SELECT runs_loaded, runs_changed FROM ingests ORDER BY ingest_id DESC LIMIT 1"
        ingest_runs(con, runs, names)
        assert con.execute(changed).fetchall() == [(0, 0)]
        con.execute("UPDATE runs SET missing = true WHERE invocation_id = $r", {"r": names[0]})
        ingest_runs(con, runs, names)                  # back from missing, not reloaded
        assert con.execute(changed).fetchall() == [(0, 1)]
        (runs / names[1] / "grounding.txt").write_text("grounding: passed (mode=none, 0 retrieval spans, 0 chat spans)\n",
                                                       encoding="utf-8")
        ingest_runs(con, runs, names)
        assert con.execute(changed).fetchall() == [(1, 1)]
    finally:
        con.close()
