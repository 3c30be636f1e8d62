"""Fidelity: every corpus run gives exactly the workbench's verdict — violations, order, text.

tests/fixtures/corpus holds real workbench runs with the workbench's own lint results
(expected.jsonl). Its envelope.json is the envelope the linter judged; the "real archive" variant
(envelope.withheld.json in its place, as a run store keeps it) checks recorded_drift.
"""

from __future__ import annotations

import json
import shutil

import pytest

import groundwork.ingest as ingest
from groundwork.checks import rules
from groundwork.checks.lint import lint_warehouse
from groundwork.core.warehouse import connect

from ingest_support import CORPUS

EXPECTED = {d["invocation_id"]: d for d in map(json.loads, (CORPUS / "expected.jsonl").read_text(encoding="utf-8").splitlines())}


@pytest.fixture(scope="module")
def corpus_lint():
    con = connect(":memory:")
    ingest.ingest_archive(con, CORPUS / "runs")
    result = lint_warehouse(con)
    yield con, result
    con.close()


def test_every_corpus_run_is_linted(corpus_lint):
    _, result = corpus_lint
    assert sorted(v.invocation_id for v in result.verdicts) == sorted(EXPECTED)


@pytest.mark.parametrize("invocation_id", sorted(EXPECTED), ids=lambda i: EXPECTED[i]["scenario"])
def test_corpus_run_matches_the_workbench(corpus_lint, invocation_id):
    _, result = corpus_lint
    verdict = result.by_id()[invocation_id]
    want = EXPECTED[invocation_id]
    report = verdict.report()
    assert {k: report[k] for k in ("passed", "mode", "violations", "retrieval_count", "chat_count")} == \
        {k: want["lint"][k] for k in ("passed", "mode", "violations", "retrieval_count", "chat_count")}
    assert verdict.codes == want["lint"]["codes"]
    assert verdict.grounding_txt == want["grounding_txt"]
    assert verdict.findings == []
    if want["mode"] in rules.MODE_RULES:  # a step-8 code only ever fires in a mode that applies it
        assert {c for c in verdict.codes if c in rules.STEP8_ORDER} <= set(rules.MODE_RULES[want["mode"]])


def test_history_records_every_verdict_and_violation(corpus_lint):
    con, result = corpus_lint
    lint_id = result.lint_id
    rows = con.execute("SELECT invocation_id, status, summary FROM lint_verdicts WHERE lint_id = ? ORDER BY 1", [lint_id]).fetchall()
    assert [(i, "passed" if EXPECTED[i]["lint"]["passed"] else "failed", EXPECTED[i]["lint"]["summary"]) for i in sorted(EXPECTED)] == rows
    messages = con.execute("SELECT invocation_id, list(message ORDER BY seq) FROM lint_violations WHERE lint_id = ? GROUP BY 1",
                           [lint_id]).fetchall()
    assert dict(messages) == {i: d["lint"]["violations"] for i, d in EXPECTED.items() if d["lint"]["violations"]}
    kind, all_rules, checked, failed = con.execute(
        "SELECT kind, all_rules, runs_checked, runs_failed FROM lints WHERE lint_id = ?", [lint_id]).fetchone()
    assert (kind, all_rules, checked) == ("lint", True, 99)
    assert failed == sum(not d["lint"]["passed"] for d in EXPECTED.values())


def test_recorded_grounding_agrees_with_todays_verdict(corpus_lint):
    con, _ = corpus_lint
    assert con.execute("SELECT count(*) FROM recorded_drift").fetchone()[0] == 0


def test_real_archive_drift_is_explained_by_withholding(tmp_path):
    runs = tmp_path / "runs"
    shutil.copytree(CORPUS / "runs", runs)
    for withheld in runs.glob("*/envelope.withheld.json"):
        withheld.replace(withheld.with_name("envelope.json"))
    con = connect(":memory:")
    ingest.ingest_archive(con, runs)
    lint_warehouse(con)
    drift = dict(con.execute("SELECT invocation_id, drift FROM recorded_drift").fetchall())
    con.close()
    assert drift, "withheld runs lose payload/evidence violations when re-linted from the stored files"
    assert set(drift.values()) == {"withheld"}
    assert all(EXPECTED[i]["withheld_by_conductor"] for i in drift)


def test_drift_classes_for_older_rules_and_for_a_recorded_pass(tmp_path):
    by_scenario = {d["scenario"]: i for i, d in EXPECTED.items()}
    e1 = by_scenario["violation/E1/content-altered-hash-kept"]
    n1 = by_scenario["violation/N1/none-calls-a-model"]
    runs = tmp_path / "runs"
    for i in (e1, n1):
        shutil.copytree(CORPUS / "runs" / i, runs / i)
    # A workbench before E1 existed passed the E1 run; someone's copy recorded a pass for N1.
    (runs / e1 / "grounding.txt").write_text("grounding: passed [retrieval] (1 retrieval, 0 chat spans)\n", encoding="utf-8")
    (runs / n1 / "grounding.txt").write_text("grounding: passed [none] (0 retrieval, 1 chat spans)\n", encoding="utf-8")
    con = connect(":memory:")
    ingest.ingest_archive(con, runs)
    lint_warehouse(con)
    drift = con.execute("SELECT invocation_id, drift, today_grounding FROM recorded_drift ORDER BY 1").fetchall()
    con.close()
    assert drift == sorted([(e1, "rules_changed", EXPECTED[e1]["grounding_txt"]),
                            (n1, "recorded_pass_fails_today", EXPECTED[n1]["grounding_txt"])])
