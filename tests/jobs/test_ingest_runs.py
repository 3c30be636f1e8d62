"""ingest_runs: only the given run folders, loaded exactly as ingest_archive loads them."""

from __future__ import annotations

import shutil

from groundwork.ingest.load import ingest_runs
from ingest_support import CORPUS_RUNS, ORDERED_TABLES, fresh_con, ingest, snapshot
from watch_support import corpus_ids

RUN_TABLES = ("runs", "spans", "payload_refs", "evidence", "delegations", "run_files")


def _run_rows(con) -> dict:
    """The per-run tables (and the runs' issues) of a snapshot."""
    snap = snapshot(con)
    out = {t: snap[t] for t in RUN_TABLES}
    out["ingest_issues"] = [r for r in snap["ingest_issues"] if r[0] is not None]
    return out


def test_the_given_runs_get_the_rows_a_whole_ingest_gives_them_and_nothing_else(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    ids = corpus_ids()[:12]
    for inv in ids:
        shutil.copytree(CORPUS_RUNS / inv, runs / inv)
    (runs / ids[3] / "spans.jsonl").unlink()  # a run with an ingest issue
    shutil.copy(CORPUS_RUNS / "invocations.jsonl", runs / "invocations.jsonl")
    some = ids[:5]

    whole, _ = ingest(runs)
    con = fresh_con()
    result = ingest_runs(con, runs, some)
    assert (result.folders_seen, result.runs_loaded, result.runs_unchanged, result.runs_rejected) == (5, 5, 0, 0)
    assert con.execute("SELECT count(*) FROM invocation_index").fetchone() == (0,)  # archive level: untouched
    assert con.execute("SELECT finished_at IS NOT NULL, runs_loaded FROM ingests").fetchall() == [(True, 5)]
    partial = _run_rows(con)
    full = _run_rows(whole)
    for table, got in partial.items():
        assert ORDERED_TABLES[table].startswith("invocation_id")
        assert got == [r for r in full[table] if r[0] in some], table
    assert partial["ingest_issues"]  # the run without spans.jsonl

    again = ingest_runs(con, runs, some)
    assert (again.runs_loaded, again.runs_unchanged) == (0, 5)
    (runs / ids[0] / "grounding.txt").write_text("grounding: edited\n", encoding="utf-8")
    edited = ingest_runs(con, runs, [ids[0], ids[5]])
    assert (edited.runs_loaded, edited.runs_unchanged) == (2, 0)
    assert con.execute("SELECT recorded_grounding FROM runs WHERE invocation_id = ?", [ids[0]]).fetchone() == ("grounding: edited\n",)
    assert con.execute("SELECT count(*) FROM runs").fetchone() == (6,)
