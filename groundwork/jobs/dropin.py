"""The drop-in jobs: one spans file and envelope (or one envelope) from anywhere, loaded by
ingest into an in-memory warehouse exactly as a stored run would be, then linted (`groundwork
lint SPANS ENVELOPE`, for `workbench lint`) or source-checked (`groundwork verify ENVELOPE`, for
`workbench verify`). A run the workbench could not check is a GroundworkError (one line, exit 2).

A drop-in is a whole process per run, so it pays only for what one run needs: each job imports
its own check (lint or verify, not both), and its warehouse holds only the tables and views
that check reads (``warehouse.apply_schema_for``), not the whole schema. The run's rows are
ingest's (``ingest.single.run_rows``), written with bound parameters (``insert_rows``), and the
lint runs on one connection (groundwork.checks.onerun): no pyarrow, no worker threads
(tests/cli/test_dropin.py checks what a drop-in process imports).
"""

from __future__ import annotations

import json
from pathlib import Path

from groundwork.core.engine import duckdb
from groundwork.core.errors import GroundworkError
from groundwork.core.warehouse import apply_schema_for, relations_named
from groundwork.ingest.single import insert_rows, run_rows
from groundwork.ingest.tables import RUN_TABLES

# What verify's loader of sources.yaml (checks.sources.load_into_warehouse) writes and reads.
SOURCE_TABLES = ("source_configs", "source_refs", "source_copies", "source_records")
# What the lint's base query reads besides runs and the derived relations (checks.lint).
LINT_CONTEXT = "lint_context"


def _readable(label: str, path) -> None:
    p = Path(path)
    if not p.is_file():
        raise GroundworkError(f"cannot read {label} {path}: {'no such file' if not p.exists() else 'not a file'}")


def _one_run_warehouse(relations) -> duckdb.DuckDBPyConnection:
    """An in-memory warehouse with the run tables ingest writes and ``relations``. DuckDB works
    on one thread: on one run's rows its parallel operators cost more to start than they save
    (~15 % of the lint's CPU)."""
    con = duckdb.connect(":memory:", config={"threads": 1})
    try:
        apply_schema_for(con, {*RUN_TABLES, *relations})
    except BaseException:
        con.close()
        raise
    return con


def _load(con, spans, envelope) -> str:
    """Write the run of ``spans`` and ``envelope`` into the empty warehouse ``con``, as ingest
    parses it; return its key."""
    key, rows = run_rows(spans, envelope)
    insert_rows(con, rows)
    return key


def _refuse_otlp(con, key: str, spans) -> None:
    """Refuse a spans file in OTLP/JSON (docs/rules.md#spans: ingest reads it, the workbench never
    writes it): `workbench lint` reads every line as its own span form, so its first line lacks a
    required key and the workbench crashes there, whatever the envelope holds. (A mixed file is
    already unlintable through its ingest issue.)"""
    row = con.execute("SELECT span_format FROM runs WHERE invocation_id = ?", [key]).fetchone()
    if row is None or row[0] != "otlp":
        return
    with open(spans, "rb") as fh:   # its first line with text (the ingest parsed it: OTLP), read alone
        line_no, line = next(((n, raw) for n, raw in enumerate(fh, 1) if raw.strip()), (1, b""))
    try:   # (a line the ingest split further, at a separator other than \n: its first part)
        doc = json.loads(line.decode("utf-8").splitlines()[0])
        missing = next(k for k in ("name", "context", "start_time", "end_time") if k not in doc)
    except (ValueError, IndexError, TypeError, StopIteration):
        missing = "context"
    raise GroundworkError(f"the workbench linter cannot lint these files ({spans} line {line_no}: "
                          f"span line lacks the required key {missing!r})")


def lint_pair(spans, envelope):
    """The lint verdict (checks.lint.RunVerdict) of one spans.jsonl and envelope.json (its
    ``grounding_txt`` is never None)."""
    # Imported here, not at the top: `groundwork verify ENVELOPE` does not need the lint.
    from groundwork.checks import derived, rules
    from groundwork.checks.onerun import lint_one
    from groundwork.ingest import issues

    for label, path in (("spans file", spans), ("envelope file", envelope)):
        _readable(label, path)
    # The lint derives its relations itself (onerun.derive): the warehouse needs only
    # what they and the rules read.
    chosen = rules.load_rules()
    reads = relations_named("\n".join([*(r.body for r in derived.RELATIONS), *(r.body for r in chosen)]))
    con = _one_run_warehouse((reads - set(derived.NAMES)) | {LINT_CONTEXT})
    try:
        key = _load(con, spans, envelope)
        _refuse_otlp(con, key, spans)
        verdict = lint_one(con, key, chosen)
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


def verify_envelope(envelope_path, sources_path):
    """The source check (checks.verify.VerifyResult) of one envelope.json against a
    sources.yaml (one run in ``runs``)."""
    # Imported here, not at the top: `groundwork lint SPANS ENVELOPE` does not need the source check.
    from groundwork.checks.verify import source_rules, verify_warehouse
    _readable("envelope file", envelope_path)
    reads = relations_named("\n".join(r.body for r in source_rules().values()))
    con = _one_run_warehouse(reads | set(SOURCE_TABLES))
    try:
        _load(con, None, envelope_path)
        result = verify_warehouse(con, sources_path, record=False)
    finally:
        con.close()
    if len(result.runs) != 1:
        raise GroundworkError(f"{envelope_path}: could not be read as an envelope")
    verdict = result.runs[0]
    if verdict.status == "unverifiable":
        raise GroundworkError(f"{envelope_path}: the source check cannot run on this envelope: {verdict.reason}")
    return result
