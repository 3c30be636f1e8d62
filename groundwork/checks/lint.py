"""Lint every run of the warehouse with the SQL grounding rules, as the workbench would.

``lint_warehouse`` runs each rule file of sql/rules/ once over all selected runs, renders every
violation row with its Jinja message template (groundwork.checks.messages), combines them in the workbench's report order
(docs/rules.md#lint-order) and renders each run's ``grounding.txt`` (docs/rules.md#grounding-text). Findings beyond the workbench
(GW…) are kept apart and never change the compatible verdict. With ``record=True`` the pass is
appended to the history tables (lints, lint_verdicts, lint_violations).

Re-linting is incremental: a run whose rows have not been reloaded since its latest full lint
(same runs.ingest_id), linted with the same rule files, templates and groundwork version, keeps
that verdict (copied into the new pass, ``lint_verdicts.reused_from``); only new or changed runs
go through the rules. A run that delegates is reused only while its children in the archive are
as they were (its GW3/GW4 findings look at them: ``lint_context``). ``reuse=False`` re-lints
everything.

A full pass over a warehouse file whose schema lint_store holds the derived relations of docs/rules.md#derived-relations (``store.keep_derived`` builds it: the nightly job, ``groundwork lint --keep-derived``) reads them
there (``store.stored``: runs new or reloaded since, when they are few, are derived again), so re-linting every
run after a rule change evaluates the rules without re-deriving. Other passes (no store yet,
some runs only, in-memory or read-only warehouses) derive for the pass alone.

The order of a run's violations needs no global sort: rules are executed in report order
(``Rule.rank``) and each rule's rows come out sorted per run by the rule's ``order`` columns, so
appending row by row per run reproduces the order of docs/rules.md#lint-order.
"""

from __future__ import annotations

import collections
import operator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from groundwork import __version__
from groundwork.checks import current, derived, rules as rules_mod, store
from groundwork.checks import verdicts
from groundwork.checks.verdicts import BASE_SQL as _BASE_SQL
from groundwork.checks.verdicts import CYCLE_REASON, FAILED, PASSED, UNLINTABLE, RunVerdict, base_sql  # noqa: F401
from groundwork.checks.messages import GROUNDING, TEXT_SOURCES, Grounding, grounding_texts, precompile, render_rows
from groundwork.core.engine import arrow, duckdb, full
from groundwork.core.errors import GroundworkError
from groundwork.core.warehouse import ROW_GROUP_SIZE, schema_files, transaction

if TYPE_CHECKING:   # annotations only: pyarrow is imported where a pass builds or reads a batch
    import pyarrow as pa

@dataclass
class LintResult:
    """Everything one lint pass found.

    ``verdicts`` lists every selected run in invocation_id order. Verdicts reused from an earlier
    pass are read from the warehouse the first time ``verdicts`` is used, so keep the connection
    open until then; counts and the exit code never need them.
    """

    batch: "FreshBatch | None"   # None: the pass judged no run itself (a kept pass)
    rules: tuple[rules_mod.Rule, ...]
    ruleset_hash: str
    counts: dict[str, int]
    findings_count: int
    reused: int = 0
    lint_id: int | None = None
    kept: bool = False   # no pass recorded: lint_id is a recorded pass that still holds (checks.current)
    started_at: datetime | None = None
    finished_at: datetime | None = None
    _load_reused: object = None
    _verdicts: list[RunVerdict] | None = None
    _fresh: list[RunVerdict] | None = None
    _released: bool = False

    def release(self) -> None:
        """Let go of the verdicts (a recorded pass: they are in the warehouse). The nightly calls
        it once the pass is recorded, so that 100,000 runs' verdicts are not held through the
        verify and the reports; counts, ids and ``totals_line`` stay."""
        self.batch, self._fresh, self._verdicts, self._released = None, None, None, True

    def _held(self) -> None:
        if self._released:
            raise RuntimeError("the verdicts of this lint pass were released; read them from the warehouse")

    @property
    def fresh(self) -> list[RunVerdict]:
        """The verdicts this pass computed itself (built from ``batch`` on first use)."""
        self._held()
        if self._fresh is None:
            self._fresh = self.batch.verdicts() if self.batch is not None else []
        return self._fresh

    @property
    def verdicts(self) -> list[RunVerdict]:
        self._held()
        if self._verdicts is None:
            if self.reused:
                merged = self.fresh + self._load_reused()
                merged.sort(key=_by_run)
                self._verdicts = merged
            else:
                self._verdicts = self.fresh
        return self._verdicts

    @property
    def exit_code(self) -> int:
        """0 when every run passed, 1 when any failed or could not be linted."""
        return 0 if self.counts[FAILED] == 0 and self.counts[UNLINTABLE] == 0 else 1

    def not_passed(self) -> list[RunVerdict]:
        """The verdicts of runs that failed or could not be linted, in invocation_id order, built
        without building the others (a text report of 100,000 runs prints a few percent)."""
        self._held()
        if self._verdicts is not None:
            return [v for v in self._verdicts if not v.passed]
        out = self.batch.verdicts(not_passed=True) if self.batch is not None else []
        if self.reused:
            out += self._load_reused(not_passed=True)
            out.sort(key=_by_run)
        return out

    def by_id(self) -> dict[str, RunVerdict]:
        return {v.invocation_id: v for v in self.verdicts}

    def totals_line(self) -> str:
        c = self.counts
        where = f" (lint {self.lint_id})" if self.lint_id is not None else ""
        again = f" ({self.reused} unchanged since their last lint)" if self.reused else ""
        return (f"groundwork lint{where}: {sum(c.values())} runs{again}, {c[PASSED]} passed, "
                f"{c[FAILED]} failed, {c[UNLINTABLE]} unlintable; {self.findings_count} groundwork findings")


_by_run = operator.attrgetter("invocation_id")


@dataclass
class FreshBatch:
    """The verdicts of the runs a pass judged itself (in no particular order), column by column
    (Arrow): ``base`` (the _BASE_SQL rows) plus the computed ``status``, counts and grounding.txt
    text (``summary``: dictionary-encoded, each distinct text once; null when unlintable), and
    ``violations`` (invocation_id, seq, code, message, finding), in report order within each
    run: the workbench's violations, then groundwork's findings. RunVerdict objects are built
    only when asked for. The columns not given are empty."""

    base: pa.Table | None = None
    status: pa.Array | None = None
    retrieval_count: pa.Array | None = None
    chat_count: pa.Array | None = None
    summary: pa.Array | None = None
    violations: pa.Table | None = None

    def __post_init__(self) -> None:
        import pyarrow as pa

        string, int32 = pa.string(), pa.int32()
        if self.status is None:
            self.status = pa.array([], string)
        if self.retrieval_count is None:
            self.retrieval_count = pa.array([], int32)
        if self.chat_count is None:
            self.chat_count = pa.array([], int32)
        if self.summary is None:
            self.summary = pa.DictionaryArray.from_arrays(pa.array([], int32), pa.array([], string))
        if self.violations is None:
            self.violations = pa.table({"invocation_id": pa.array([], string), "seq": pa.array([], int32),
                                        "code": pa.array([], string), "message": pa.array([], string),
                                        "finding": pa.array([], pa.bool_())})

    def counts(self) -> collections.Counter:
        """Runs per status."""
        import pyarrow.compute as pc

        return collections.Counter(dict(zip(*(c.to_pylist() for c in pc.value_counts(self.status).flatten()))))

    def findings_count(self) -> int:
        import pyarrow.compute as pc

        return pc.sum(self.violations.column("finding")).as_py() or 0

    def verdict_table(self) -> pa.Table:
        """One row per run, the columns of lint_verdicts a pass writes."""
        import pyarrow as pa

        empty = pa.array([], pa.string())
        base = self.base
        return pa.table({
            "invocation_id": base.column("invocation_id") if base is not None else empty,
            "status": self.status,
            "mode": base.column("mode") if base is not None else empty,
            "retrieval_count": self.retrieval_count,
            "chat_count": self.chat_count,
            "summary": self.summary,
            "reason": base.column("reason") if base is not None else empty,
            "ingest_id": base.column("ingest_id").cast(pa.int32()) if base is not None else pa.array([], pa.int32()),
            "context_key": base.column("context_key") if base is not None else empty,
        })

    def verdicts(self, not_passed: bool = False) -> list[RunVerdict]:
        """RunVerdict objects in invocation_id order (only for runs that did not pass, with
        ``not_passed``: the others are never converted)."""
        import pyarrow.compute as pc

        runs, v = self.verdict_table(), self.violations
        if not_passed:
            runs = runs.filter(pc.not_equal(runs.column("status"), PASSED))
            v = v.filter(pc.is_in(v.column("invocation_id"), value_set=runs.column("invocation_id").combine_chunks()))
        runs = runs.sort_by("invocation_id")  # the pass works in no particular order
        out = [RunVerdict(i, st, m, r, c, [], [], [], text, why)
               for i, st, m, r, c, text, why in zip(*(runs.column(name).to_pylist() for name in (
                   "invocation_id", "status", "mode", "retrieval_count", "chat_count", "summary", "reason")))]
        by_id = {verdict.invocation_id: verdict for verdict in out}
        for invocation_id, code, text, finding in zip(*(v.column(name).to_pylist()
                                                        for name in ("invocation_id", "code", "message", "finding"))):
            verdict = by_id[invocation_id]
            if finding:
                verdict.findings.append((code, text))
            else:
                verdict.codes.append(code)
                verdict.violations.append(text)
        return out


# ------------------------------------------------------------------------------------- the pass


def _scope(con, runs: list[str] | None) -> tuple[list[str] | None, int | None]:
    """The runs asked for, each once (None: every run), and the oldest ingest that loaded one of
    them as it is now (runs.ingest_id; None when every run, or one has none)."""
    pa = arrow()

    if runs is None:
        return None, None
    wanted = list(dict.fromkeys(runs))
    table = pa.table({"invocation_id": pa.array(wanted, pa.string())})
    con.register("lint_wanted", table)
    try:
        known = dict(con.execute(
            "SELECT invocation_id, ingest_id FROM runs WHERE invocation_id IN (SELECT invocation_id FROM lint_wanted)").fetchall())
    finally:
        con.unregister("lint_wanted")
    unknown = [r for r in wanted if r not in known]
    if unknown:
        more = f" (and {len(unknown) - 3} more)" if len(unknown) > 3 else ""
        raise GroundworkError(f"run(s) not in the warehouse: {', '.join(unknown[:3])}{more}")
    loaded = known.values()
    return wanted, (None if not loaded or None in loaded else min(loaded))


# With a pass that reads lint_store without refreshing it first: whether each run is as the
# store was brought up to date with (same ingest_id).
_KEPT = ",\n       coalesce(r.ingest_id = k.ingest_id, false) AS kept"
_KEPT_JOIN = "LEFT JOIN {store}.derived_runs k ON k.invocation_id = r.invocation_id\n"

# Verdicts that still hold: computed with the same rules, templates and tool version, on the same
# run rows (ingest_id), while the delegated children its GW3/GW4 findings look at are as they were
# (context_key), by the latest pass that judged every run (lints.all_runs: it holds every run's
# verdict then, fresh or carried over) or by any pass since (the watch's passes over a few runs:
# each run's latest verdict counts, however many such passes ran). Without such a pass (passes
# recorded before schema_version 3) the latest three are looked at. Filtering on lint_id first
# lets DuckDB skip older history. The latest candidate is read alone first (usually it holds
# every unchanged run: one pass's rows, no grouping); the older ones only for the runs it does not hold.
_CANDIDATES_SQL = """
WITH same AS (
    SELECT lint_id, all_runs, ingest_id FROM lints
    WHERE kind = 'lint' AND all_rules AND ruleset_hash = $ruleset_hash AND tool_version = $tool_version)
SELECT lint_id, ingest_id FROM same
WHERE lint_id >= coalesce((SELECT max(lint_id) FROM same WHERE all_runs),
                          (SELECT min(lint_id) FROM (SELECT lint_id FROM same ORDER BY lint_id DESC LIMIT 3)))
ORDER BY lint_id DESC
"""
_REUSABLE_LATEST_SQL = """
SELECT v.invocation_id, v.lint_id
FROM lint_verdicts v
JOIN runs r USING (invocation_id)
LEFT JOIN {context} x USING (invocation_id)
WHERE v.lint_id = $latest
  AND v.ingest_id = r.ingest_id AND v.context_key IS NOT DISTINCT FROM x.context_key{only}
"""
_REUSABLE_SQL = """
SELECT v.invocation_id, max(v.lint_id) AS lint_id
FROM lint_verdicts v
JOIN runs r USING (invocation_id)
LEFT JOIN {context} x USING (invocation_id)
WHERE v.lint_id >= $oldest AND v.lint_id IN (SELECT lint_id FROM lint_candidates)
  AND v.invocation_id NOT IN (SELECT invocation_id FROM lint_reused_latest)
  AND v.ingest_id = r.ingest_id AND v.context_key IS NOT DISTINCT FROM x.context_key{only}
GROUP BY v.invocation_id
"""
# The delegating runs' context keys (the view lint_context) that the reuse queries and the base
# query read: for a pass over a few runs (a watch batch, `lint RUN...`, a nightly after a few new
# runs) only theirs, the ids bound as a list, whose filter DuckDB moves into the view's scan of
# delegations; a semi-join with the scope is applied after the view's GROUP BY, so every run's key
# was computed (a watch batch of two runs at 100,000 runs: 30-50 ms per query, three queries).
# For more runs, every run's (a long list costs more than the whole view).
_CONTEXT = "lint_context"
_CONTEXT_OF = "(SELECT * FROM lint_context WHERE list_contains($wanted_ids, invocation_id))"
_LISTED_RUNS = 1000


# Besides the rule files and their message templates, the verdicts depend on these files: a
# change to any of them changes the rule-set hash, so no verdict is reused across it.
_TEXT_SOURCES = TEXT_SOURCES + (Path(__file__), Path(verdicts.__file__), Path(rules_mod.__file__), Path(derived.__file__),
                                *schema_files())


def lint_warehouse(con: duckdb.DuckDBPyConnection, *, codes: list[str] | None = None,
                   runs: list[str] | None = None, record: bool = True, reuse: bool = True,
                   rules_dir: Path | None = None, same_pass: bool = False, keep_store: bool = False) -> LintResult:
    """Lint every run of the warehouse (or only ``runs``) with the rules (or only ``codes``).

    Runs ingest marked unlintable, runs whose span tree has a reachable cycle, and runs the
    workbench crashes on past its early stops (docs/rules.md#early-stops) get status
    ``unlintable`` (never ``passed``). With ``record`` the pass is appended to the history. With
    ``reuse`` (and all rules) runs unchanged since their latest full lint keep that verdict.
    With ``same_pass`` too (the nightly job: every run, every rule), when nothing the verdicts
    depend on changed since a recorded pass of every run (``checks.current``), no pass is
    recorded: the result is that pass's (``kept``). With ``keep_store`` (the nightly job), a
    pass over the changed runs only also brings lint_store up to date with what it derived, when
    that is every run the store lacks (``store.keep_from_pass``).
    """
    started = datetime.now(timezone.utc)
    registry = rules_mod.load_rules(rules_dir or rules_mod.RULES_DIR)
    chosen = rules_mod.select(registry, codes)
    all_rules = len(chosen) == len(registry)
    ruleset = ruleset_hash(chosen)
    if same_pass and record and reuse and all_rules and runs is None:
        kept = current.current_pass(con, "lint", ruleset, __version__)
        if kept is not None:
            return _kept_pass(con, kept, chosen, ruleset, started)
    pa = arrow()   # here: a kept pass needs none
    import pyarrow.compute as pc

    read_after = current.latest_ingest(con) if record else None  # the runs are read as this ingest left them
    wanted, loaded_since = _scope(con, runs)
    registered: list[str] = []
    try:
        if wanted is not None:
            con.register("lint_wanted", pa.table({"invocation_id": pa.array(wanted, pa.string())}))
            registered.append("lint_wanted")
        reused = pa.table({"invocation_id": pa.array([], pa.string()), "lint_id": pa.array([], pa.int32())})
        candidates = []
        if reuse and all_rules:
            rows = con.execute(_CANDIDATES_SQL, {"ruleset_hash": ruleset, "tool_version": __version__}).fetchall()
            # A verdict is reused only on the run rows it judged (ingest_id), and a pass judges
            # rows loaded by its lints.ingest_id or before: runs all loaded after every candidate
            # pass read the runs (a watch batch of new runs) have none to look up.
            read = [ingest_id for _, ingest_id in rows]
            if loaded_since is None or None in read or loaded_since <= max(read, default=loaded_since):
                candidates = [lint_id for lint_id, _ in rows]
        listed = wanted is not None and len(wanted) <= _LISTED_RUNS
        context, by_list = (_CONTEXT_OF, {"wanted_ids": wanted}) if listed else (_CONTEXT, {})
        if candidates:
            con.register("lint_candidates", pa.table({"lint_id": pa.array(candidates, pa.int32())}))
            registered.append("lint_candidates")
            only = " AND v.invocation_id IN (SELECT invocation_id FROM lint_wanted)" if wanted is not None else ""
            reused = con.sql(_REUSABLE_LATEST_SQL.format(only=only, context=context),
                             params={"latest": candidates[0], **by_list}).to_arrow_table()
        in_scope = len(wanted) if wanted is not None else con.execute("SELECT count(*) FROM runs").fetchall()[0][0]
        if len(candidates) > 1 and reused.num_rows < in_scope:
            con.register("lint_reused_latest", reused)
            registered.append("lint_reused_latest")
            older = con.sql(_REUSABLE_SQL.format(only=only, context=context),
                            params={"oldest": min(candidates), **by_list}).to_arrow_table()
            reused = pa.concat_tables([reused, older.cast(reused.schema)])
        # The oldest pass a reused verdict comes from: the queries copying them skip older history.
        oldest = pc.min(reused.column("lint_id")).as_py() if reused.num_rows else min(candidates, default=0)
        con.register("lint_reused", reused)
        registered.append("lint_reused")
        if reused.num_rows == in_scope:
            scope_query = "SELECT invocation_id FROM runs WHERE false"  # nothing changed
        elif reused.num_rows:
            only = " AND invocation_id IN (SELECT invocation_id FROM lint_wanted)" if wanted is not None else ""
            scope_query = ("SELECT invocation_id FROM runs WHERE invocation_id NOT IN "
                           f"(SELECT invocation_id FROM lint_reused){only}")
        elif wanted is not None:
            scope_query = "SELECT invocation_id FROM lint_wanted"
        else:
            scope_query = None
        batch = _lint_fresh(con, chosen, scope_query, keep_store=keep_store and record, read_after=read_after)
        findings_count = batch.findings_count()
        counts = batch.counts()
        if reused.num_rows:
            for status, n in con.execute("SELECT v.status, count(*) FROM lint_verdicts v JOIN lint_reused r "
                                         "USING (lint_id, invocation_id) WHERE v.lint_id >= $oldest GROUP BY v.status",
                                         {"oldest": oldest}).fetchall():
                counts[status] += n
            findings_count += con.execute("SELECT count(*) FROM lint_violations m JOIN lint_reused r USING (lint_id, invocation_id) "
                                          "WHERE m.lint_id >= $oldest AND m.code LIKE 'GW%'", {"oldest": oldest}).fetchall()[0][0]
        result = LintResult(batch=batch, rules=chosen, ruleset_hash=ruleset,
                            counts={PASSED: counts[PASSED], FAILED: counts[FAILED], UNLINTABLE: counts[UNLINTABLE]},
                            findings_count=findings_count, reused=reused.num_rows, started_at=started,
                            _load_reused=lambda not_passed=False: _load_verdicts(con, reused, oldest, not_passed))
        result.finished_at = datetime.now(timezone.utc)
        if record:
            result.lint_id = record_lint(con, result, all_rules=all_rules, all_runs=wanted is None, oldest=oldest,
                                         ingest_id=read_after)
    finally:
        for name in registered:
            con.unregister(name)
    return result


def _kept_pass(con, lint_id: int, chosen, ruleset: str, started: datetime) -> LintResult:
    """The result of recorded pass ``lint_id``, which still holds for every run: its counts
    read back, its verdicts when first used."""
    counts = collections.Counter(dict(con.execute(
        "SELECT status, count(*) FROM lint_verdicts WHERE lint_id = $id GROUP BY status", {"id": lint_id}).fetchall()))
    findings = con.execute("SELECT count(*) FROM lint_violations WHERE lint_id = $id AND code LIKE 'GW%'",
                           {"id": lint_id}).fetchall()[0][0]

    def load(not_passed: bool = False) -> list[RunVerdict]:
        full()  # the verdicts are read through the relational API (con.sql)
        reused = con.sql("SELECT invocation_id, lint_id FROM lint_verdicts WHERE lint_id = $id",
                         params={"id": lint_id}).to_arrow_table()
        return _load_verdicts(con, reused, lint_id, not_passed)

    return LintResult(batch=None, rules=chosen, ruleset_hash=ruleset,
                      counts={PASSED: counts[PASSED], FAILED: counts[FAILED], UNLINTABLE: counts[UNLINTABLE]},
                      findings_count=findings, reused=sum(counts.values()), lint_id=lint_id, kept=True,
                      started_at=started, finished_at=datetime.now(timezone.utc), _load_reused=load)


def _lint_fresh(con, chosen, scope_query: str | None, keep_store: bool = False,
                read_after: int | None = None) -> FreshBatch:
    """Run the rules over the runs ``scope_query`` selects (all runs when None); with
    ``keep_store``, bring lint_store up to date from what a pass over some runs derived
    (``_keep_scope``; ``read_after``: the latest ingest when the pass read the runs)."""
    batch = FreshBatch()
    listed = None
    if scope_query is not None:
        first = [r[0] for r in con.execute(f"SELECT invocation_id FROM ({scope_query}) AS s LIMIT {_LISTED_RUNS + 1}").fetchall()]
        if not first:
            return batch
        if len(first) <= _LISTED_RUNS:
            listed = first
    if scope_query is None and store.store_readable(con):
        runs = store.store_runs_agree(con)
        if runs is not None:
            # The usual full lint after keep_derived: no run changed since. The rules start on
            # the store at once (without the exact comparison of every run first, ~20 ms);
            # the base query compares each run's ingest_id with the store's, and when one
            # differs the pass is done again the long way (refreshing the store first).
            with store.stored(con, None) as workspace:
                outcome = _evaluate(workspace, chosen, None, kept_runs=runs)
            if outcome is not None:
                _assemble(batch, *outcome)
                return batch
    changed = store.store_changes(con) if scope_query is None else None
    stale = store.store_changes(con, store.REBUILD_SHARE) if keep_store and scope_query is not None else None
    if changed is not None:
        context = store.stored(con, changed)  # every run: the relations kept in the warehouse
    else:
        context = derived.materialised(con, scope_query=scope_query)
    with context as workspace:
        outcome = _evaluate(workspace, chosen, scope_query, listed=listed)
        if stale is not None:
            _keep_scope(con, workspace, stale, read_after)
    _assemble(batch, *outcome)
    return batch


def _keep_scope(con, workspace: derived.Workspace, stale: pa.Table, read_after: int | None) -> None:
    """Bring lint_store up to date from the relations ``workspace`` derived for the pass's runs,
    when they include every run whose stored rows are stale (``stale``, present ones; the removed
    ones leave): each changed run is then derived once a night, not again by keep_derived."""
    pa = arrow()
    import pyarrow.compute as pc

    scope = con.sql(f"SELECT invocation_id FROM {workspace.schema}.lint_scope").to_arrow_table().column(0)
    stale_present = pc.filter(stale.column("invocation_id"), stale.column("present"))
    if not pc.all(pc.is_in(stale_present, value_set=scope)).as_py():
        return   # keep_derived derives the others
    workspace.wait()
    removed = pc.filter(stale.column("invocation_id"), pc.invert(stale.column("present")))
    changed = pa.table({"invocation_id": pa.concat_arrays([scope.combine_chunks(), removed.combine_chunks()]),
                        "present": pa.concat_arrays([pa.repeat(pa.scalar(True), len(scope)),
                                                     pa.repeat(pa.scalar(False), len(removed))])})
    store.keep_from_pass(con, workspace.schema, changed, read_after)


def _evaluate(workspace: derived.Workspace, chosen, scope_query: str | None,
              kept_runs: int | None = None, listed: list[str] | None = None) -> tuple[pa.Table, pa.Table] | None:
    """Run the base query and every rule in ``workspace``; return the base rows and every rule
    row rendered (invocation_id, code, message, finding). With ``kept_runs`` (a pass reading
    lint_store as it is): None when the store does not hold exactly the ``kept_runs`` runs of
    the warehouse as they are now. ``listed``: the ids ``scope_query`` selects, when they are few
    (``_CONTEXT_OF``)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    # Every query is queued at once; the workers run them as their inputs are ready while
    # this thread renders the results in report order.
    where = "WHERE r.invocation_id IN (SELECT invocation_id FROM lint_scope)" if scope_query is not None else ""
    check = kept_runs is not None
    base_query = _BASE_SQL.format(where=where, kept=_KEPT if check else "",
                                  kept_join=_KEPT_JOIN.format(store=workspace.schema) if check else "",
                                  context=_CONTEXT if listed is None else _CONTEXT_OF)
    base_future = workspace.submit_arrow(base_query, {"cycle_reason": CYCLE_REASON,
                                                      **({"wanted_ids": listed} if listed is not None else {})})
    futures = [workspace.submit_rule(rule) for rule in chosen]
    # While the workers start: compile the message templates (~0.1 s in a new process).
    precompile([rule.template for rule in chosen])
    precompile([GROUNDING], "v")
    if check:
        base = base_future.result()
        if base.num_rows != kept_runs or not pc.all(base.column("kept")).as_py():
            return None  # leaving the workspace cancels the queries not started yet
        base = base.drop_columns(["kept"])
    # Every violation and finding row, rule after rule (in report order, each rule's rows
    # sorted per run): a stable sort by run then gives each run's report in order. Each rule's
    # rows become Arrow arrays as soon as they are rendered, while later rules still run.
    found: dict[str, list[pa.Array]] = {"invocation_id": [], "code": [], "message": [], "finding": []}
    for rule, future in zip(chosen, futures):
        columns, rows = future.result()
        if not rows:
            continue
        found["message"].append(pa.array(render_rows(rule.template, columns, rows), pa.string()))
        found["invocation_id"].append(pa.array([row[0] for row in rows], pa.string()))
        found["code"].append(pa.repeat(pa.scalar(rule.code, pa.string()), len(rows)))
        found["finding"].append(pa.repeat(pa.scalar(rule.kind != "rule", pa.bool_()), len(rows)))
    if not check:
        base = base_future.result()
    types = {"invocation_id": pa.string(), "code": pa.string(), "message": pa.string(), "finding": pa.bool_()}
    return base, pa.table({name: pa.chunked_array(chunks, types[name]) for name, chunks in found.items()})


def _positions(n: int) -> pa.Array:
    """0, 1, ..., n - 1 (int64)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    return pc.subtract(pc.cumulative_sum(pa.repeat(pa.scalar(1, pa.int64()), n)), 1)


def _group_starts(ids: pa.Array) -> tuple[pa.Array, pa.Array]:
    """For ids sorted so that equal ones are adjacent: the positions where a group starts, and
    for every row the position of its group's start."""
    import pyarrow as pa
    import pyarrow.compute as pc

    n = len(ids)
    if n == 0:
        empty = pa.array([], pa.int64())
        return empty, empty
    change = pc.not_equal(ids.slice(1), ids.slice(0, n - 1))
    is_start = pa.concat_arrays([pa.array([True]), change.combine_chunks() if isinstance(change, pa.ChunkedArray) else change])
    starts = pc.indices_nonzero(is_start)
    group = pc.subtract(pc.cumulative_sum(is_start.cast(pa.int64())), 1)
    return starts, pc.take(starts, group)


def _combine(columns: list[pa.Array]) -> pa.Array:
    """One int64 per row, equal for two rows exactly when all of ``columns`` (integer arrays
    with values >= -1 or null) are equal in both: columns are folded in one at a time, each
    partial key replaced by its dense index so that the next product stays small."""
    import pyarrow as pa
    import pyarrow.compute as pc

    key = None
    for column in columns:
        code = pc.add(pc.fill_null(column.cast(pa.int64()), -2), 2)  # null -> 0, -1 -> 1, v -> v + 2
        if key is None:
            key = code
        else:
            width = pa.scalar((pc.max(code).as_py() or 0) + 1, pa.int64())
            key = pc.add(pc.multiply(pc.dictionary_encode(key).indices.cast(pa.int64()), width), code)
    return key


def _assemble(batch: FreshBatch, base: pa.Table, found: pa.Table) -> None:
    """Give every run of ``base`` its status, counts, grounding.txt text and report, from the
    rule rows ``found`` (invocation_id, code, message, finding; in report order per run), with
    Arrow compute (no Python work per run: 100,000 runs)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    batch.base = base
    ids = base.column("invocation_id").combine_chunks()
    lintable = pc.fill_null(base.column("lintable").combine_chunks(), False)
    # The workbench's violations of runs it cannot lint are not reported (findings are).
    unlintable_ids = pc.filter(ids, pc.invert(lintable))
    if len(unlintable_ids) and found.num_rows:
        found = found.filter(pc.or_(found.column("finding"), pc.invert(pc.is_in(found.column("invocation_id"),
                                                                                 value_set=unlintable_ids))))
    found = found.take(pc.sort_indices(found, sort_keys=[("invocation_id", "ascending")]))  # a stable sort
    v_ids = found.column("invocation_id").combine_chunks()
    _, group_start = _group_starts(v_ids)
    seq = pc.subtract(_positions(found.num_rows), group_start).cast(pa.int32())
    batch.violations = pa.table({"invocation_id": v_ids, "seq": seq, "code": found.column("code"),
                                 "message": found.column("message"), "finding": found.column("finding")})

    # The workbench's messages of each failing run, in order, as a list per run.
    reported = found.filter(pc.invert(found.column("finding")))
    r_ids = reported.column("invocation_id").combine_chunks()
    starts, _ = _group_starts(r_ids)
    failing_ids = pc.take(r_ids, starts)
    offsets = pa.concat_arrays([starts.cast(pa.int32()), pa.array([len(r_ids)], pa.int32())])
    messages = pa.ListArray.from_arrays(offsets, reported.column("message").combine_chunks())
    # A run's grounding.txt depends only on pass/fail, mode, counts and messages: each distinct
    # combination is rendered once. Its key (an integer, see _combine): the counts, the mode
    # and, for a failing run, its message sequence (as dictionary indices).
    message_ids = pa.ListArray.from_arrays(offsets, pc.dictionary_encode(reported.column("message").combine_chunks())
                                           .indices.cast(pa.string()))
    failing_pos = pc.index_in(ids, value_set=failing_ids)
    failing = pc.and_(pc.is_valid(failing_pos), lintable)
    zero = pa.scalar(0, pa.int32())
    n_retrieval = pc.if_else(lintable, base.column("retrieval_count").combine_chunks().cast(pa.int32()), zero)
    n_chat = pc.if_else(lintable, base.column("chat_count").combine_chunks().cast(pa.int32()), zero)
    mode = base.column("mode").combine_chunks()
    texts = pc.dictionary_encode(pc.binary_join(message_ids, ","))  # one per failing run
    text_code = pc.if_else(failing, pc.take(texts.indices, failing_pos), -1)
    key = _combine([n_retrieval, n_chat, pc.dictionary_encode(mode).indices, text_code])
    key = pc.if_else(lintable, key, pa.scalar(None, pa.int64()))
    encoded = pc.dictionary_encode(key)
    batch.status = pc.if_else(lintable, pc.if_else(failing, FAILED, PASSED), UNLINTABLE)
    batch.retrieval_count, batch.chat_count = n_retrieval, n_chat
    # One example run per distinct key renders its text.
    first = pc.index_in(encoded.dictionary, value_set=key)
    examples = zip(pc.take(failing, first).to_pylist(), pc.take(mode, first).to_pylist(),
                   pc.take(n_retrieval, first).to_pylist(), pc.take(n_chat, first).to_pylist(),
                   pc.take(messages, pc.take(failing_pos, first)).to_pylist())
    texts = [text[:-1] for text in grounding_texts([
        Grounding(not fails, m, r, c, list(msgs) if fails else []) for fails, m, r, c, msgs in examples])]
    batch.summary = pa.DictionaryArray.from_arrays(encoded.indices.cast(pa.int32()), pa.array(texts, pa.string()))


def assemble(base: pa.Table, found: pa.Table) -> FreshBatch:
    """The verdicts of the runs of ``base`` (rows of ``base_sql()``) from their rendered rule
    rows ``found`` (invocation_id, code, message, finding; in report order per run): what a pass
    does after its rules ran, for an engine that ran them elsewhere (groundwork/spark)."""
    batch = FreshBatch()
    _assemble(batch, base, found)
    return batch


def ruleset_hash(chosen: tuple[rules_mod.Rule, ...]) -> str:
    """The rule-set hash a pass over rules ``chosen`` records (lints.ruleset_hash): their files,
    templates and every file the texts depend on."""
    return rules_mod.ruleset_hash(chosen, extra=_TEXT_SOURCES)


def _columns(con, sql: str, params: dict) -> list[list]:
    """The result of a query as one Python list per column (via Arrow: cheaper than row tuples)."""
    full()
    table = con.sql(sql, params=params).to_arrow_table()
    return [column.to_pylist() for column in table.columns]


def _load_verdicts(con, reused: pa.Table, oldest: int, not_passed: bool = False) -> list[RunVerdict]:
    """Read the verdicts (and their violations) a pass reused from earlier passes (only those of
    runs that did not pass, with ``not_passed``)."""
    con.register("lint_reused_load", reused)
    only = " AND v.status <> 'passed'" if not_passed else ""
    try:
        params = {"oldest": oldest}
        verdicts = {invocation_id: RunVerdict(invocation_id, status, mode, n_retrieval, n_chat, [], [], [], summary, reason)
                    for invocation_id, status, mode, n_retrieval, n_chat, summary, reason in zip(*_columns(con,
                        "SELECT v.invocation_id, v.status, v.mode, v.retrieval_count, v.chat_count, v.summary, v.reason"
                        " FROM lint_verdicts v JOIN lint_reused_load r USING (lint_id, invocation_id)"
                        " WHERE v.lint_id >= $oldest" + only, params))}
        for invocation_id, code, message in zip(*_columns(con,
                "SELECT m.invocation_id, m.code, m.message FROM lint_violations m"
                " JOIN lint_reused_load r USING (lint_id, invocation_id) WHERE m.lint_id >= $oldest"
                " ORDER BY m.invocation_id, m.seq", params)):
            verdict = verdicts.get(invocation_id)
            if verdict is None:  # a passing run's finding, left out with not_passed
                continue
            if code.startswith("GW"):
                verdict.findings.append((code, message))
            else:
                verdict.codes.append(code)
                verdict.violations.append(message)
    finally:
        con.unregister("lint_reused_load")
    return list(verdicts.values())


# -------------------------------------------------------------------------------------- history


def _naive(moment: datetime) -> datetime:
    return moment.astimezone(timezone.utc).replace(tzinfo=None)


def _in_row_groups(table: pa.Table) -> pa.Table:
    import pyarrow as pa

    return pa.Table.from_batches(table.to_batches(max_chunksize=ROW_GROUP_SIZE), schema=table.schema)


def record_lint(con: duckdb.DuckDBPyConnection, result: LintResult, *, all_rules: bool,
                all_runs: bool = False, oldest: int = 0, ingest_id: int | None = None) -> int:
    """Append one lint pass to the history (lints, lint_verdicts, lint_violations); return its id.
    ``all_runs``: the pass gave every run of the warehouse a verdict (lints.all_runs);
    ``ingest_id``: the latest ingest when it read the runs (lints.ingest_id).

    Fresh verdicts are written from Arrow tables; reused ones are copied inside the warehouse
    (the ``lint_reused`` relation registered by ``lint_warehouse``).
    """
    b = result.batch
    arrow()  # the fresh verdicts are Arrow tables DuckDB scans
    # In batches of one row group: DuckDB then compresses and writes them in parallel.
    verdict_table = _in_row_groups(b.verdict_table())
    violation_table = _in_row_groups(b.violations.drop_columns(["finding"]))
    counts = result.counts
    con.register("lint_verdicts_new", verdict_table)
    con.register("lint_violations_new", violation_table)
    try:
        with transaction(con):
            lint_id = con.execute("SELECT coalesce(max(lint_id), 0) + 1 FROM lints").fetchall()[0][0]
            params = {"lint_id": lint_id}
            reused_params = {"lint_id": lint_id, "oldest": oldest}
            con.execute(
                "INSERT INTO lints (lint_id, kind, started_at, finished_at, ruleset_hash, rules, tool_version,"
                " sources_path, runs_checked, runs_failed, all_rules, all_runs, ingest_id)"
                " VALUES (?, 'lint', ?, ?, ?, ?, ?, NULL, ?, ?, ?, ?, ?)",
                [lint_id, _naive(result.started_at), _naive(result.finished_at), result.ruleset_hash,
                 ",".join(dict.fromkeys(r.code for r in result.rules)), __version__, sum(counts.values()),
                 counts[FAILED] + counts[UNLINTABLE], all_rules, all_runs, ingest_id])
            con.execute(
                "INSERT INTO lint_verdicts (lint_id, invocation_id, status, passed, mode, retrieval_count,"
                " chat_count, summary, reason, ingest_id, reused_from, context_key) SELECT $lint_id, invocation_id, status,"
                " status = 'passed', mode, retrieval_count, chat_count, summary, reason, ingest_id, NULL, context_key"
                " FROM lint_verdicts_new", params)
            con.execute(
                "INSERT INTO lint_violations (lint_id, invocation_id, seq, code, message)"
                " SELECT $lint_id, invocation_id, seq, code, message FROM lint_violations_new", params)
            if result.reused:
                con.execute(
                    "INSERT INTO lint_verdicts (lint_id, invocation_id, status, passed, mode, retrieval_count,"
                    " chat_count, summary, reason, ingest_id, reused_from, context_key) SELECT $lint_id, v.invocation_id,"
                    " v.status, v.passed, v.mode, v.retrieval_count, v.chat_count, v.summary, v.reason, v.ingest_id,"
                    " coalesce(v.reused_from, v.lint_id), v.context_key"
                    " FROM lint_verdicts v JOIN lint_reused r USING (lint_id, invocation_id)"
                    " WHERE v.lint_id >= $oldest", reused_params)
                con.execute(
                    "INSERT INTO lint_violations (lint_id, invocation_id, seq, code, message)"
                    " SELECT $lint_id, m.invocation_id, m.seq, m.code, m.message"
                    " FROM lint_violations m JOIN lint_reused r USING (lint_id, invocation_id)"
                    " WHERE m.lint_id >= $oldest", reused_params)
    finally:
        con.unregister("lint_verdicts_new")
        con.unregister("lint_violations_new")
    return lint_id
