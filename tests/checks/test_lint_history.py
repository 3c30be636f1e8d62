"""Lint history: append-only passes, today's verdict, what changed since the previous lint."""

from __future__ import annotations

import json
import shutil

import groundwork.ingest as ingest
from groundwork.checks.lint import lint_warehouse
from groundwork.core.paths import RULES_DIR
from groundwork.core.warehouse import connect
from ingest_support import CORPUS

EXPECTED = {d["scenario"]: d for d in map(json.loads, (CORPUS / "expected.jsonl").read_text(encoding="utf-8").splitlines())}
PASSING = EXPECTED["pass/none/record"]
N1 = EXPECTED["violation/N1/none-calls-a-model"]
R3 = EXPECTED["violation/R3/input_only-no-evidence"]


def test_history_is_appended_and_lint_diff_says_what_changed(tmp_path):
    runs = tmp_path / "runs"
    for d in (PASSING, N1, R3):
        shutil.copytree(CORPUS / "runs" / d["invocation_id"], runs / d["invocation_id"])
    con = connect(tmp_path / "w.duckdb")
    ingest.ingest_archive(con, runs)
    first = lint_warehouse(con)

    # Fix the N1 run (drop its chat spans), break the passing run (declare another mode), keep R3.
    spans = runs / N1["invocation_id"] / "spans.jsonl"
    spans.write_text("".join(line + "\n" for line in spans.read_text().splitlines() if '"name": "chat"' not in line))
    envelope = runs / PASSING["invocation_id"] / "envelope.json"
    envelope.write_text(envelope.read_text().replace('"grounding_mode": "none"', '"grounding_mode": "input_only"', 1))
    ingest.ingest_archive(con, runs)
    second = lint_warehouse(con)
    assert second.lint_id == first.lint_id + 1

    diff = con.execute("SELECT invocation_id, change, code, message, lint_id, previous_lint_id, status, previous_status "
                       "FROM lint_diff ORDER BY invocation_id, change").fetchall()
    assert (N1["invocation_id"], "resolved", "N1", N1["lint"]["violations"][0], second.lint_id, first.lint_id,
            "passed", "failed") in diff
    assert (R3["invocation_id"], "still_failing", "R3", R3["lint"]["violations"][0], second.lint_id, first.lint_id,
            "failed", "failed") in diff
    new = [row for row in diff if row[1] == "new"]
    assert [row[0] for row in new] == [PASSING["invocation_id"]]
    assert new[0][3] == "G0: envelope declares grounding_mode 'input_only' but the root span carries 'none'"
    assert len(diff) == 3

    # Append-only: the first pass's verdicts (passes too) are still there, unchanged.
    kept = con.execute("SELECT invocation_id, status FROM lint_verdicts WHERE lint_id = ? ORDER BY 1", [first.lint_id]).fetchall()
    assert kept == sorted([(PASSING["invocation_id"], "passed"), (N1["invocation_id"], "failed"), (R3["invocation_id"], "failed")])
    latest = dict(con.execute("SELECT invocation_id, lint_id FROM latest_lint").fetchall())
    assert set(latest.values()) == {second.lint_id}
    con.close()


def test_a_rule_subset_pass_is_recorded_but_is_not_todays_verdict(tmp_path):
    runs = tmp_path / "runs"
    shutil.copytree(CORPUS / "runs" / N1["invocation_id"], runs / N1["invocation_id"])
    con = connect(":memory:")
    ingest.ingest_archive(con, runs)
    full = lint_warehouse(con)
    partial = lint_warehouse(con, codes=["G1"])
    assert partial.verdicts[0].passed and not full.verdicts[0].passed
    flags = dict(con.execute("SELECT lint_id, all_rules FROM lints").fetchall())
    assert flags == {full.lint_id: True, partial.lint_id: False}
    assert con.execute("SELECT lint_id, status FROM latest_lint").fetchall() == [(full.lint_id, "failed")]
    assert con.execute("SELECT count(*) FROM lint_diff WHERE change <> 'new'").fetchone()[0] == 0


def test_record_false_leaves_the_history_alone():
    con = connect(":memory:")
    ingest.ingest_archive(con, CORPUS / "runs")
    lint_warehouse(con, record=False)
    assert con.execute("SELECT (SELECT count(*) FROM lints) + (SELECT count(*) FROM lint_verdicts)").fetchone()[0] == 0
    assert con.execute("SELECT count(*) FROM duckdb_tables() WHERE temporary").fetchone()[0] == 0


def _rows(con, lint_id):
    return con.execute("SELECT invocation_id, status, mode, retrieval_count, chat_count, summary, reason "
                       "FROM lint_verdicts WHERE lint_id = ? ORDER BY 1", [lint_id]).fetchall()


def _messages(con, lint_id):
    return con.execute("SELECT invocation_id, seq, code, message FROM lint_violations WHERE lint_id = ? ORDER BY 1, 2",
                       [lint_id]).fetchall()


def test_relint_reuses_verdicts_of_unchanged_runs_and_gives_the_same_answer(tmp_path):
    con = connect(":memory:")
    ingest.ingest_archive(con, CORPUS / "runs")
    first = lint_warehouse(con)
    second = lint_warehouse(con)
    assert second.reused == 99
    assert (second.counts, second.exit_code, second.findings_count) == (first.counts, first.exit_code, first.findings_count)
    assert [v.report() | {"summary": v.summary} for v in second.verdicts] == \
        [v.report() | {"summary": v.summary} for v in first.verdicts]
    assert _rows(con, second.lint_id) == _rows(con, first.lint_id)
    assert _messages(con, second.lint_id) == _messages(con, first.lint_id)
    sources = dict(con.execute("SELECT reused_from, count(*) FROM lint_verdicts WHERE lint_id = ? GROUP BY 1",
                               [second.lint_id]).fetchall())
    assert sources == {first.lint_id: 99}

    third = lint_warehouse(con, reuse=False)
    assert third.reused == 0 and _rows(con, third.lint_id) == _rows(con, first.lint_id)


def test_a_relint_after_many_passes_over_a_few_runs_reuses_every_unchanged_verdict():
    """The watch lints a few runs per pass; a full lint after any number of such passes still
    judges no unchanged run again: each run's latest verdict counts, whatever pass made it."""
    con = connect(":memory:")
    ingest.ingest_archive(con, CORPUS / "runs")
    first = lint_warehouse(con)
    ids = sorted(v.invocation_id for v in first.verdicts)
    for i in range(5):
        lint_warehouse(con, runs=ids[2 * i:2 * i + 2])
    again = lint_warehouse(con)
    assert again.reused == 99 and again.fresh == []
    assert _rows(con, again.lint_id) == _rows(con, first.lint_id)
    assert _messages(con, again.lint_id) == _messages(con, first.lint_id)
    flags = con.execute("SELECT all_runs FROM lints ORDER BY lint_id").fetchall()
    assert flags == [(True,)] + [(False,)] * 5 + [(True,)]


def test_changed_rules_are_never_answered_from_old_verdicts(tmp_path):
    con = connect(":memory:")
    ingest.ingest_archive(con, CORPUS / "runs")
    lint_warehouse(con)
    rules_dir = tmp_path / "rules"
    shutil.copytree(RULES_DIR, rules_dir)
    g1 = rules_dir / "G1.sql"
    g1.write_text(g1.read_text(encoding="utf-8") + "\n-- edited\n", encoding="utf-8")
    again = lint_warehouse(con, rules_dir=rules_dir)
    assert again.reused == 0
    assert again.ruleset_hash != con.execute("SELECT ruleset_hash FROM lints WHERE lint_id = 1").fetchall()[0][0]


def test_a_delegating_run_is_relinted_when_its_child_changes(tmp_path):
    parent = EXPECTED["pass/delegation/one-child"]
    child = EXPECTED["pass/delegation/one-child/child"]
    runs = tmp_path / "runs"
    for d in (parent, child):
        shutil.copytree(CORPUS / "runs" / d["invocation_id"], runs / d["invocation_id"])
    con = connect(":memory:")
    ingest.ingest_archive(con, runs)
    first = lint_warehouse(con)
    assert first.findings_count == 0
    shutil.rmtree(runs / child["invocation_id"])  # the child's folder disappears from the archive
    ingest.ingest_archive(con, runs)
    second = lint_warehouse(con)
    assert second.reused == 1  # the child itself (kept, marked missing) is unchanged
    verdict = second.by_id()[parent["invocation_id"]]
    assert verdict.passed  # findings never change the workbench verdict
    assert verdict.findings == [("GW4", f"GW4: delegated child run '{child['invocation_id']}' is missing from the archive (its folder is gone)")]


def test_a_pass_over_a_few_runs_relints_a_delegating_run_whose_child_changed(tmp_path):
    # A pass over named runs (a watch batch, `lint RUN...`) compares only their children's state
    # (lint._CONTEXT_OF): the parent's verdict is reused while its child is as it was, and judged
    # again, with the finding, once the child's folder is gone.
    parent = EXPECTED["pass/delegation/one-child"]
    child = EXPECTED["pass/delegation/one-child/child"]
    runs = tmp_path / "runs"
    for d in (parent, child, PASSING):
        shutil.copytree(CORPUS / "runs" / d["invocation_id"], runs / d["invocation_id"])
    con = connect(":memory:")
    ingest.ingest_archive(con, runs)
    lint_warehouse(con)
    same = lint_warehouse(con, runs=[parent["invocation_id"], PASSING["invocation_id"]])
    assert same.reused == 2 and same.fresh == []
    shutil.rmtree(runs / child["invocation_id"])
    ingest.ingest_archive(con, runs)
    again = lint_warehouse(con, runs=[parent["invocation_id"], PASSING["invocation_id"]])
    assert again.reused == 1 and [v.invocation_id for v in again.fresh] == [parent["invocation_id"]]
    verdict = again.by_id()[parent["invocation_id"]]
    assert verdict.passed
    assert verdict.findings == [("GW4", f"GW4: delegated child run '{child['invocation_id']}' is missing from the archive (its folder is gone)")]
    stored = con.execute("SELECT v.context_key FROM lint_verdicts v WHERE v.lint_id = ? AND v.invocation_id = ?",
                         [again.lint_id, parent["invocation_id"]]).fetchall()
    assert stored == con.execute("SELECT context_key FROM lint_context WHERE invocation_id = ?",
                                 [parent["invocation_id"]]).fetchall()


def test_a_pass_over_new_runs_judges_them_and_the_next_pass_reuses_their_verdicts(tmp_path):
    # A watch batch names runs loaded after every earlier pass: they have no verdict to reuse (the
    # pass does not look one up). Once judged, a pass over them (with a run judged earlier)
    # reuses every verdict: the pass that judged them read the runs as that ingest left them.
    runs = tmp_path / "runs"
    for d in (PASSING, N1):
        shutil.copytree(CORPUS / "runs" / d["invocation_id"], runs / d["invocation_id"])
    con = connect(":memory:")
    ingest.ingest_archive(con, runs)
    lint_warehouse(con)
    shutil.copytree(CORPUS / "runs" / R3["invocation_id"], runs / R3["invocation_id"])
    ingest.ingest_archive(con, runs)
    new = lint_warehouse(con, runs=[R3["invocation_id"]])
    assert new.reused == 0 and [v.invocation_id for v in new.fresh] == [R3["invocation_id"]]
    assert new.by_id()[R3["invocation_id"]].violations == R3["lint"]["violations"]
    alone = lint_warehouse(con, runs=[R3["invocation_id"]])
    assert alone.reused == 1 and alone.fresh == []
    again = lint_warehouse(con, runs=[R3["invocation_id"], N1["invocation_id"]])
    assert again.reused == 2 and again.fresh == []
    assert again.by_id()[R3["invocation_id"]].violations == R3["lint"]["violations"]
    assert again.by_id()[N1["invocation_id"]].violations == N1["lint"]["violations"]
