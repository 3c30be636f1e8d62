"""Saved investigations and views on the corpus warehouse, checked against the corpus files themselves.

Expected answers come from tests/fixtures/corpus: the run folders (envelope.json, spans.jsonl) and
expected.jsonl (the workbench's own verdicts), read here with a few lines of plain Python.
"""

from __future__ import annotations

import collections
import datetime as dt
import json
import shutil

import pytest

from groundwork.investigate import queries
from groundwork.investigate.session import run
from groundwork.core.warehouse import connect
from investigation_support import build_corpus_warehouse, gw
from reference.linter import grounded_on_values  # the docs/rules.md#grounded-references walk, independent of groundwork


@pytest.fixture(scope="module")
def corpus_path(tmp_path_factory, corpus_dir):
    return build_corpus_warehouse(tmp_path_factory.mktemp("corpus") / "corpus.duckdb", corpus_dir)


@pytest.fixture(scope="module")
def expected(corpus_dir):
    return [json.loads(line) for line in (corpus_dir / "expected.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def envelopes(corpus_dir):
    return {p.parent.name: json.loads(p.read_text(encoding="utf-8")) for p in (corpus_dir / "runs").glob("*/envelope.json")}


def saved(path, name, **params):
    """Run saved query ``name`` on the warehouse at ``path``; return rows as dicts."""
    q = queries.get(name)
    con = connect(path, read_only=True)
    try:
        result = run(con, q.sql, queries.bind(q, {k: str(v) for k, v in params.items()}))
        return [dict(zip(result.columns, row)) for batch in result.batches for row in batch]
    finally:
        con.close()


def test_runs_citing_source(corpus_path, envelopes):
    want = collections.Counter()
    for run_id, env in envelopes.items():
        for value in grounded_on_values(env.get("payload")):
            for ref in value if isinstance(value, list) else []:
                if isinstance(ref, dict) and ref.get("source_id") == "src:b" and isinstance(ref.get("content_hash"), str):
                    want[(run_id, "payload")] += 1
        for ev in env.get("evidence") or []:
            if ev.get("source_id") == "src:b":
                want[(run_id, "evidence")] += 1
    rows = saved(corpus_path, "runs_citing_source", source_id="src:b")
    assert {(r["invocation_id"], r["cited_in"]): r["citations"] for r in rows} == dict(want)
    assert len({r["invocation_id"] for r in rows}) == 10


def test_runs_citing_source_binds_hostile_text(corpus_path):
    assert saved(corpus_path, "runs_citing_source", source_id="src:b' OR '1'='1") == []


def test_agent_violation_rate(corpus_path, expected):
    runs, failed = collections.Counter(), collections.Counter()
    for e in expected:
        runs[e["agent_id"]] += 1
        failed[e["agent_id"]] += not (e["lint"]["passed"] and e["sources"]["passed"])
    rows = saved(corpus_path, "agent_violation_rate")
    assert {r["agent_id"]: (r["runs"], r["failed"]) for r in rows} == {a: (runs[a], failed[a]) for a in runs}
    rates = [r["violation_rate"] for r in rows]
    assert rates == sorted(rates, reverse=True)
    top = next(r for r in rows if r["agent_id"] == "fake.delegation")
    assert top["violation_rate"] == round(failed["fake.delegation"] / runs["fake.delegation"], 3)


def test_agent_violation_rate_date_range(corpus_path, expected):
    # Every corpus run completed on 2026-11-30.
    assert sum(r["runs"] for r in saved(corpus_path, "agent_violation_rate", since="2026-11-30", until="2026-12-01")) == len(expected)
    assert saved(corpus_path, "agent_violation_rate", since="2026-12-01") == []
    assert saved(corpus_path, "agent_violation_rate", until="2026-11-30") == []


def _spans(corpus_dir, run_id):
    lines = (corpus_dir / "runs" / run_id / "spans.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _t(text):
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_chats_before_any_retrieval_ended_and_near_misses(corpus_path, corpus_dir, expected, envelopes):
    want = set()
    for e in expected:
        for v in e["lint"]["violations"]:
            if v.startswith("G1: chat span "):
                want.add((e["invocation_id"], v.split()[3], "before"))
            elif v == "G1: a chat span exists but no retrieval span does":
                chats = [s for s in _spans(corpus_dir, e["invocation_id"]) if s["name"] == "chat"]
                want |= {(e["invocation_id"], s["context"]["span_id"][2:], "no retrieval") for s in chats}
    for run_id, env in envelopes.items():  # near misses: within 50 µs after the first retrieval ended
        if env.get("grounding_mode") != "retrieval":
            continue
        spans = _spans(corpus_dir, run_id)
        roots = [s["context"]["span_id"] for s in spans if s["name"] == "invoke_agent"]
        spans = [s for s in spans if s.get("parent_id") in roots]  # corpus trees are flat: the root's children
        ends = [_t(s["end_time"]) for s in spans if s["name"] == "retrieval"]
        for s in spans:
            if s["name"] == "chat" and ends and dt.timedelta(0) <= _t(s["start_time"]) - min(ends) < dt.timedelta(microseconds=50):
                want.add((run_id, s["context"]["span_id"][2:], "near miss"))
    rows = saved(corpus_path, "chat_before_retrieval", near_ms=0.05)
    assert {(r["invocation_id"], r["chat_span_id"], r["finding"]) for r in rows} == want
    assert sum(1 for *_, f in want if f == "near miss") >= 3 and sum(1 for *_, f in want if f == "before") >= 3


def _reason(violation):
    if violation.startswith("S1:"):
        return "no pinned copy holds this source id"
    if "unknown canonicalisation" in violation:
        return "unknown canonicalisation"
    return "the pinned record hashes differently"


def test_evidence_never_verified(corpus_path, expected):
    want = collections.Counter()
    for e in expected:
        for _ in e["sources"]["unresolved"]:
            want[(e["invocation_id"], "no pinned copy serves this snapshot_ref")] += 1
        for v in e["sources"]["violations"]:
            want[(e["invocation_id"], _reason(v))] += 1
    rows = saved(corpus_path, "evidence_never_verified")
    assert collections.Counter((r["invocation_id"], r["reason"]) for r in rows) == want
    only = saved(corpus_path, "evidence_never_verified", agent_id="fake.delegation")
    assert only and {r["agent_id"] for r in only} == {"fake.delegation"}


def test_no_corpus_run_recorded_as_passed_fails_today(corpus_path):
    assert saved(corpus_path, "passed_then_failing") == []


def test_a_run_edited_after_the_fact_is_recorded_passed_but_fails_today(tmp_path, corpus_dir):
    archive = tmp_path / "archive"
    shutil.copytree(corpus_dir / "runs", archive / "runs")
    shutil.copy(corpus_dir / "sources.yaml", archive / "sources.yaml")
    shutil.copytree(corpus_dir / "snapshots", archive / "snapshots")
    path = build_corpus_warehouse(tmp_path / "w.duckdb", archive)
    target = "01a22a33-c71c-7634-b9a4-2549192ec7ed"  # pass/retrieval/one-source
    envelope = archive / "runs" / target / "envelope.json"
    envelope.write_text(envelope.read_text(encoding="utf-8").replace('"grounding_mode": "retrieval"', '"grounding_mode": "telepathy"'),
                        encoding="utf-8")
    build_corpus_warehouse(path, archive)  # re-ingest (the edited run reloads), lint and verify again
    rows = saved(path, "passed_then_failing")
    assert [(r["invocation_id"], r["recorded_lint_status"], r["lint_status"], r["lint_codes"]) for r in rows] == [
        (target, "passed", "failed", "G0")]
    assert saved(path, "passed_then_failing", since="2026-12-01") == []
    con = connect(path, read_only=True)
    diff = con.execute("SELECT invocation_id, change, message, previous_status, status FROM latest_lint_diff WHERE change <> 'still_failing'").fetchall()
    still = con.execute("SELECT count(DISTINCT invocation_id) FROM latest_lint_diff WHERE change = 'still_failing'").fetchone()[0]
    con.close()
    assert diff == [(target, "new", "G0: envelope declares no valid grounding_mode ('telepathy')", "passed", "failed")]
    assert still == 53  # every run the workbench failed is still failing


def test_run_summary_today_and_recorded(corpus_path, expected):
    con = connect(corpus_path, read_only=True)
    rows = {r[0]: r[1:] for r in con.execute("""
        SELECT invocation_id, lint_status, verify_status, recorded_lint_status, recorded_verify_status,
               lint_matches_recorded, verify_matches_recorded, lint_violation_count FROM run_summary""").fetchall()}
    con.close()
    assert len(rows) == len(expected)
    for e in expected:
        lint = "passed" if e["lint"]["passed"] else "failed"
        sources = "passed" if e["sources"]["passed"] else "failed"
        assert rows[e["invocation_id"]] == (lint, sources, lint, sources, True, True, len(e["lint"]["violations"]))


def test_violation_messages_are_todays_exact_texts(corpus_path, expected):
    con = connect(corpus_path, read_only=True)
    got = collections.defaultdict(list)
    for run_id, kind, message in con.execute(
            "SELECT invocation_id, check_kind, message FROM violation_messages WHERE workbench_rule ORDER BY invocation_id, check_kind, seq").fetchall():
        got[(run_id, kind)].append(message)
    con.close()
    want = {}
    for e in expected:
        if e["lint"]["violations"]:
            want[(e["invocation_id"], "lint")] = e["lint"]["violations"]
        if e["sources"]["violations"]:
            want[(e["invocation_id"], "verify")] = e["sources"]["violations"]
    assert dict(got) == want


def test_span_tree_on_the_corpus(corpus_path):
    con = connect(corpus_path, read_only=True)
    # Every span record appears; only a run with two invoke_agent spans (one under the other) repeats one.
    counts = con.execute("""SELECT s.invocation_id, s.ord, count(t.ord) FROM spans s
                            LEFT JOIN span_tree t ON t.invocation_id = s.invocation_id AND t.ord = s.ord
                            GROUP BY ALL HAVING count(t.ord) <> 1""").fetchall()
    assert [(run, n) for run, _, n in counts] == [("01a22a33-c9fe-7594-9ec1-72ed57ad4c29", 2)]  # violation/G0/two-invoke_agent-spans
    orphan = con.execute("SELECT invocation_id, name FROM span_tree WHERE NOT in_tree").fetchall()
    assert ("01a22a33-ca55-7728-aca6-ff96d678a45e", "chat") in orphan  # violation/G0/span-not-descending-from-root
    assert con.execute("SELECT max(depth) FROM span_tree").fetchone()[0] >= 1
    con.close()


def test_sql_command_on_the_corpus(corpus_path, monkeypatch, capsys):
    code, out, _ = gw(monkeypatch, capsys, "sql", "SELECT count(*) AS runs FROM run_summary WHERE lint_status = 'failed'",
                      "-w", str(corpus_path), "-f", "csv")
    assert code == 0 and out == "runs\n53\n"  # expected.jsonl: 53 runs fail the linter
