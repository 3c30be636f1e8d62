"""The workbench's source check (spec 5.4-5.5) over the whole warehouse, as SQL rules.

``verify_warehouse`` loads a sources.yaml (pins checked first, groundwork.sources), runs
sql/rules/S1.sql, S2.sql and S0.sql (unresolved items) for that configuration, renders each
run's exact ``sources.txt`` with reports/templates/verify/, and appends the verdicts to the same
history as lint (``lints`` kind ``verify``, ``verify_verdicts``, ``verify_unresolved``,
``lint_violations``).

A run the workbench's own check would crash on (``runs.verifiable`` false, e.g. a list or object
``grounding_mode``, spec 10 C5) is reported as ``unverifiable``, never as passed.
"""

from __future__ import annotations

import hashlib
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path

import pyarrow as pa

from . import __version__ as TOOL_VERSION
from .canonical import unknown_message
from .errors import GroundworkError
from .paths import RULES_DIR
from .sources import LoadedSources, _insert_arrow, load_into_warehouse

VIOLATION_RULES = ("S1", "S2")
UNRESOLVED_RULE = "S0"
RULE_CODES = VIOLATION_RULES + (UNRESOLVED_RULE,)


@dataclass
class RunVerdict:
    """The source-check verdict of one run (the workbench's report object, spec 5.5)."""

    invocation_id: str
    status: str                   # passed, failed or unverifiable
    verified: int = 0
    unresolved: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    codes: list[str] = field(default_factory=list)
    reason: str | None = None     # why the run is unverifiable
    text: str | None = None       # exact sources.txt (final newline included); None if unverifiable

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    @property
    def summary(self) -> str | None:
        """The summary as printed, without the final newline."""
        return None if self.text is None else self.text[:-1]

    def as_json(self) -> dict:
        return {"invocation_id": self.invocation_id, "passed": self.passed, "verified": self.verified,
                "unresolved": self.unresolved, "violations": self.violations,
                "status": self.status, "reason": self.reason}


@dataclass
class VerifyResult:
    sources_path: str
    config_id: int
    runs: list[RunVerdict]
    lint_id: int | None = None    # history row (None when not recorded)
    seconds: float = 0.0
    loaded: LoadedSources | None = None

    def count(self, status: str) -> int:
        return sum(1 for r in self.runs if r.status == status)

    @property
    def clean(self) -> bool:
        return all(r.passed for r in self.runs)


# ------------------------------------------------------------------------------------------
# Rules
# ------------------------------------------------------------------------------------------

def rule_path(code: str) -> Path:
    return RULES_DIR / f"{code}.sql"


def ruleset_hash() -> str:
    """SHA-256 over the source-check rule files (stem and full text, in stem order)."""
    h = hashlib.sha256()
    for code in sorted(RULE_CODES):
        h.update(code.encode() + b"\0" + rule_path(code).read_bytes() + b"\0")
    return h.hexdigest()


def _rule_rows(con, code: str, config_id: int) -> list[dict]:
    """Rows of sql/rules/<code>.sql for one configuration, in report order within each run."""
    body = rule_path(code).read_text(encoding="utf-8").strip().rstrip(";")
    cur = con.execute(f"SELECT * FROM (\n{body}\n) AS rule_rows ORDER BY invocation_id, ord",
                      {"config_id": config_id})
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row)) for row in cur.fetchall()]


@contextmanager
def scoped_items(con, runs=None):
    """Materialise source_check_items (restricted to ``runs``) as a TEMP table for one pass.

    DuckDB resolves the unqualified name to the temp table first, so every rule reads the
    precomputed rows; the rule files stay runnable by hand against the view.
    """
    try:
        if runs is not None:
            con.register("_verify_scope", pa.table({"invocation_id": pa.array(list(runs), pa.string())}))
            where = " WHERE invocation_id IN (SELECT invocation_id FROM _verify_scope)"
        else:
            where = ""
        con.execute(f"CREATE OR REPLACE TEMP TABLE source_check_items AS SELECT * FROM main.source_check_items{where}")
        yield
    finally:
        con.execute("DROP TABLE IF EXISTS temp.source_check_items")
        if runs is not None:
            con.unregister("_verify_scope")


# ------------------------------------------------------------------------------------------
# Texts
# ------------------------------------------------------------------------------------------

def _messages_module():
    from reports.render import environment
    return environment().get_template("verify/messages.txt.j2").module


def violation_message(row: dict) -> str:
    """Exact S1/S2 message for a row of sql/rules/S1.sql or S2.sql."""
    return str(_messages_module().violation(row, unknown_message))


@lru_cache(maxsize=4096)
def _sources_text(verified: int, unresolved: tuple, violations: tuple) -> str:
    from reports.render import render
    return render("verify/sources.txt.j2", verified=verified, unresolved=list(unresolved),
                  violations=list(violations))


def sources_text(verified: int, unresolved, violations) -> str:
    """The exact sources.txt text (spec 5.5), final newline included."""
    return _sources_text(verified, tuple(unresolved), tuple(violations))


# ------------------------------------------------------------------------------------------
# The check
# ------------------------------------------------------------------------------------------

def verify_warehouse(con, sources_path, *, runs=None, record=True) -> VerifyResult:
    """Source-check every run of the warehouse (or only ``runs``) against a sources.yaml.

    Raises ConfigError (one line, exit 2) for an unusable sources.yaml or a copy that no longer
    matches its pin. With ``record`` the verdicts are appended to the check history.
    """
    t0 = datetime.now(timezone.utc)
    loaded = load_into_warehouse(con, sources_path)
    cfg = loaded.config_id
    with scoped_items(con, runs):
        scope_sql = " WHERE invocation_id IN (SELECT invocation_id FROM _verify_scope)" if runs is not None else ""
        run_rows = con.execute(
            f"SELECT invocation_id, coalesce(verifiable, FALSE), unverifiable_reason FROM runs{scope_sql} "
            "ORDER BY invocation_id").fetchall()
        if runs is not None:
            missing = sorted(set(runs) - {r[0] for r in run_rows})
            if missing:
                more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
                raise GroundworkError(f"no run {missing[0]} in the warehouse{more}")
        with_copy = dict(con.execute(
            "SELECT i.invocation_id, count(*) FROM source_check_items i "
            "JOIN source_refs sr ON sr.snapshot_ref = i.snapshot_ref AND sr.config_id = ? "
            "GROUP BY i.invocation_id", [cfg]).fetchall())
        violations = sorted((row for code in VIOLATION_RULES for row in _rule_rows(con, code, cfg)),
                            key=lambda r: (r["invocation_id"], r["ord"]))
        unresolved = _rule_rows(con, UNRESOLVED_RULE, cfg)

    by_run_violations: dict[str, list[dict]] = {}
    for row in violations:
        by_run_violations.setdefault(row["invocation_id"], []).append(row)
    by_run_unresolved: dict[str, list[str]] = {}
    for row in unresolved:
        by_run_unresolved.setdefault(row["invocation_id"], []).append(row["item"])

    verdicts: list[RunVerdict] = []
    for invocation_id, verifiable, reason in run_rows:
        if not verifiable:
            verdicts.append(RunVerdict(invocation_id, "unverifiable",
                                       reason=reason or "the workbench's source check cannot run on this envelope"))
            continue
        vrows = by_run_violations.get(invocation_id, ())
        messages = [violation_message(row) for row in vrows]
        codes = [row["code"] for row in vrows]
        unres = by_run_unresolved.get(invocation_id, [])
        verified = with_copy.get(invocation_id, 0) - len(vrows)
        verdicts.append(RunVerdict(invocation_id, "failed" if messages else "passed", verified, unres,
                                   messages, codes, text=sources_text(verified, unres, messages)))
    result = VerifyResult(sources_path=str(sources_path), config_id=cfg, runs=verdicts, loaded=loaded)
    if record:
        result.lint_id = record_history(con, result, started_at=t0)
    result.seconds = (datetime.now(timezone.utc) - t0).total_seconds()
    return result


def record_history(con, result: VerifyResult, *, started_at: datetime) -> int:
    """Append one verify pass to lints / verify_verdicts / verify_unresolved / lint_violations."""
    naive = lambda t: t.astimezone(timezone.utc).replace(tzinfo=None)  # noqa: E731
    finished = datetime.now(timezone.utc)
    runs = result.runs
    con.execute("BEGIN TRANSACTION")
    try:
        lint_id = con.execute("SELECT coalesce(max(lint_id), 0) + 1 FROM lints").fetchone()[0]
        con.execute("INSERT INTO lints (lint_id, kind, started_at, finished_at, ruleset_hash, rules, tool_version, "
                    "sources_path, runs_checked, runs_failed) VALUES (?, 'verify', ?, ?, ?, ?, ?, ?, ?, ?)",
                    [lint_id, naive(started_at), naive(finished), ruleset_hash(), ",".join(RULE_CODES),
                     TOOL_VERSION, str(Path(result.sources_path).resolve()), len(runs),
                     sum(1 for r in runs if not r.passed)])
        n = len(runs)
        _insert_arrow(con, "verify_verdicts", pa.table({
            "lint_id": pa.array([lint_id] * n, pa.int32()),
            "invocation_id": pa.array([r.invocation_id for r in runs], pa.string()),
            "status": pa.array([r.status for r in runs], pa.string()),
            "passed": pa.array([r.passed for r in runs], pa.bool_()),
            "verified": pa.array([r.verified for r in runs], pa.int32()),
            "unresolved_count": pa.array([len(r.unresolved) for r in runs], pa.int32()),
            "summary": pa.array([r.summary for r in runs], pa.string()),
            "reason": pa.array([r.reason for r in runs], pa.string()),
        }))
        unres = [(r.invocation_id, seq, item) for r in runs for seq, item in enumerate(r.unresolved)]
        if unres:
            ids, seqs, items = zip(*unres)
            _insert_arrow(con, "verify_unresolved", pa.table({
                "lint_id": pa.array([lint_id] * len(unres), pa.int32()),
                "invocation_id": pa.array(ids, pa.string()),
                "seq": pa.array(seqs, pa.int32()),
                "item": pa.array(items, pa.string())}))
        viol = [(r.invocation_id, seq, code, msg) for r in runs
                for seq, (code, msg) in enumerate(zip(r.codes, r.violations))]
        if viol:
            ids, seqs, codes, msgs = zip(*viol)
            _insert_arrow(con, "lint_violations", pa.table({
                "lint_id": pa.array([lint_id] * len(viol), pa.int32()),
                "invocation_id": pa.array(ids, pa.string()),
                "seq": pa.array(seqs, pa.int32()),
                "code": pa.array(codes, pa.string()),
                "message": pa.array(msgs, pa.string())}))
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return lint_id


def verify_envelope(envelope_path, sources_path) -> VerifyResult:
    """Drop-in for `workbench verify ENVELOPE --sources FILE`: one envelope, an in-memory warehouse.

    The envelope is read by ingest (``ingest.load_single``), exactly as a stored run would be.
    A run the workbench's check would crash on is a GroundworkError (one line, exit 2).
    """
    from ingest import load_single

    from .warehouse import connect

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
