"""Build warehouse rows directly (runs, spans, evidence, lint/verify history) for report tests.

Report tests need exact control over verdicts and hostile strings without going through ingest
and the rules; every row here is what the warehouse contract (sql/schema/10_tables.sql) says ingest and the
passes write.
"""

from __future__ import annotations

import datetime as dt

T0 = dt.datetime(2026, 11, 20, 10, 0, 0)


def add_run(con, inv, *, agent="fake.retrieval", mode="retrieval", completed=T0, ingest_id=1,
            withheld=False, recorded_grounding=None, recorded_sources=None, spans=None,
            refs=(), evidence=(), outcome="succeeded"):
    """Insert a run and its spans/payload refs/evidence. ``spans``: list of dicts with name,
    span_id, parent_id, start (µs offset), end (µs offset) and optional dd_* attributes."""
    con.execute(
        "INSERT INTO runs (invocation_id, run_path, ingest_id, missing, lintable, verifiable, agent_id, completed_at, "
        "grounding_mode, outcome_status, succeeded, withheld, span_count, evidence_count, delegation_count, "
        "recorded_grounding, recorded_sources) VALUES (?, ?, ?, FALSE, TRUE, TRUE, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?)",
        [inv, inv, ingest_id, agent, completed, mode, outcome, outcome == "succeeded", withheld,
         len(spans or []), len(evidence), recorded_grounding, recorded_sources],
    )
    if spans is None:
        spans = [
            {"name": "invoke_agent", "span_id": "00f067aa0ba902b7", "parent_id": None, "start": 0, "end": 1000},
            {"name": "retrieval", "span_id": "9e1f3a6b2c4d5e70", "parent_id": "00f067aa0ba902b7", "start": 100, "end": 110,
             "dd_source_id": "src:a", "dd_content_hash": "a" * 64},
            {"name": "chat", "span_id": "1a2b3c4d5e6f7081", "parent_id": "00f067aa0ba902b7", "start": 50, "end": 900,
             "dd_model_id": "m"},
        ]
    for i, s in enumerate(spans):
        con.execute(
            "INSERT INTO spans (invocation_id, ord, line_no, source_format, name, span_id, trace_id, parent_id, "
            "start_time, end_time, dd_operation, dd_agent_id, dd_source_id, dd_content_hash, dd_model_id) "
            "VALUES (?, ?, ?, 'sdk', ?, ?, 'trace', ?, ?, ?, ?, ?, ?, ?, ?)",
            [inv, i, i + 1, s["name"], s["span_id"], s.get("parent_id"),
             completed + dt.timedelta(microseconds=s["start"]), completed + dt.timedelta(microseconds=s["end"]),
             s["name"], s.get("dd_agent_id"), s.get("dd_source_id"), s.get("dd_content_hash"), s.get("dd_model_id")],
        )
    for i, (sid, h) in enumerate(refs):
        con.execute("INSERT INTO payload_refs (invocation_id, ord, path, kind, source_id, content_hash) VALUES (?, ?, ?, 'ref', ?, ?)",
                    [inv, i, f"$.grounded_on[{i}]", sid, h])
    for i, (sid, h) in enumerate(evidence):
        con.execute(
            "INSERT INTO evidence (invocation_id, ord, source_id, content_hash, canonicalisation, snapshot_ref, computed_hash) "
            "VALUES (?, ?, ?, ?, 'json-sorted-utf8-v1', 'snap', ?)", [inv, i, sid, h, h])


def add_pass(con, lint_id, kind="lint", rules="G0,E1,G1,G2,G3,G4,R1,R2,R3,N1,D1,D2,D3", started=None):
    started = started or T0 + dt.timedelta(days=1, hours=lint_id)
    con.execute(
        "INSERT INTO lints (lint_id, kind, started_at, finished_at, ruleset_hash, rules, tool_version, runs_checked, runs_failed) "
        "VALUES (?, ?, ?, ?, 'h' || ?, ?, 'test', 0, 0)",
        [lint_id, kind, started, started, kind, rules],
    )


def add_verdict(con, lint_id, inv, violations=(), *, kind="lint", mode="retrieval", status=None, summary=None):
    """A lint or verify verdict; ``violations``: list of (code, message)."""
    status = status or ("failed" if violations else "passed")
    if summary is None and status != "unlintable":
        if kind == "lint":
            summary = (f"grounding: FAILED [{mode}]" + "".join(f"\n  - {m}" for _, m in violations)) if violations \
                else f"grounding: passed [{mode}] (1 retrieval, 1 chat spans)"
        else:
            summary = "sources: 0 verified, 0 unresolved" + ("; FAILED" + "".join(f"\n  - {m}" for _, m in violations) if violations else "")
    if kind == "lint":
        con.execute("INSERT INTO lint_verdicts (lint_id, invocation_id, status, passed, mode, retrieval_count, chat_count, summary, reason) "
                    "VALUES (?, ?, ?, ?, ?, 1, 1, ?, ?)",
                    [lint_id, inv, status, status == "passed", mode, summary, "boom" if status == "unlintable" else None])
    else:
        con.execute("INSERT INTO verify_verdicts (lint_id, invocation_id, status, passed, verified, unresolved_count, summary) "
                    "VALUES (?, ?, ?, ?, 0, 0, ?)", [lint_id, inv, status, status == "passed", summary])
    for seq, (code, msg) in enumerate(violations):
        add_violation(con, lint_id, inv, seq, code, msg)
    con.execute("UPDATE lints SET runs_checked = runs_checked + 1, runs_failed = runs_failed + ? WHERE lint_id = ?",
                [int(status != "passed"), lint_id])


def add_violation(con, lint_id, inv, seq, code, message):
    con.execute("INSERT INTO lint_violations (lint_id, invocation_id, seq, code, message) VALUES (?, ?, ?, ?, ?)",
                [lint_id, inv, seq, code, message])


def add_nightly(con, nightly_id, lint_id, verify_id=None, exit_status=1, baseline=None):
    con.execute(
        "INSERT INTO nightlies (nightly_id, started_at, finished_at, lint_id, verify_id, baseline_nightly_id, exit_status) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        [nightly_id, T0 + dt.timedelta(days=nightly_id), T0 + dt.timedelta(days=nightly_id), lint_id, verify_id, baseline, exit_status],
    )
