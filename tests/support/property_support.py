"""Shared plumbing of the property tests: reference verdicts for generated runs, SQL verdicts
read back from the warehouse, and a readable description of a disagreement."""

from __future__ import annotations

import json
from dataclasses import dataclass

from reference import linter as ref
from reference import sources as refsrc
from strategies import RunFiles

WORKBENCH_CODES = ("G0", "E1", "G1", "G2", "G3", "G4", "R1", "R2", "R3", "N1", "D1", "D2", "D3", "S1", "S2")


@dataclass(frozen=True)
class Verdict:
    """What a run's check produced, in a form both sides can be compared on."""
    status: str                      # passed / failed / unlintable (unverifiable for verify)
    mode: str | None = None
    violations: tuple = ()
    retrieval_count: int | None = None
    chat_count: int | None = None
    summary: str | None = None
    verified: int | None = None
    unresolved: tuple = ()


def reference_envelope(run: RunFiles):
    data = run.files.get("envelope.json")
    if data is None:  # the workbench cannot read a missing file
        raise ref.Unlintable("envelope.json is missing")
    return ref.read_envelope_bytes(data)


def reference_lint(run: RunFiles) -> Verdict:
    try:
        if run.files.get("spans.jsonl") is None:
            raise ref.Unlintable("spans.jsonl is missing")
        spans = run.files["spans.jsonl"].decode("utf-8")
        report = ref.lint(spans, reference_envelope(run))
    except (ref.Unlintable, UnicodeDecodeError):
        return Verdict("unlintable")
    return Verdict("passed" if report.passed else "failed", report.mode, tuple(report.violations),
                   report.retrieval_count, report.chat_count, ref.summary(report))


def reference_verify(run: RunFiles, copies) -> Verdict:
    try:
        report = refsrc.check(reference_envelope(run), copies)
    except (ref.Unlintable, refsrc.Uncheckable):
        return Verdict("unverifiable")
    return Verdict("passed" if report.passed else "failed", violations=tuple(report.violations),
                   summary=refsrc.summary(report), verified=report.verified, unresolved=tuple(report.unresolved))


def sql_lint_verdicts(con, lint_id: int) -> dict[str, Verdict]:
    rows = con.execute("SELECT invocation_id, code, message FROM lint_violations WHERE lint_id = ? "
                       "ORDER BY invocation_id, seq", [lint_id]).fetchall()
    messages: dict[str, list] = {}
    for inv, code, message in rows:
        if code in WORKBENCH_CODES:
            messages.setdefault(inv, []).append(message)
    out = {}
    for inv, status, mode, rc, cc, summary in con.execute(
            "SELECT invocation_id, status, mode, retrieval_count, chat_count, summary FROM lint_verdicts "
            "WHERE lint_id = ?", [lint_id]).fetchall():
        if status == "unlintable":
            out[inv] = Verdict("unlintable")
        else:
            out[inv] = Verdict(status, mode, tuple(messages.get(inv, ())), rc, cc, summary)
    return out


def sql_verify_verdicts(result) -> dict[str, Verdict]:
    """A verify pass's verdicts (groundwork.checks.verify.VerifyResult) as Verdicts, by run."""
    return {r.invocation_id: Verdict("unverifiable") if r.status == "unverifiable" else Verdict(
        r.status, violations=tuple(r.violations), summary=r.summary, verified=r.verified,
        unresolved=tuple(r.unresolved)) for r in result.runs}


def describe(run: RunFiles, expected: Verdict, actual: Verdict | None) -> str:
    files = {name: (data.decode("utf-8", "backslashreplace") if data is not None else None)
             for name, data in run.files.items() if name != "request.json"}
    return (f"run {run.name}\n  reference: {expected}\n  sql:       {actual}\n"
            f"  files: {json.dumps(files, indent=1, ensure_ascii=True)[:6000]}")


def _unsurrogate(value):
    if isinstance(value, str):
        return "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in value)
    if isinstance(value, tuple):
        return tuple(_unsurrogate(v) for v in value)
    return value


def writable(verdict: Verdict) -> Verdict:
    """A text with a raw lone surrogate (e.g. a span id printed verbatim) cannot be written as
    UTF-8 at all — the workbench itself would crash writing grounding.txt — so the SQL side's
    U+FFFD in its place is accepted. Reprs are unaffected (repr escapes lone surrogates)."""
    return Verdict(*(_unsurrogate(getattr(verdict, f)) for f in Verdict.__dataclass_fields__))


def disagreements(runs: list[RunFiles], expected: dict, actual: dict) -> list[str]:
    out = []
    for run in runs:
        want, got = writable(expected[run.name]), actual.get(run.name)
        if got is None and want.status in ("unlintable", "unverifiable"):
            continue  # ingest refused the folder outright: fine for a run the workbench cannot check
        if got != want:
            out.append(describe(run, want, got))
    return out
