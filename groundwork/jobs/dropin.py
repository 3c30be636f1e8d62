"""The drop-in jobs: one spans file and envelope (or one envelope) from anywhere, loaded by
ingest into an in-memory warehouse exactly as a stored run would be, then linted (`groundwork
lint SPANS ENVELOPE`, for `workbench lint`) or source-checked (`groundwork verify ENVELOPE`, for
`workbench verify`). A run the workbench could not check is a GroundworkError (one line, exit 2).
"""

from __future__ import annotations

from pathlib import Path

from groundwork.checks.lint import RunVerdict, lint_warehouse
from groundwork.checks.verify import VerifyResult, verify_warehouse
from groundwork.core.errors import GroundworkError
from groundwork.core.warehouse import connect
from groundwork.ingest import issues, load_single


def _readable(label: str, path) -> None:
    p = Path(path)
    if not p.is_file():
        raise GroundworkError(f"cannot read {label} {path}: {'no such file' if not p.exists() else 'not a file'}")


def lint_pair(spans, envelope) -> RunVerdict:
    """The lint verdict of one spans.jsonl and envelope.json (its ``grounding_txt`` is never None)."""
    for label, path in (("spans file", spans), ("envelope file", envelope)):
        _readable(label, path)
    con = connect(":memory:")
    try:
        key = load_single(con, spans, envelope)
        verdict = lint_warehouse(con, runs=[key], record=False).verdicts[0]
        if verdict.grounding_txt is None:
            # an issue that crashes the linter wherever it stops; else the verdict's reason (a
            # cycle, or an envelope value read past the early stops: docs/rules.md#early-stops)
            issue = con.execute(
                "SELECT path, line, message FROM ingest_issues WHERE invocation_id = ? AND effect IN (?, ?)"
                " ORDER BY path, line NULLS FIRST LIMIT 1", [key, issues.UNLINTABLE, issues.BOTH]).fetchone()
            where = f"{issue[0]}{f' line {issue[1]}' if issue[1] else ''}: {issue[2]}" if issue else verdict.reason
            raise GroundworkError(f"the workbench linter cannot lint these files ({where})")
    finally:
        con.close()
    return verdict


def verify_envelope(envelope_path, sources_path) -> VerifyResult:
    """The source check of one envelope.json against a sources.yaml (one run in ``runs``)."""
    _readable("envelope file", envelope_path)
    con = connect(":memory:")
    try:
        load_single(con, None, envelope_path)
        result = verify_warehouse(con, sources_path, record=False)
    finally:
        con.close()
    if len(result.runs) != 1:
        raise GroundworkError(f"{envelope_path}: could not be read as an envelope")
    verdict = result.runs[0]
    if verdict.status == "unverifiable":
        raise GroundworkError(f"{envelope_path}: the source check cannot run on this envelope: {verdict.reason}")
    return result
