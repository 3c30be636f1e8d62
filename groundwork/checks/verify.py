"""The workbench's source check (docs/rules.md#source-check, docs/rules.md#sources-text) over the whole warehouse, as SQL rules.

``verify_warehouse`` loads a sources.yaml (pins checked first, groundwork.checks.sources), runs
sql/rules/S1.sql, S2.sql and S0.sql (unresolved items) for that configuration, renders each
run's exact ``sources.txt`` (groundwork.checks.messages), and appends the verdicts to the same
history as lint (``lints`` kind ``verify``, ``verify_verdicts``, ``verify_unresolved``,
``lint_violations``).

Re-verifying is incremental: a run whose rows have not been reloaded since a recent verify pass
(same runs.ingest_id) with the same sources configuration (same sources.yaml path and bytes:
``source_configs.config_id``, whose copies are pinned by their SHA-256), rule files, templates
and groundwork version keeps that verdict (copied into the new pass inside the warehouse); only
new or changed runs go through the rules (``reuse=True``: the nightly job).

A run the workbench's own check would crash on (``runs.verifiable`` false, e.g. a list or object
``grounding_mode``, docs/rules.md#unverifiable-runs) is reported as ``unverifiable``, never as passed.
The check has no early stops: it reads the mode and every evidence element of every envelope
(never ``outcome`` or ``delegations``), so ingest decides verifiability from the envelope alone,
whatever the linter does with the run (docs/rules.md#early-stops).
"""

from __future__ import annotations

import collections
import json
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from groundwork import __version__ as TOOL_VERSION
from groundwork.checks import current, messages, sources as sources_mod
from groundwork.checks import rules as rules_mod
from groundwork.checks.sources import LoadedSources, _insert_arrow, load_into_warehouse
from groundwork.core import canonical
from groundwork.core.canonical import unknown_message
from groundwork.core.engine import arrow, full
from groundwork.core.errors import GroundworkError
from groundwork.core.paths import SCHEMA_DIR
from groundwork.core.warehouse import schema_files

if TYPE_CHECKING:   # annotations only: pyarrow is imported where a table is built
    import pyarrow as pa

VIOLATION_RULES = ("S1", "S2")
# Every run (``{where}``: an optional scope) with whether it is verifiable, why not, how many of
# its evidence items have a source copy in configuration $config_id, and the ingest it was loaded by.
RUN_ROWS_SQL = (
    "SELECT r.invocation_id, coalesce(r.verifiable, FALSE) AS verifiable, r.unverifiable_reason, "
    "coalesce(c.n, 0) AS with_copy, r.ingest_id "
    "FROM runs r LEFT JOIN (SELECT i.invocation_id, count(*) AS n FROM source_check_items i "
    "  JOIN source_refs sr ON sr.snapshot_ref = i.snapshot_ref AND sr.config_id = $config_id "
    "  GROUP BY i.invocation_id) c ON c.invocation_id = r.invocation_id{where}")
UNRESOLVED_RULE = "S0"
RULE_CODES = (UNRESOLVED_RULE,) + VIOLATION_RULES
# Besides the S rule files and their templates, a verdict depends on these files: a change to any
# of them changes the pass's rule-set hash, so no verdict is reused across it.
_TEXT_SOURCES = (messages.TEMPLATES_DIR / messages.SOURCES, *messages.TEXT_SOURCES[1:], Path(__file__),
                 Path(sources_mod.__file__), Path(canonical.__file__), Path(rules_mod.__file__), *schema_files())


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
    ingest_id: int | None = None  # runs.ingest_id of the run when it was judged

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
    """Everything one verify pass found. ``runs`` lists every selected run in invocation_id
    order; verdicts reused from an earlier pass are read from the warehouse the first time
    ``runs`` is used (keep the connection open until then); counts never need them."""

    sources_path: str
    config_id: int
    fresh: list[RunVerdict]
    lint_id: int | None = None    # history row (None when not recorded)
    seconds: float = 0.0
    loaded: LoadedSources | None = None
    reused: int = 0
    reused_from: int | None = None   # the oldest pass a reused verdict comes from
    reused_counts: dict = field(default_factory=dict)   # status -> runs, verified, unresolved
    kept: bool = False   # no pass recorded: lint_id is a recorded pass that still holds (checks.current)
    _load_reused: object = None
    _runs: list[RunVerdict] | None = None
    _released: dict | None = None   # release(): the tally of the fresh verdicts let go

    def release(self) -> None:
        """Let go of the fresh verdicts (a recorded pass: they are in the warehouse), keeping their
        tally: counts and ``totals_line`` stay. The nightly calls it once the pass is recorded."""
        fresh = collections.Counter(r.status for r in self.fresh)
        fresh.update(verified=sum(r.verified for r in self.fresh),
                     unresolved=sum(len(r.unresolved) for r in self.fresh), runs=len(self.fresh))
        self._released = fresh if self._released is None else self._released + fresh
        self.fresh, self._runs = [], None

    def _tallied(self, key: str) -> int:
        return self.reused_counts.get(key, 0) + (self._released or {}).get(key, 0)

    @property
    def runs(self) -> list[RunVerdict]:
        if self._released is not None:
            raise RuntimeError("the verdicts of this verify pass were released; read them from the warehouse")
        if self._runs is None:
            self._runs = self.fresh
            if self.reused:
                self._runs = sorted(self.fresh + self._load_reused(), key=lambda v: v.invocation_id)
        return self._runs

    def count(self, status: str) -> int:
        return sum(1 for r in self.fresh if r.status == status) + self._tallied(status)

    @property
    def clean(self) -> bool:
        return self.count("failed") == 0 and self.count("unverifiable") == 0

    @property
    def exit_code(self) -> int:
        """0 when every run passed, 1 when any failed or could not be verified."""
        return 0 if self.clean else 1

    def totals_line(self) -> str:
        where = f" (lint {self.lint_id})" if self.lint_id is not None else ""
        verified = sum(r.verified for r in self.fresh) + self._tallied("verified")
        unresolved = sum(len(r.unresolved) for r in self.fresh) + self._tallied("unresolved")
        return (f"groundwork verify{where}: {len(self.fresh) + self.reused + self._tallied('runs')} runs, {self.count('passed')} passed, "
                f"{self.count('failed')} failed, {self.count('unverifiable')} unverifiable; "
                f"{verified} evidence items verified, "
                f"{unresolved} unresolved (sources: {self.sources_path})")


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


# The tables the view source_check_items reads (sql/schema/20_source_check_items.sql), each row of
# it made of rows of one run: for a pass over some runs, the view's SELECT over those runs' rows of
# them equals the view's rows of those runs.
ITEMS_FILE = SCHEMA_DIR / "20_source_check_items.sql"
_ITEM_TABLES = ("evidence", "runs")
# Columns the view never reads, left out of the copies: fetching the run's envelope_json (its
# whole envelope.json) was most of the cost of copying two runs' rows (~7 of ~11 ms at 100,000 runs).
_ITEM_UNREAD = {"runs": " EXCLUDE (envelope_json)"}


@contextmanager
def scoped_items(con, runs=None):
    """Materialise source_check_items (restricted to ``runs``) as a TEMP table for one pass.

    DuckDB resolves the unqualified name to the temp table first, so every rule reads the
    precomputed rows; the rule files stay runnable by hand against the view. For ``runs``, the
    view's SELECT runs over temp copies of their rows of evidence and runs, picked by rowid from
    a scan of invocation_id alone (filtering the view read every column of every row of
    evidence: ~0.15 s of CPU for 1,000 new runs of 101,000, 0.06 s so); the copies shadow the
    tables only while that one statement runs.
    """
    try:
        if runs is not None:
            pa = arrow()  # here and below: a drop-in verify (one run) never needs them

            from groundwork.checks.derived import view_body

            con.register("_verify_scope", pa.table({"invocation_id": pa.array(list(runs), pa.string())}))
            try:
                for table in _ITEM_TABLES:
                    con.execute(f"CREATE OR REPLACE TEMP TABLE {table} AS SELECT *{_ITEM_UNREAD.get(table, '')} FROM main.{table} WHERE rowid IN "
                                f"(SELECT rowid FROM main.{table} WHERE invocation_id IN (SELECT invocation_id FROM _verify_scope))")
                con.execute(f"CREATE OR REPLACE TEMP TABLE source_check_items AS {view_body(ITEMS_FILE)}")
            finally:
                for table in _ITEM_TABLES:
                    con.execute(f"DROP TABLE IF EXISTS temp.{table}")
        else:
            con.execute("CREATE OR REPLACE TEMP TABLE source_check_items AS SELECT * FROM main.source_check_items")
        yield
    finally:
        con.execute("DROP TABLE IF EXISTS temp.source_check_items")
        if runs is not None:
            con.unregister("_verify_scope")


def violation_messages(rows: list[dict], rules: dict) -> list[str]:
    """Exact S1/S2 messages for rows of sql/rules/S1.sql / S2.sql (``rules``: source_rules())."""
    for row in rows:
        if row["code"] == "S2" and row["actual_hash"] is None and row["hash_error"] is None:
            # unregistered name (K2): str() of the raw value, from its JSON (the str() column has
            # U+FFFD for a lone surrogate, which the workbench's repr prints as an escape)
            raw = row.get("canonicalisation_json")
            row["hash_error"] = unknown_message(json.loads(raw) if raw is not None else row["canonicalisation"])
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

_CANDIDATES_SQL = """
WITH same AS (
    SELECT lint_id, all_runs FROM lints
    WHERE kind = 'verify' AND ruleset_hash = $ruleset AND tool_version = $tool_version AND config_id = $config)
SELECT lint_id FROM same
WHERE lint_id >= coalesce((SELECT max(lint_id) FROM same WHERE all_runs),
                          (SELECT min(lint_id) FROM (SELECT lint_id FROM same ORDER BY lint_id DESC LIMIT 3)))
ORDER BY lint_id DESC
"""
# Verdicts that still hold: computed with the same rules, code and sources configuration, on the
# same run rows (ingest_id), by the latest pass that checked every run (lints.all_runs) or any
# pass since (the watch's: each run's latest verdict counts; checks.lint._CANDIDATES_SQL). The latest candidate is read alone
# first (one pass's rows, no grouping); the older ones only for the runs it does not hold.
_REUSABLE_SQL = """
SELECT v.invocation_id, max(v.lint_id) AS lint_id
FROM verify_verdicts v
JOIN runs r USING (invocation_id)
WHERE v.lint_id >= $oldest AND v.lint_id IN (SELECT unnest($candidates)) AND v.ingest_id = r.ingest_id{only}
GROUP BY v.invocation_id
"""


def _reusable(con, cfg: int, ruleset: str, runs) -> pa.Table | None:
    """(invocation_id, lint_id) of every run (of ``runs``) whose verdict in a recent pass still holds."""
    pa = arrow()

    candidates = [r[0] for r in con.execute(_CANDIDATES_SQL, {"ruleset": ruleset, "tool_version": TOOL_VERSION,
                                                               "config": cfg}).fetchall()]
    if not candidates:
        return None
    only, params = "", {}
    if runs is not None:
        only = " AND v.invocation_id IN (SELECT unnest($runs))"
        params["runs"] = list(runs)
    found = con.sql(_REUSABLE_SQL.format(only=only), params={"oldest": candidates[0], "candidates": candidates[:1],
                                                             **params}).to_arrow_table()
    total = len(set(runs)) if runs is not None else con.execute("SELECT count(*) FROM runs").fetchall()[0][0]
    if len(candidates) > 1 and found.num_rows < total:
        con.register("verify_reused_latest", found)
        try:
            older = con.sql(_REUSABLE_SQL.format(only=only + " AND v.invocation_id NOT IN (SELECT invocation_id FROM verify_reused_latest)"),
                            params={"oldest": min(candidates), "candidates": candidates[1:], **params}).to_arrow_table()
        finally:
            con.unregister("verify_reused_latest")
        found = pa.concat_tables([found, older.cast(found.schema)])
    return found


def verify_warehouse(con, sources_path, *, runs=None, record=True, reuse=False, same_pass=False,
                     pinned_files="read") -> VerifyResult:
    """Source-check every run of the warehouse (or only ``runs``) against a sources.yaml.

    Raises ConfigError (one line, exit 2) for an unusable sources.yaml or a copy that no longer
    matches its pin. With ``record`` the verdicts are appended to the check history. With
    ``reuse`` (the nightly job) runs unchanged since a recent pass under the same configuration
    keep that verdict, read back from the warehouse only when ``runs`` is used: keep ``con`` open
    until then. With ``same_pass`` too (every run), when nothing the verdicts depend on changed
    since a recorded pass of every run under this configuration (``checks.current``), no pass is
    recorded: the result is that pass's (``kept``). ``pinned_files``: whether the copies' files
    are all read or trusted while as they were when their bytes last matched their pins
    (``sources.load_into_warehouse``).
    """
    t0 = datetime.now(timezone.utc)
    loaded = load_into_warehouse(con, sources_path, pinned_files=pinned_files)
    cfg = loaded.config_id
    rules = source_rules()
    ruleset = ruleset_hash(rules)
    if same_pass and record and reuse and runs is None:
        kept = current.current_pass(con, "verify", ruleset, TOOL_VERSION, cfg)
        if kept is not None:
            return _kept_pass(con, kept, sources_path, loaded, t0)
    read_after = current.latest_ingest(con) if record else None  # the runs are read as this ingest left them
    reused = _reusable(con, cfg, ruleset, runs) if reuse else None
    if reused is not None:  # read only when it has rows (reused_counts, record_history)
        con.register("verify_reused", reused)
    try:
        scope = runs
        if reused is not None and reused.num_rows:
            where = " AND invocation_id IN (SELECT unnest($runs))" if runs is not None else ""
            scope = [r[0] for r in con.execute(
                "SELECT invocation_id FROM runs WHERE invocation_id NOT IN (SELECT invocation_id FROM verify_reused)"
                + where, {"runs": list(runs)} if runs is not None else None).fetchall()]
            if runs is not None:  # runs unknown to the warehouse stay in scope (and are reported)
                known = set(scope) | set(reused.column("invocation_id").to_pylist())
                scope += [r for r in dict.fromkeys(runs) if r not in known]
        fresh = _judge(con, cfg, rules, scope) if scope is None or scope else []
        result = VerifyResult(sources_path=str(sources_path), config_id=cfg, fresh=fresh, loaded=loaded)
        if reused is not None and reused.num_rows:
            # The oldest pass a reused verdict comes from: the queries reading them skip older history.
            result.reused = reused.num_rows
            result.reused_from = con.execute("SELECT min(lint_id) FROM verify_reused").fetchall()[0][0]
            result.reused_counts = _reused_counts(con, result.reused_from)
            result._load_reused = lambda: _load_verdicts(con, reused, result.reused_from)
        if record:
            result.lint_id = record_history(con, result, started_at=t0, ruleset=ruleset, all_runs=runs is None,
                                            ingest_id=read_after)
    finally:
        if reused is not None:
            con.unregister("verify_reused")
    result.seconds = (datetime.now(timezone.utc) - t0).total_seconds()
    return result


def _kept_pass(con, lint_id: int, sources_path, loaded: LoadedSources, t0: datetime) -> VerifyResult:
    """The result of recorded verify pass ``lint_id``, which still holds for every run: its
    counts read back, its verdicts when first used."""
    result = VerifyResult(sources_path=str(sources_path), config_id=loaded.config_id, fresh=[], loaded=loaded,
                          lint_id=lint_id, kept=True, reused_from=lint_id)
    rows = con.execute("SELECT status, count(*), sum(verified), sum(unresolved_count) FROM verify_verdicts "
                       "WHERE lint_id = $id GROUP BY status", {"id": lint_id}).fetchall()
    result.reused = sum(n for _, n, _, _ in rows)
    result.reused_counts = _tally(rows)

    def load():
        full()  # the verdicts are read back through the relational API (con.sql)
        return _load_verdicts(con, con.sql("SELECT invocation_id, lint_id FROM verify_verdicts WHERE lint_id = $id",
                                           params={"id": lint_id}).to_arrow_table(), lint_id)

    result._load_reused = load
    result.seconds = (datetime.now(timezone.utc) - t0).total_seconds()
    return result


def _tally(rows) -> dict:
    """Verdicts per status, evidence items verified and unresolved, from (status, verdicts,
    verified, unresolved) rows grouped by status."""
    counts = {}
    for status, n, verified, unresolved in rows:
        counts[status] = n
        counts["verified"] = counts.get("verified", 0) + int(verified or 0)
        counts["unresolved"] = counts.get("unresolved", 0) + int(unresolved or 0)
    return counts


def _reused_counts(con, oldest: int) -> dict:
    return _tally(con.execute(
        "SELECT v.status, count(*), sum(v.verified), sum(v.unresolved_count) FROM verify_verdicts v "
        "JOIN verify_reused r USING (lint_id, invocation_id) WHERE v.lint_id >= $oldest GROUP BY v.status",
        {"oldest": oldest}).fetchall())


def _load_verdicts(con, reused: pa.Table, oldest: int) -> list[RunVerdict]:
    """The verdicts a pass reused from earlier passes, as they were recorded."""
    con.register("verify_reused_load", reused)
    try:
        verdicts = {}
        for inv, status, verified, summary, reason, ingest_id in con.execute(
                "SELECT v.invocation_id, v.status, v.verified, v.summary, v.reason, v.ingest_id FROM verify_verdicts v "
                "JOIN verify_reused_load r USING (lint_id, invocation_id) WHERE v.lint_id >= $oldest",
                {"oldest": oldest}).fetchall():
            verdicts[inv] = RunVerdict(inv, status, verified or 0, reason=reason,
                                       text=None if summary is None else summary + "\n", ingest_id=ingest_id)
        for inv, item in con.execute("SELECT u.invocation_id, u.item FROM verify_unresolved u "
                                     "JOIN verify_reused_load r USING (lint_id, invocation_id) WHERE u.lint_id >= $oldest "
                                     "ORDER BY u.invocation_id, u.seq", {"oldest": oldest}).fetchall():
            verdicts[inv].unresolved.append(item)
        for inv, code, message in con.execute("SELECT m.invocation_id, m.code, m.message FROM lint_violations m "
                                               "JOIN verify_reused_load r USING (lint_id, invocation_id) "
                                               "WHERE m.lint_id >= $oldest ORDER BY m.invocation_id, m.seq",
                                               {"oldest": oldest}).fetchall():
            verdicts[inv].codes.append(code)
            verdicts[inv].violations.append(message)
    finally:
        con.unregister("verify_reused_load")
    return list(verdicts.values())


def _judge(con, cfg: int, rules: dict, runs) -> list[RunVerdict]:
    """Run the S rules over every run of the warehouse (or only ``runs``): verdicts in
    invocation_id order."""
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
    return run_verdicts(run_rows, by_run_violations, by_run_unresolved)


def run_verdicts(run_rows, violations: dict[str, list[dict]], unresolved: dict[str, list[str]]) -> list[RunVerdict]:
    """The verdicts (with their exact sources.txt) of runs ``run_rows`` (RUN_ROWS_SQL's rows),
    from their S1/S2 rows with messages (``violations``, per run in report order) and their
    unresolved items (``unresolved``, per run in S0's order): a pure function of the rows, so any
    engine that ran the rule files can call it (groundwork/spark does, in its executors)."""
    verdicts: list[RunVerdict] = []
    checked: list[RunVerdict] = []
    for invocation_id, verifiable, reason, with_copy, ingest_id in run_rows:
        if not verifiable:
            verdicts.append(RunVerdict(invocation_id, "unverifiable",
                                       reason=reason or "the workbench's source check cannot run on this envelope",
                                       ingest_id=ingest_id))
            continue
        vrows = violations.get(invocation_id)
        unres = unresolved.get(invocation_id, [])
        if vrows:
            verdict = RunVerdict(invocation_id, "failed", with_copy - len(vrows), unres,
                                 [r["message"] for r in vrows], [r["code"] for r in vrows], ingest_id=ingest_id)
        else:
            verdict = RunVerdict(invocation_id, "passed", with_copy, unres, ingest_id=ingest_id)
        verdicts.append(verdict)
        checked.append(verdict)
    for verdict, text in zip(checked, sources_texts(checked)):
        verdict.text = text
    return verdicts


def ruleset_hash(rules: dict) -> str:
    """The rule-set hash a verify pass over the S rules ``rules`` records (lints.ruleset_hash):
    their files, templates and every file the verdicts depend on (_TEXT_SOURCES)."""
    return rules_mod.ruleset_hash(tuple(rules.values()), extra=_TEXT_SOURCES)


def record_history(con, result: VerifyResult, *, started_at: datetime, ruleset: str, all_runs: bool = False,
                   ingest_id: int | None = None) -> int:
    """Append one verify pass to lints / verify_verdicts / verify_unresolved / lint_violations
    (``all_runs``: the pass checked every run of the warehouse, lints.all_runs; ``ingest_id``:
    the latest ingest when it read the runs, lints.ingest_id).

    Fresh verdicts are written from Arrow tables; reused ones are copied inside the warehouse
    (the ``verify_reused`` relation registered by ``verify_warehouse``)."""
    pa = arrow()

    naive = lambda t: t.astimezone(timezone.utc).replace(tzinfo=None)  # noqa: E731
    finished = datetime.now(timezone.utc)
    runs = result.fresh
    con.execute("BEGIN TRANSACTION")
    try:
        lint_id = con.execute("SELECT coalesce(max(lint_id), 0) + 1 FROM lints").fetchone()[0]
        failed = result.count("failed") + result.count("unverifiable")
        con.execute("INSERT INTO lints (lint_id, kind, started_at, finished_at, ruleset_hash, rules, tool_version, "
                    "sources_path, runs_checked, runs_failed, config_id, all_runs, ingest_id) "
                    "VALUES (?, 'verify', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [lint_id, naive(started_at), naive(finished), ruleset, ",".join(RULE_CODES),
                     TOOL_VERSION, str(Path(result.sources_path).resolve()), len(runs) + result.reused,
                     failed, result.config_id, all_runs, ingest_id])
        cols = {name: [] for name in ("invocation_id", "status", "passed", "verified", "unresolved_count",
                                      "summary", "reason", "ingest_id")}
        for r in runs:
            cols["invocation_id"].append(r.invocation_id)
            cols["status"].append(r.status)
            cols["passed"].append(r.status == "passed")
            cols["verified"].append(r.verified)
            cols["unresolved_count"].append(len(r.unresolved))
            cols["summary"].append(None if r.text is None else r.text[:-1])
            cols["reason"].append(r.reason)
            cols["ingest_id"].append(r.ingest_id)
        types = {"passed": pa.bool_(), "verified": pa.int32(), "unresolved_count": pa.int32(), "ingest_id": pa.int32()}
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
        if result.reused:
            params = {"lint_id": lint_id, "oldest": result.reused_from}
            con.execute("INSERT INTO verify_verdicts (lint_id, invocation_id, status, passed, verified, unresolved_count,"
                        " summary, reason, ingest_id) SELECT $lint_id, v.invocation_id, v.status, v.passed, v.verified,"
                        " v.unresolved_count, v.summary, v.reason, v.ingest_id"
                        " FROM verify_verdicts v JOIN verify_reused r USING (lint_id, invocation_id)"
                        " WHERE v.lint_id >= $oldest", params)
            con.execute("INSERT INTO verify_unresolved (lint_id, invocation_id, seq, item) SELECT $lint_id,"
                        " u.invocation_id, u.seq, u.item FROM verify_unresolved u JOIN verify_reused r USING (lint_id, invocation_id)"
                        " WHERE u.lint_id >= $oldest", params)
            con.execute("INSERT INTO lint_violations (lint_id, invocation_id, seq, code, message) SELECT $lint_id,"
                        " m.invocation_id, m.seq, m.code, m.message FROM lint_violations m"
                        " JOIN verify_reused r USING (lint_id, invocation_id) WHERE m.lint_id >= $oldest", params)
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return lint_id
