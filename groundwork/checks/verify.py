"""The workbench's source check (docs/rules.md#source-check, docs/rules.md#sources-text) over the whole warehouse, as SQL rules.

``verify_warehouse`` loads a sources.yaml (pins checked first, groundwork.checks.sources), runs
sql/rules/S1.sql, S2.sql and S0.sql (unresolved items) for that configuration, renders each
run's exact ``sources.txt`` (groundwork.checks.messages), and appends the verdicts to the same
history as lint (``lints`` kind ``verify``, ``verify_verdicts``, ``verify_unresolved``,
``lint_violations``).

A run the workbench's own check would crash on (``runs.verifiable`` false, e.g. a list or object
``grounding_mode``, docs/rules.md#unverifiable-runs) is reported as ``unverifiable``, never as passed.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import pyarrow as pa

from groundwork import __version__ as TOOL_VERSION
from groundwork.checks import messages
from groundwork.checks import rules as rules_mod
from groundwork.checks.sources import LoadedSources, _insert_arrow, load_into_warehouse
from groundwork.core.canonical import unknown_message
from groundwork.core.errors import GroundworkError

VIOLATION_RULES = ("S1", "S2")
# Every run (``{where}``: an optional scope) with whether it is verifiable, why not, and how many
# of its evidence items have a source copy in configuration $config_id.
RUN_ROWS_SQL = (
    "SELECT r.invocation_id, coalesce(r.verifiable, FALSE) AS verifiable, r.unverifiable_reason, "
    "coalesce(c.n, 0) AS with_copy "
    "FROM runs r LEFT JOIN (SELECT i.invocation_id, count(*) AS n FROM source_check_items i "
    "  JOIN source_refs sr ON sr.snapshot_ref = i.snapshot_ref AND sr.config_id = $config_id "
    "  GROUP BY i.invocation_id) c ON c.invocation_id = r.invocation_id{where}")
UNRESOLVED_RULE = "S0"
RULE_CODES = (UNRESOLVED_RULE,) + VIOLATION_RULES


@dataclass(slots=True)
class RunVerdict:
    """The source-check verdict of one run (the workbench's report object, docs/rules.md#sources-text)."""

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

    @property
    def exit_code(self) -> int:
        """0 when every run passed, 1 when any failed or could not be verified."""
        return 0 if self.clean else 1

    def totals_line(self) -> str:
        where = f" (lint {self.lint_id})" if self.lint_id is not None else ""
        return (f"groundwork verify{where}: {len(self.runs)} runs, {self.count('passed')} passed, "
                f"{self.count('failed')} failed, {self.count('unverifiable')} unverifiable; "
                f"{sum(r.verified for r in self.runs)} evidence items verified, "
                f"{sum(len(r.unresolved) for r in self.runs)} unresolved (sources: {self.sources_path})")


# ------------------------------------------------------------------------------------------
# Rules and texts
# ------------------------------------------------------------------------------------------

def source_rules() -> dict:
    """The source-check rule files (kind: source) of sql/rules/, by code: S0 (unresolved), S1, S2."""
    found = {rule.code: rule for rule in rules_mod.load_rules(kinds=("source",))}
    missing = sorted(set(RULE_CODES) - set(found))
    if missing:
        raise GroundworkError(f"source-check rule file(s) missing from sql/rules/: {', '.join(missing)}")
    return {code: found[code] for code in RULE_CODES}


def _rule_rows(con, rule, config_id: int) -> list[dict]:
    """Rows of a rule for one configuration, in report order within each run."""
    names, rows = rules_mod.run(con, rule, {"config_id": config_id})
    return [dict(zip(names, row)) for row in rows]


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


def violation_messages(rows: list[dict], rules: dict) -> list[str]:
    """Exact S1/S2 messages for rows of sql/rules/S1.sql / S2.sql (``rules``: source_rules())."""
    for row in rows:
        if row["code"] == "S2" and row["actual_hash"] is None and row["hash_error"] is None:
            row["hash_error"] = unknown_message(row["canonicalisation"])  # unregistered name (K2)
    out: list[str | None] = [None] * len(rows)
    for code in VIOLATION_RULES:
        idx = [i for i, row in enumerate(rows) if row["code"] == code]
        for i, text in zip(idx, messages.render_many(rules[code].template, [rows[i] for i in idx])):
            out[i] = text
    return out


def sources_texts(verdicts) -> list[str]:
    """The exact sources.txt text (docs/rules.md#sources-text, final newline included) of each verdict.

    Most runs share their text (e.g. ``sources: 0 verified, 0 unresolved``), so each distinct
    (verified, unresolved, violations) is rendered once.
    """
    keys = [(v.verified, tuple(v.unresolved), tuple(v.violations)) for v in verdicts]
    unique = list(dict.fromkeys(keys))
    texts = dict(zip(unique, messages.render_many(messages.SOURCES, [
        RunVerdict("", "", verified, list(unres), list(viol)) for verified, unres, viol in unique])))
    return [texts[k] for k in keys]


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
    rules = source_rules()
    with scoped_items(con, runs):
        scope_sql = " WHERE r.invocation_id IN (SELECT invocation_id FROM _verify_scope)" if runs is not None else ""
        run_rows = con.execute(RUN_ROWS_SQL.format(where=scope_sql) + " ORDER BY r.invocation_id",
                               {"config_id": cfg}).fetchall()
        if runs is not None:
            missing = sorted(set(runs) - {r[0] for r in run_rows})
            if missing:
                more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
                raise GroundworkError(f"no run {missing[0]} in the warehouse{more}")
        violations = [row for code in VIOLATION_RULES for row in _rule_rows(con, rules[code], cfg)]
        unresolved = _rule_rows(con, rules[UNRESOLVED_RULE], cfg)

    violations.sort(key=lambda r: (r["invocation_id"], r["ord"]))
    for row, text in zip(violations, violation_messages(violations, rules)):
        row["message"] = text
    by_run_violations: dict[str, list[dict]] = {}
    for row in violations:
        by_run_violations.setdefault(row["invocation_id"], []).append(row)
    by_run_unresolved: dict[str, list[str]] = {}
    for row in unresolved:
        by_run_unresolved.setdefault(row["invocation_id"], []).append(row["item"])
    verdicts = run_verdicts(run_rows, by_run_violations, by_run_unresolved)
    result = VerifyResult(sources_path=str(sources_path), config_id=cfg, runs=verdicts, loaded=loaded)
    if record:
        result.lint_id = record_history(con, result, started_at=t0,
                                        ruleset=rules_mod.ruleset_hash(tuple(rules.values())))
    result.seconds = (datetime.now(timezone.utc) - t0).total_seconds()
    return result


def run_verdicts(run_rows, violations: dict[str, list[dict]], unresolved: dict[str, list[str]]) -> list[RunVerdict]:
    """The verdicts (with their exact sources.txt) of runs ``run_rows`` (RUN_ROWS_SQL's rows),
    from their S1/S2 rows with messages (``violations``, per run in report order) and their
    unresolved items (``unresolved``, per run in S0's order): a pure function of the rows, so any
    engine that ran the rule files can call it (groundwork/spark does, in its executors)."""
    verdicts: list[RunVerdict] = []
    checked: list[RunVerdict] = []
    for invocation_id, verifiable, reason, with_copy in run_rows:
        if not verifiable:
            verdicts.append(RunVerdict(invocation_id, "unverifiable",
                                       reason=reason or "the workbench's source check cannot run on this envelope"))
            continue
        vrows = violations.get(invocation_id)
        unres = unresolved.get(invocation_id, [])
        if vrows:
            verdict = RunVerdict(invocation_id, "failed", with_copy - len(vrows), unres,
                                 [r["message"] for r in vrows], [r["code"] for r in vrows])
        else:
            verdict = RunVerdict(invocation_id, "passed", with_copy, unres)
        verdicts.append(verdict)
        checked.append(verdict)
    for verdict, text in zip(checked, sources_texts(checked)):
        verdict.text = text
    return verdicts


def record_history(con, result: VerifyResult, *, started_at: datetime, ruleset: str) -> int:
    """Append one verify pass to lints / verify_verdicts / verify_unresolved / lint_violations."""
    naive = lambda t: t.astimezone(timezone.utc).replace(tzinfo=None)  # noqa: E731
    finished = datetime.now(timezone.utc)
    runs = result.runs
    con.execute("BEGIN TRANSACTION")
    try:
        lint_id = con.execute("SELECT coalesce(max(lint_id), 0) + 1 FROM lints").fetchone()[0]
        con.execute("INSERT INTO lints (lint_id, kind, started_at, finished_at, ruleset_hash, rules, tool_version, "
                    "sources_path, runs_checked, runs_failed) VALUES (?, 'verify', ?, ?, ?, ?, ?, ?, ?, ?)",
                    [lint_id, naive(started_at), naive(finished), ruleset, ",".join(RULE_CODES),
                     TOOL_VERSION, str(Path(result.sources_path).resolve()), len(runs),
                     sum(1 for r in runs if r.status != "passed")])
        cols = {name: [] for name in ("invocation_id", "status", "passed", "verified", "unresolved_count",
                                      "summary", "reason")}
        for r in runs:
            cols["invocation_id"].append(r.invocation_id)
            cols["status"].append(r.status)
            cols["passed"].append(r.status == "passed")
            cols["verified"].append(r.verified)
            cols["unresolved_count"].append(len(r.unresolved))
            cols["summary"].append(None if r.text is None else r.text[:-1])
            cols["reason"].append(r.reason)
        types = {"passed": pa.bool_(), "verified": pa.int32(), "unresolved_count": pa.int32()}
        _insert_arrow(con, "verify_verdicts", pa.table({
            "lint_id": pa.array([lint_id] * len(runs), pa.int32()),
            **{name: pa.array(values, types.get(name, pa.string())) for name, values in cols.items()}}))
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
