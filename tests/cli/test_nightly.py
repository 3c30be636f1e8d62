"""`groundwork nightly` end to end on the bundled example archive (real-store form): exit codes,
where the reports are, exact per-run texts, idempotence, new / resolved between two nights."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from groundwork.cli import app
from ingest_support import EXAMPLE


PASSING_RETRIEVAL = "01a22a33-c71c-7634-b9a4-2549192ec7ed"   # pass/retrieval/one-source
FAILING_N1 = "01a22a33-cc8f-721d-9706-f81a30449b62"          # violation/N1/none-calls-a-model
FAILING_G1 = "01a22a33-cafe-72c8-86bb-eaf91827f3b1"          # violation/G1/chat-without-any-retrieval-abstained
COPY_ID = "01a22a33-ffff-7fff-8fff-ffffffffffff"


def tree_digest(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        h.update(str(p.relative_to(root)).encode())
        if p.is_file():
            h.update(p.read_bytes())
    return h.hexdigest()


def nightly(archive: Path, wh: Path, out: Path, sources: bool = True):
    args = ["nightly", str(archive / "runs"), "--warehouse", str(wh), "--out", str(out)]
    if sources:
        args += ["--sources", str(archive / "sources.yaml")]
    return CliRunner().invoke(app, args)


def summary(out: Path) -> dict:
    return json.loads((out / "summary.json").read_text(encoding="utf-8"))


def drop_spans(run: Path, name: str) -> None:
    lines = (run / "spans.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    kept = [x for x in lines if json.loads(x)["name"] != name]
    assert len(kept) < len(lines)
    (run / "spans.jsonl").write_text("".join(kept), encoding="utf-8")


@pytest.fixture(scope="module")
def first_night(tmp_path_factory):
    base = tmp_path_factory.mktemp("nightly")
    archive = base / "archive"
    shutil.copytree(EXAMPLE, archive)
    wh, out = base / "wh" / "warehouse.duckdb", base / "reports"
    before = tree_digest(archive)
    r1 = nightly(archive, wh, out)
    s1 = summary(out)
    per_run = [*out.glob("runs/*/*"), *out.glob("failing/*.html"), out / ".groundwork-manifest.json"]
    mtimes = {p: p.stat().st_mtime_ns for p in per_run}
    r2 = nightly(archive, wh, out)
    return {"archive": archive, "wh": wh, "out": out, "r1": r1, "r2": r2, "s1": s1, "s2": summary(out),
            "mtimes": mtimes, "archive_before": before}


def test_first_nightly_reports_new_failures_and_says_where_the_reports_are(first_night):
    r1, out, s1 = first_night["r1"], first_night["out"], first_night["s1"]
    assert r1.exit_code == 1, r1.output
    assert f"fleet report:  {out.resolve() / 'fleet.html'}" in r1.output
    t = s1["totals"]
    assert t["runs_total"] == 99 and t["runs_linted"] == 99 and t["has_baseline"] is False
    assert t["new_failing"] == t["runs_failing"] > 0
    for name in ("fleet.html", "summary.md", "summary.json", "junit.xml", "violations.jsonl",
                 "metrics/groundwork.prom", "failing/index.html", "failing/since-1.html"):
        assert (out / name).is_file(), name


def test_reports_are_never_written_into_the_archive(first_night):
    assert tree_digest(first_night["archive"]) == first_night["archive_before"]


def test_per_run_texts_match_what_the_workbench_recorded(first_night):
    """Today's grounding.txt of a run is OUT/runs/<id>/grounding.txt when it fails or one of its
    texts changed, else the archive's own file; for runs the conductor did not withhold, today's text is
    byte-identical to what the workbench recorded."""
    archive, out, s1 = first_night["archive"], first_night["out"], first_night["s1"]
    con = duckdb.connect(str(first_night["wh"]), read_only=True)
    withheld = {r[0] for r in con.execute("SELECT invocation_id FROM runs WHERE withheld").fetchall()}
    con.close()
    failing = {p.parent.name for p in out.glob("runs/*/index.html")}
    compared = written = 0
    for run in sorted((archive / "runs").iterdir()):
        if not run.is_dir() or run.name == "schemas":
            continue
        ours = out / "runs" / run.name / "grounding.txt"
        recorded = (run / "grounding.txt").read_bytes()
        if run.name in failing:
            assert ours.is_file(), run.name
        if ours.is_file():
            written += 1
            ours_s = out / "runs" / run.name / "sources.txt"
            assert (run.name in failing or ours.read_bytes() != recorded
                    or ours_s.read_bytes() != (run / "sources.txt").read_bytes()), run.name
        if run.name not in withheld:   # withheld: the stored envelope is not the one the workbench judged
            assert (ours.read_bytes() if ours.is_file() else recorded) == recorded, run.name
            compared += 1
    assert compared >= 50 and written >= s1["totals"]["runs_failing"]


def test_failing_runs_have_pages_and_passing_runs_do_not(first_night):
    out, s1 = first_night["out"], first_night["s1"]
    pages = {p.parent.name for p in out.glob("runs/*/index.html")}
    assert len(pages) == s1["totals"]["runs_failing"]
    assert PASSING_RETRIEVAL not in pages and FAILING_N1 in pages


def test_second_nightly_on_an_unchanged_archive_is_idempotent(first_night):
    r2, s1, s2, out = first_night["r2"], first_night["s1"], first_night["s2"], first_night["out"]
    assert r2.exit_code == 0, r2.output
    assert "0 new failing, 0 resolved" in r2.output
    t1, t2 = s1["totals"], s2["totals"]
    assert t2["new_failing"] == 0 and t2["resolved"] == 0 and t2["still_failing"] == t1["runs_failing"]
    assert {k: v for k, v in t2.items() if k not in ("new_failing", "still_failing", "has_baseline")} == \
           {k: v for k, v in t1.items() if k not in ("new_failing", "still_failing", "has_baseline")}
    # Nothing per run was rewritten: texts, run pages (they say since which nightly a run fails,
    # not new or still), failing-list pages, nor the manifest; tests/cli/test_nightly_incremental.py
    # checks every page against a fresh render.
    assert any(p.name == "index.html" for p in first_night["mtimes"]) and any(p.parent.name == "failing" for p in first_night["mtimes"])
    assert {p: p.stat().st_mtime_ns for p in first_night["mtimes"]} == first_night["mtimes"]
    assert sorted([*out.glob("runs/*/*"), *out.glob("failing/*.html")]) == sorted(p for p in first_night["mtimes"] if p.parent != out)
    con = duckdb.connect(str(first_night["wh"]), read_only=True)
    assert con.execute("SELECT exit_status FROM nightlies ORDER BY nightly_id").fetchall() == [(1,), (0,)]
    assert con.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 99
    con.close()
    assert s2["passes"]["ingest"]["runs_loaded"] == 0


def test_mutated_archive_new_and_resolved(first_night, tmp_path):
    archive = tmp_path / "archive"
    shutil.copytree(first_night["archive"], archive)
    wh = tmp_path / "warehouse.duckdb"
    shutil.copy(first_night["wh"], wh)
    out = tmp_path / "reports"
    shutil.copytree(first_night["out"], out)
    runs = archive / "runs"
    drop_spans(runs / PASSING_RETRIEVAL, "retrieval")   # passing -> G2/G3: new failing
    drop_spans(runs / FAILING_N1, "chat")               # N1 only -> passes: resolved
    shutil.copytree(runs / FAILING_G1, runs / COPY_ID)  # a new folder that fails: new
    r3 = nightly(archive, wh, out)
    assert r3.exit_code == 1, r3.output
    s3 = summary(out)
    new = {r["invocation_id"] for r in s3["since_previous_nightly"]["new"]}
    resolved = {r["invocation_id"] for r in s3["since_previous_nightly"]["resolved"]}
    assert new == {PASSING_RETRIEVAL, COPY_ID}
    assert resolved == {FAILING_N1}
    assert s3["totals"]["runs_failing"] == first_night["s2"]["totals"]["runs_failing"] + 1
    assert (out / "runs" / PASSING_RETRIEVAL / "index.html").exists()
    assert not (out / "runs" / FAILING_N1 / "index.html").exists()
    assert (out / "runs" / FAILING_N1 / "grounding.txt").read_text().startswith("grounding: passed [none]")
    assert "1 resolved" in r3.output
    # And a fourth night with nothing changed: nothing new.
    r4 = nightly(archive, wh, out)
    assert r4.exit_code == 0 and summary(out)["totals"]["still_failing"] == s3["totals"]["runs_failing"]
    prom = (out / "metrics" / "groundwork.prom").read_text()
    assert 'groundwork_runs_changed{change="new"} 0' in prom



def test_a_manual_lint_between_two_nightlies_changes_nothing_the_second_calls_new(first_night, tmp_path):
    """New / resolved / still failing compare a nightly with the previous finished nightly
    (nightly_changes), whatever ran in between: a `groundwork lint` that already saw tonight's
    changes changes neither the exit status nor the reports nor the recorded counts. The
    nightly then records no lint pass of its own: nothing changed since the manual one, which
    it names (checks.current), so lint_diff (between a run's two latest full lints) says the
    same either way."""
    archive = tmp_path / "archive"
    shutil.copytree(first_night["archive"], archive)
    runs = archive / "runs"
    drop_spans(runs / PASSING_RETRIEVAL, "retrieval")   # passing -> failing
    drop_spans(runs / FAILING_N1, "chat")               # failing -> passing
    nights = {}
    for manual in (False, True):
        wh, out = tmp_path / f"wh-{manual}.duckdb", tmp_path / f"reports-{manual}"
        shutil.copy(first_night["wh"], wh)
        if manual:
            ingested = CliRunner().invoke(app, ["ingest", str(runs), "--warehouse", str(wh)])
            linted = CliRunner().invoke(app, ["lint", "--warehouse", str(wh)])
            assert ingested.exit_code == 0 and linted.exit_code == 1, linted.output
        result = nightly(archive, wh, out)
        con = duckdb.connect(str(wh), read_only=True)
        changes = dict(con.execute("SELECT invocation_id, change FROM nightly_changes WHERE change IS NOT NULL "
                                   "AND nightly_id = (SELECT max(nightly_id) FROM nightlies)").fetchall())
        recorded = con.execute("SELECT new_failing, resolved, still_failing FROM nightlies "
                               "ORDER BY nightly_id DESC LIMIT 1").fetchall()
        diff = dict(con.execute("SELECT invocation_id, min(change) FROM lint_diff WHERE invocation_id IN (?, ?) "
                                "GROUP BY ALL", [PASSING_RETRIEVAL, FAILING_N1]).fetchall())
        passes = con.execute("SELECT (SELECT lint_id FROM nightlies ORDER BY nightly_id DESC LIMIT 1), "
                             "list(lint_id ORDER BY lint_id) FROM lints WHERE kind = 'lint'").fetchall()[0]
        con.close()
        s = summary(out)
        nights[manual] = (result.exit_code, changes, recorded, s["totals"], s["since_previous_nightly"], diff, passes)
    plain, with_lint = nights[False], nights[True]
    assert plain[0] == with_lint[0] == 1
    assert plain[1] == with_lint[1] and plain[1][PASSING_RETRIEVAL] == "new" and plain[1][FAILING_N1] == "resolved"
    assert plain[2] == with_lint[2] and plain[2][0][0] == sum(c == "new" for c in plain[1].values())
    assert plain[3] == with_lint[3] and plain[4] == with_lint[4]
    # The second nightly's lint pass: its own, or the manual lint's (nothing changed since).
    first_lint = plain[6][1][0]
    assert plain[6][1] == with_lint[6][1] == [first_lint, plain[6][0]] and with_lint[6][0] == plain[6][0]
    assert plain[5][PASSING_RETRIEVAL] == with_lint[5][PASSING_RETRIEVAL] == "new"


def test_without_sources_the_source_check_is_skipped(tmp_path):
    archive = tmp_path / "archive"
    shutil.copytree(EXAMPLE, archive)
    r = nightly(archive, tmp_path / "w.duckdb", tmp_path / "out", sources=False)
    assert r.exit_code == 1, r.output
    s = summary(tmp_path / "out")
    assert s["totals"]["has_verify"] is False and s["passes"]["verify"] is None
    assert not list((tmp_path / "out" / "runs").glob("*/sources.txt"))


@pytest.mark.parametrize("case", ["missing-runs-dir", "out-inside-archive", "out-holds-the-archive", "missing-sources",
                                  "out-is-a-file", "sources-not-a-sources-list", "sources-entry-lacks-a-key"])
def test_jobs_that_cannot_be_done_exit_2_with_one_line(tmp_path, case):
    runs = tmp_path / "runs"
    runs.mkdir()
    args = [str(runs), "--warehouse", str(tmp_path / "w.duckdb"), "--out", str(tmp_path / "out")]
    if case == "missing-runs-dir":
        args[0] = str(tmp_path / "nope")
    elif case == "out-inside-archive":
        args[4] = str(runs / "reports")
    elif case == "out-holds-the-archive":   # the run store: its runs/ would be the report's runs/
        args[4] = str(tmp_path)
        (runs / "run-1").mkdir()
        (runs / "run-1" / "grounding.txt").write_text("recorded\n")
    elif case == "out-is-a-file":
        (tmp_path / "file").write_text("x")
        args[4] = str(tmp_path / "file" / "reports")
    elif case == "sources-not-a-sources-list":
        (tmp_path / "x.csv").write_text("a,b\n")
        args += ["--sources", str(tmp_path / "x.csv")]
    elif case == "sources-entry-lacks-a-key":
        (tmp_path / "s.yaml").write_text("sources:\n  - {snapshot_refs: [a], path: r.jsonl, id_field: source_id}\n")
        args += ["--sources", str(tmp_path / "s.yaml")]
    else:
        args += ["--sources", str(tmp_path / "nope.yaml")]
    env = dict(os.environ, GROUNDWORK_DEBUG="")
    p = subprocess.run([sys.executable, "-c", "from groundwork.cli import main; main()", "nightly", *args],
                       capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 2
    assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert p.stderr.startswith("groundwork: error: ")
    assert not (runs / "reports").exists()
    # a job that cannot start creates nothing: no warehouse, no report folder
    assert not (tmp_path / "w.duckdb").exists() and not (tmp_path / "out").exists()
    if case.startswith("sources-"):
        assert p.stderr.startswith("groundwork: error: " + str(tmp_path)), p.stderr
    if case == "out-holds-the-archive":
        assert sorted(p.name for p in tmp_path.iterdir()) == ["runs"]
        assert sorted(p.name for p in (runs / "run-1").iterdir()) == ["grounding.txt"]
        assert "holds the archive" in p.stderr


def test_the_nightly_keeps_the_derived_relations_for_the_next_full_re_lint(first_night, tmp_path):
    from groundwork.checks.lint import lint_warehouse
    from groundwork.checks.store import keep_derived
    from groundwork.core.warehouse import connect

    wh = tmp_path / "warehouse.duckdb"
    shutil.copy(first_night["wh"], wh)
    con = connect(wh)
    try:
        assert keep_derived(con) == "fresh"  # built by the first night, nothing new since the second
        full = lint_warehouse(con, reuse=False, record=False)  # every rule on every run, from the store
        assert full.counts["failed"] + full.counts["unlintable"] == first_night["s2"]["totals"]["runs_failing"]
    finally:
        con.close()


@pytest.mark.parametrize("completed_at", ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00"])
def test_a_completion_time_outside_pythons_years_costs_no_report(tmp_path, completed_at):
    # Valid ISO 8601, but in UTC in year 0 or year 10000: stored, DuckDB handed it back as a
    # string and every nightly after ended in an internal error. completed_at is informational:
    # such a time is stored as unknown (NULL), as an unreadable one is.
    archive = tmp_path / "archive"
    shutil.copytree(EXAMPLE, archive)
    env_path = archive / "runs" / FAILING_N1 / "envelope.json"
    env = json.loads(env_path.read_text(encoding="utf-8"))
    env["completed_at"] = completed_at
    env_path.write_text(json.dumps(env, indent=2), encoding="utf-8")
    for _ in range(2):
        r = nightly(archive, tmp_path / "w.duckdb", tmp_path / "out")
        assert r.exit_code in (0, 1), r.output
    con = duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True)
    try:
        assert con.execute("SELECT completed_at FROM runs WHERE invocation_id = ?", [FAILING_N1]).fetchall() == [(None,)]
    finally:
        con.close()
    assert "  - N1: " in (tmp_path / "out" / "runs" / FAILING_N1 / "grounding.txt").read_text(encoding="utf-8")


@pytest.mark.parametrize("completed_at, every_run", [("9999-12-31T23:59:59Z", False), ("0001-01-01T00:00:00Z", True)])
def test_a_completion_time_at_the_edge_of_pythons_years_costs_no_report(tmp_path, completed_at, every_run):
    # Inside the years 1-9999, so stored as it is; but the fleet report's trend by completion
    # stepped one slot past 9999-12-31 (or started its window before 0001-01-01) and the
    # nightly ended in 'internal error: OverflowError: date value out of range'.
    archive = tmp_path / "archive"
    shutil.copytree(EXAMPLE, archive)
    names = [p.name for p in (archive / "runs").iterdir() if (p / "envelope.json").is_file()] if every_run else [FAILING_N1]
    for name in names:
        env_path = archive / "runs" / name / "envelope.json"
        env = json.loads(env_path.read_text(encoding="utf-8"))
        env["completed_at"] = completed_at
        env_path.write_text(json.dumps(env, indent=2), encoding="utf-8")
    r = nightly(archive, tmp_path / "w.duckdb", tmp_path / "out")
    assert r.exit_code == 1 and isinstance(r.exception, (SystemExit, type(None))), (r.output, r.exception)
    assert "  - N1: " in (tmp_path / "out" / "runs" / FAILING_N1 / "grounding.txt").read_text(encoding="utf-8")


@pytest.mark.parametrize("key, value", [("end_time", "9999-12-31T23:59:59.999999-01:00"), ("start_time", "0001-01-01T00:30:00+01:00")])
def test_a_span_time_outside_pythons_years_in_utc_costs_no_run_page(tmp_path, key, value):
    # Valid ISO 8601 that the workbench reads (datetime.fromisoformat, then .timestamp()), but in
    # UTC in year 10000 or year 0: DuckDB hands such a TIMESTAMP back as a string, and the run
    # page's timeline ended the nightly in 'internal error: TypeError: '<' not supported between
    # instances of 'datetime.datetime' and 'str''.
    archive = tmp_path / "archive"
    shutil.copytree(EXAMPLE, archive)
    spans_path = archive / "runs" / FAILING_N1 / "spans.jsonl"
    lines = spans_path.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first[key] = value
    lines[0] = json.dumps(first)
    spans_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    r = nightly(archive, tmp_path / "w.duckdb", tmp_path / "out")
    assert r.exit_code == 1 and isinstance(r.exception, (SystemExit, type(None))), (r.output, r.exception)
    assert (tmp_path / "out" / "runs" / FAILING_N1 / "grounding.txt").read_text(encoding="utf-8") == \
        "grounding: FAILED [none]\n  - N1: 1 chat span(s) in an agent that declared no model call\n"
    assert (tmp_path / "out" / "runs" / FAILING_N1 / "index.html").is_file()
