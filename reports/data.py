"""Report data: SQL over the warehouse, returned as plain dicts and lists.

Every query is a file of sql/reports/ (``<name>.sql``, named for what it returns, with a header
comment saying so), run by name with its ``$name`` parameters bound (never pasted). Everything is bounded (top-N) except ``failing_runs``,
which the caller pages. "Failing" means: the grounding verdict is failed or unlintable, or the
source-check verdict is failed or unverifiable. A nightly compares its lint (and verify) pass
with those of a baseline (the previous finished nightly): new, still, resolved or gone, as the
view nightly_changes defines them (docs/schema.md#nightly_changes); ``build_state`` copies the
nightly's rows of it into the temp table the other queries read.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from functools import lru_cache

from groundwork.checks.rules import load_rules, named_params
from groundwork.core import config as _config
from groundwork.core.engine import duckdb
from groundwork.core.paths import SQL_DIR

QUERIES_DIR = SQL_DIR / "reports"


@dataclass(frozen=True)
class Passes:
    """The check passes a report is about, and the baseline they are compared with (a nightly's:
    ``nightly_passes``)."""

    lint_id: int
    verify_id: int | None = None
    baseline_lint_id: int | None = None
    baseline_verify_id: int | None = None
    ingest_id: int | None = None
    nightly_id: int | None = None
    baseline_nightly_id: int | None = None


@lru_cache(maxsize=None)
def query(name: str) -> tuple[str, tuple[str, ...]]:
    """The SQL of sql/reports/<name>.sql and the names of the parameters it uses."""
    sql = (QUERIES_DIR / f"{name}.sql").read_text(encoding="utf-8")
    return sql, named_params(sql)


def execute(con, name: str, /, *, prefix: str = "", **params):
    """Run sql/reports/<name>.sql (after ``prefix``, e.g. a CREATE ... AS) with the ``$name``
    parameters it uses bound from ``params``; the cursor."""
    return execute_sql(con, query(name)[0], prefix=prefix, **params)


def execute_sql(con, sql: str, /, *, prefix: str = "", **params):
    """Run ``sql`` (after ``prefix``) with the ``$name`` parameters it uses bound from ``params``."""
    return con.execute(prefix + sql, {n: params[n] for n in named_params(sql)} or None)


def rows(con, name: str, /, **params) -> list[dict]:
    """The rows of sql/reports/<name>.sql, as dicts by column name."""
    cur = execute(con, name, **params)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row)) for row in cur.fetchall()]


def _one(con, name: str, **params) -> dict:
    found = rows(con, name, **params)
    return found[0] if found else {}


def _top(con, name: str, **params) -> dict:
    """The rows of a top-N query whose ``groups`` column counts the groups in all: the rows (without
    that column), the total and how many more there are."""
    found = rows(con, name, **params)
    total = found[0]["groups"] if found else 0
    for r in found:
        del r["groups"]
    return {"rows": found, "total": total, "more": max(0, total - len(found))}


ISO_FORMAT = "%Y-%m-%dT%H:%M:%SZ"   # times in the reports (UTC); a query that formats one itself is given it ($iso)


def _iso(value) -> str | None:
    if value is None:
        return None
    if isinstance(value, _dt.datetime):
        return value.strftime(ISO_FORMAT)
    return str(value)


def nightly_passes(con, nightly_id: int, ingest_id: int | None = None) -> Passes:
    """The passes of nightly ``nightly_id`` and of its baseline, as the view nightly_passes has
    them (the nightly's row must record its lint and verify passes)."""
    row = _one(con, "nightly_passes", nightly=nightly_id)
    return Passes(lint_id=row["lint_id"], verify_id=row["verify_id"],
                  baseline_lint_id=row["baseline_lint_id"], baseline_verify_id=row["baseline_verify_id"],
                  ingest_id=ingest_id, nightly_id=nightly_id, baseline_nightly_id=row["baseline_nightly_id"])


def finding_severities(config=None) -> dict[str, str]:
    """The severity of every groundwork finding code (GW...) under ``config`` (a
    groundwork.core.config.Config; None: the defaults, docs/rules.md#severities). A ConfigError
    names a code of the file that is no finding code."""
    rules = load_rules(kinds=("rule", "finding", "source"))
    return _config.severities(config or _config.Config(), {r.code for r in rules if r.kind == "finding"},
                              {r.code for r in rules if r.kind != "finding"})


def record_severities(con, nightly_id: int, severities: dict[str, str]) -> None:
    """Record the finding severities of nightly ``nightly_id`` (nightly_severities), which
    nightly_changes reads: a finding of severity error fails its run."""
    con.execute("DELETE FROM nightly_severities WHERE nightly_id = ?", [nightly_id])
    con.execute("INSERT INTO nightly_severities SELECT $nightly, unnest($codes), unnest($severities)",
                {"nightly": nightly_id, "codes": list(severities), "severities": list(severities.values())})


def warnings(con, p: Passes) -> list[dict]:
    """Per finding code of severity warn in the nightly: its runs and findings in the lint pass."""
    return rows(con, "report_warnings", nightly=p.nightly_id, lint=p.lint_id)


def warned_runs(con, p: Passes, per_code: int) -> dict[str, list[str]]:
    """Per finding code of severity warn: the first ``per_code`` runs with it in the lint pass."""
    out: dict[str, list[str]] = {}
    for r in rows(con, "warned_runs", nightly=p.nightly_id, lint=p.lint_id, per_code=per_code):
        out.setdefault(r["code"], []).append(r["invocation_id"])
    return out


def build_violations(con, nightly_id: int | None) -> None:
    """(Re)create the temp view report_violations every report query reads: lint_violations
    without nightly ``nightly_id``'s finding codes of severity off (None: none left out); and the
    temp table report_warn_codes of its codes of severity warn, which the warnings read."""
    execute(con, "report_hidden_codes", nightly=nightly_id, prefix="CREATE OR REPLACE TEMP TABLE report_hidden_codes AS\n")
    execute(con, "report_warn_codes", nightly=nightly_id, prefix="CREATE OR REPLACE TEMP TABLE report_warn_codes AS\n")
    execute(con, "report_violations", prefix="CREATE OR REPLACE TEMP VIEW report_violations AS\n")


def build_state(con, p: Passes, *, keep: str | None = None) -> None:
    """(Re)create ``report_state``: nightly ``p.nightly_id``'s rows of nightly_changes (one per
    run judged now or failing in the baseline, with its verdicts and change class), with the
    run's agent, mode and violation codes. First the temp view report_violations every report
    query reads: lint_violations without the nightly's finding codes of severity off. For a
    nightly, its per-nightly rows are recorded too (keep_counts: since which nightly each failing
    run fails, the trend counts), after those of earlier nightlies an older groundwork did not
    record (count_earlier).

    ``keep`` (a nightly's: the digest of what its rows read besides the baseline, reports/sections.py
    ``key``): the rows are kept in the warehouse (STATE_TABLE) for the next nightly, and taken
    from there when the kept ones are the baseline's under the same key and the nightly's passes
    are the baseline's (sql/reports/state_same_passes.sql: every failing run still failing, no
    row to compute). Without it, a temp table. Beside it, the temp table report_pass_violations
    (sql/reports/report_pass_violations.sql): the violations of ``p``'s passes, which the
    per-rule, per-mode and per-agent counts, the metrics and violations.jsonl read."""
    build_violations(con, p.nightly_id)
    # The baseline as nightly_changes has it (the view nightly_passes), whatever ``p`` says.
    passes = _one(con, "nightly_passes", nightly=p.nightly_id)
    baseline = passes.get("baseline_nightly_id")
    if p.nightly_id is not None:
        count_earlier(con, p.nightly_id, baseline)
    # The shortcut's passes are the view's: those of ``p`` when it is the nightly's (nightly_passes).
    own = (p.lint_id, p.verify_id) == (passes.get("lint_id"), passes.get("verify_id"))
    sql = state_sql(passes, shortcut=own)
    params = {"nightly": p.nightly_id, "baseline": baseline, "lint": p.lint_id, "verify": p.verify_id}
    _drop_state(con)
    taken = False
    if keep is None or p.nightly_id is None or not own:
        execute_sql(con, sql, prefix="CREATE TEMP TABLE report_state AS\n", **params)  # what every report query reads
    else:
        taken = same_passes(passes) and _kept_key(con) == (baseline, keep)
        if taken:
            try:
                execute(con, "state_same_passes", prefix="CREATE TEMP VIEW report_state AS\n")
            except duckdb.CatalogException:   # the table dropped by hand, its key row left
                taken = False
        if not taken:
            # The key row goes first and comes back last: rows without it are never taken.
            con.execute(f"CREATE SCHEMA IF NOT EXISTS {STATE_STORE}")
            con.execute(f"CREATE OR REPLACE TABLE {STATE_KEY} (nightly_id INTEGER, key VARCHAR)")
            execute_sql(con, sql, prefix=f"CREATE OR REPLACE TABLE {STATE_TABLE} AS\n", **params)
            con.execute(f"CREATE TEMP VIEW report_state AS SELECT * FROM {STATE_TABLE}")
        con.execute(f"DELETE FROM {STATE_KEY}")
        con.execute(f"INSERT INTO {STATE_KEY} VALUES (?, ?)", [p.nightly_id, keep])
    # The passes' violations with their runs' state, which several report queries count.
    execute(con, "report_pass_violations", lint=p.lint_id, verify=p.verify_id,
            prefix="CREATE OR REPLACE TEMP TABLE report_pass_violations AS\n")
    if p.nightly_id is not None:
        keep_counts(con, p.nightly_id, baseline, as_baseline=taken)


# The rows of report_state of the latest nightly that built them, and the row saying which
# nightly that was and under which key (build_state's ``keep``); the view report_state of each
# nightly with nothing changed since reads them (sql/reports/state_same_passes.sql).
STATE_STORE = "report_store"
STATE_TABLE = f"{STATE_STORE}.state"
STATE_KEY = f"{STATE_STORE}.state_key"


def _kept_key(con) -> tuple | None:
    """(nightly, key) of the kept rows of report_state, or None."""
    try:
        found = con.execute(f"SELECT nightly_id, key FROM {STATE_KEY}").fetchall()
    except duckdb.CatalogException:
        return None
    return tuple(found[0]) if len(found) == 1 else None


def _drop_state(con) -> None:
    """Drop this connection's report_state, a temp table or a temp view."""
    for kind, in con.execute("SELECT 'TABLE' FROM duckdb_tables() WHERE temporary AND table_name = 'report_state' "
                             "UNION ALL SELECT 'VIEW' FROM duckdb_views() WHERE temporary AND view_name = 'report_state'").fetchall():
        con.execute(f"DROP {kind} temp.report_state")


def same_passes(passes: dict) -> bool:
    """Whether a nightly (its row of the view nightly_passes) compares its passes with themselves:
    it has a baseline, whose lint pass it names, and the baseline's verify pass or none (a nightly
    with nothing changed names the passes that still hold: groundwork.checks.current)."""
    return (passes.get("baseline_nightly_id") is not None and passes.get("lint_id") is not None
            and passes.get("lint_id") == passes.get("baseline_lint_id")
            and (passes.get("verify_id") is None or passes.get("verify_id") == passes.get("baseline_verify_id")))


def state_sql(passes: dict, *, shortcut: bool = True) -> str:
    """The query of report_state for a nightly (its row of the view nightly_passes): report_state.sql
    over ``report_changes``, the nightly's rows of the view nightly_changes (changes_all) or, when
    its passes are its baseline's (``same_passes``; unless ``shortcut`` is False), their equal from
    changes_same_passes, which does not join each pass with itself (every failing run is still
    failing)."""
    changes = "changes_same_passes" if shortcut and same_passes(passes) else "changes_all"
    return (f"WITH report_changes AS (\n{query(changes)[0]}\n)\n"
            f"SELECT * FROM (\n{query('report_state')[0]}\n)")


def count_earlier(con, nightly_id: int, baseline: int | None) -> None:
    """The per-nightly rows (nightly_counted) of the finished nightlies before ``nightly_id``
    that have none (recorded by an older groundwork), recomputed from the history: the trend
    counts of each, and the failing streaks of ``baseline`` (the only earlier nightly whose
    nightly_failing rows a nightly reads)."""
    missing = [r[0] for r in execute(con, "counts_missing", nightly=nightly_id).fetchall()]
    if not missing:
        return
    con.execute("DELETE FROM nightly_agent_counts WHERE nightly_id IN (SELECT UNNEST($n))", {"n": missing})
    execute(con, "agent_counts_from_history", nightlies=missing, prefix="INSERT INTO nightly_agent_counts\n")
    con.execute("DELETE FROM nightly_rule_counts WHERE nightly_id IN (SELECT UNNEST($n))", {"n": missing})
    execute(con, "rule_counts_from_history", nightlies=missing, prefix="INSERT INTO nightly_rule_counts\n")
    if baseline in missing:
        con.execute("DELETE FROM nightly_failing WHERE nightly_id = $b", {"b": baseline})
        con.execute("INSERT INTO nightly_failing SELECT nightly_id, invocation_id, since_nightly_id "
                    "FROM failing_streaks WHERE nightly_id = $b", {"b": baseline})
    con.execute("INSERT INTO nightly_counted SELECT UNNEST($n)", {"n": missing})


def keep_counts(con, nightly_id: int, baseline: int | None, *, as_baseline: bool = False) -> None:
    """Record nightly ``nightly_id``'s per-nightly rows from report_state: its failing runs and
    the first nightly of their streaks (nightly_failing), its per-agent and per-rule counts (the
    trends). Rows of nightly_failing no later nightly reads (before ``baseline``, or of nightlies
    that did not finish) are dropped. ``as_baseline``: report_state is the baseline's kept rows
    (state_same_passes.sql: the same passes judged the same runs), so the counts are the
    baseline's, copied instead of counted again."""
    n, nb = {"n": nightly_id}, {"n": nightly_id, "b": baseline}
    for table in ("nightly_failing", "nightly_agent_counts", "nightly_rule_counts", "nightly_counted"):
        con.execute(f"DELETE FROM {table} WHERE nightly_id = $n", n)
    con.execute("INSERT INTO nightly_failing SELECT $n, invocation_id, since_nightly_id FROM report_state WHERE failing", n)
    con.execute("DELETE FROM nightly_failing WHERE nightly_id < $n AND nightly_id IS DISTINCT FROM $b", nb)
    if as_baseline:
        con.execute("INSERT INTO nightly_agent_counts SELECT $n, agent_id, runs, failing "
                    "FROM nightly_agent_counts WHERE nightly_id = $b", nb)
        con.execute("INSERT INTO nightly_rule_counts SELECT $n, lint_id, code, violations, runs "
                    "FROM nightly_rule_counts WHERE nightly_id = $b", nb)
    else:
        execute(con, "nightly_agent_counts", nightly=nightly_id, prefix="INSERT INTO nightly_agent_counts\n")
        execute(con, "rule_counts_from_history", nightlies=[nightly_id], prefix="INSERT INTO nightly_rule_counts\n")
    con.execute("INSERT INTO nightly_counted VALUES ($n)", n)


def totals(con, p: Passes) -> dict:
    t = _one(con, "totals_runs")
    t.update(_one(con, "totals_violations", lint=p.lint_id, verify=p.verify_id))
    t.update(_one(con, "totals_evidence", verify=p.verify_id))
    t["has_baseline"] = p.baseline_lint_id is not None
    t["has_verify"] = p.verify_id is not None
    return {k: (int(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else x) for k, x in t.items()}


def passes_info(con, p: Passes) -> dict:
    """The lint/verify/ingest rows the report is about (ids, times, rule-set hash)."""
    def lint(lid):
        if lid is None:
            return None
        row = _one(con, "pass", lint=lid)
        for k in ("started_at", "finished_at"):
            if k in row:
                row[k] = _iso(row[k])
        return row or {"lint_id": lid}

    ingest = None
    if p.ingest_id is not None:
        ingest = _one(con, "ingest", ingest=p.ingest_id)
        for k in ("started_at", "finished_at"):
            if k in ingest:
                ingest[k] = _iso(ingest[k])
    return {
        "lint": lint(p.lint_id),
        "verify": lint(p.verify_id),
        "baseline_lint": lint(p.baseline_lint_id),
        "baseline_verify": lint(p.baseline_verify_id),
        "ingest": ingest or None,
    }


def by_rule(con) -> list[dict]:
    """Per rule code: violations, runs, runs new tonight (of the passes build_state ran for)."""
    return rows(con, "violations_by_rule")


def by_rule_mode(con) -> dict:
    """Violations by rule × grounding mode (a small matrix: rules are few, modes are few), of the
    passes build_state ran for."""
    found = rows(con, "violations_by_rule_mode")
    counts: dict[str, dict[str, int]] = {}
    mode_totals: dict[str, int] = {}
    for r in found:
        counts.setdefault(r["code"], {})[r["mode"]] = r["violations"]
        mode_totals[r["mode"]] = mode_totals.get(r["mode"], 0) + r["violations"]
    known = ["retrieval", "input_only", "none", "delegation"]
    modes = [m for m in known if m in mode_totals]
    others = sorted((m for m in mode_totals if m not in known), key=lambda m: (-mode_totals[m], m))  # ties by name: the same page every night
    # Hostile or broken modes are bounded: the 6 most frequent are shown, the rest summed.
    shown_others = others[:6]
    rest = others[6:]
    modes += shown_others
    matrix = []
    for code in sorted(counts):
        cells = [counts[code].get(m, 0) for m in modes]
        if rest:
            cells.append(sum(counts[code].get(m, 0) for m in rest))
        matrix.append({"code": code, "cells": cells, "total": sum(counts[code].values())})
    if rest:
        modes.append(f"{len(rest)} other modes")
    return {"modes": modes, "rows": matrix}


def by_rule_agent_mode(con, top: int) -> dict:
    """Violations by rule × agent × grounding mode, largest first, top N (and how many more), of
    the passes build_state ran for."""
    return _top(con, "violations_by_rule_agent_mode", top=top)


def trend_by_day(con, days: int = 90) -> list[dict]:
    """Runs judged now, failing and new, by UTC day of run completion (the latest ``days`` days)."""
    found = rows(con, "trend_by_day", days=days)
    found.reverse()
    for r in found:
        r["day"] = "unknown" if r["day"] is None else r["day"].isoformat()
    return found


def trend_by_lint(con, p: Passes, nights: int = 30) -> dict:
    """One point per finished nightly (and the current one): runs judged, failing, new, resolved,
    and violations per rule; marks nights whose rule set changed."""
    points = rows(con, "trend_by_nightly", nightly=p.nightly_id, nights=nights)
    points.reverse()
    prev_hash = None
    for i, pt in enumerate(points):
        pt["at"] = _iso(pt["at"])
        pt["rules_changed"] = i > 0 and pt["ruleset_hash"] != prev_hash
        prev_hash = pt["ruleset_hash"]
    per_rule: dict[str, dict[int, int]] = {}
    rule_runs: dict[str, dict[int, int]] = {}
    if points:
        for r in rows(con, "rules_by_nightly", nightlies=[pt["nightly_id"] for pt in points]):
            per_rule.setdefault(r["code"], {})[r["lint_id"]] = r["n"]
            rule_runs.setdefault(r["code"], {})[r["lint_id"]] = r["runs"]
    recent = points[-10:]
    rule_rows = [
        {"code": code, "cells": [by.get(pt["lint_id"], 0) + by.get(pt["verify_id"], 0) for pt in recent]}
        for code, by in sorted(per_rule.items())
    ]
    # Per rule, each nightly's runs with a violation of it (a source-check code counts the verify
    # pass's runs, the others the lint pass's).
    rule_series = [
        {"code": code, "points": [{"nightly_id": pt["nightly_id"], "runs": by.get(pt["lint_id"], 0) + by.get(pt["verify_id"], 0)}
                                  for pt in points]}
        for code, by in sorted(rule_runs.items())
    ]
    return {"points": points, "recent": [pt["nightly_id"] for pt in recent], "rules": rule_rows, "rule_runs": rule_series}


def _agent_params(agents: list) -> dict:
    return {"agents": [a for a in agents if a is not None], "null_agent": any(a is None for a in agents)}


def trend_agents_by_lint(con, nightly_ids: list[int], agents: list) -> list[dict]:
    """Per agent of ``agents`` (in that order), each nightly's runs judged and failing."""
    if not nightly_ids or not agents:
        return []
    found = {(r["nightly_id"], r["agent_id"]): r for r in
             rows(con, "trend_agents_by_nightly", nightlies=nightly_ids, **_agent_params(agents))}
    return [{"agent_id": a, "points": [{"nightly_id": n, "runs": found.get((n, a), {}).get("runs", 0),
                                        "failing": found.get((n, a), {}).get("failing", 0)} for n in nightly_ids]}
            for a in agents]


# The slots of the trend by completion: the finest of these widths that keeps the time range of
# the runs judged within MAX_SLOTS slots (an archive completed within hours is not one bar a day).
COMPLETION_SLOTS = (("1 minute", 60), ("10 minutes", 600), ("1 hour", 3600), ("6 hours", 21600), ("1 day", 86400))
MAX_SLOTS = 96


def _slot_label(at: _dt.datetime, seconds: int) -> str:
    return at.strftime("%Y-%m-%d") if seconds >= 86400 else at.strftime("%m-%d %H:%M")


def trend_by_completion(con, p: Passes, agents: list) -> dict:
    """Runs judged now, failing and new per slot of completion time (the slot width chosen from
    COMPLETION_SLOTS; the latest MAX_SLOTS slots, oldest first, empty slots included), and per
    rule code and per agent of ``agents`` the runs failing per slot. Runs that completed after the
    nightly's ingest ended are left out (``after`` counts them, completion_range)."""
    rng = _one(con, "completion_range", nightly=p.nightly_id)
    after = int(rng.get("after") or 0)
    if not rng or rng.get("last") is None:
        return {"slot": None, "points": [], "rules": [], "agents": [], "after": after}
    first, last = rng["first"], rng["last"]
    span = (last - first).total_seconds()
    width, secs = next(((w, n) for w, n in COMPLETION_SLOTS if span / n < MAX_SLOTS - 1), COMPLETION_SLOTS[-1])
    # Completion times reach 0001-01-01 and 9999-12-31: the window's start and the slot steps
    # must not leave Python's years (OverflowError), so they stop at its edges.
    window = _dt.timedelta(seconds=secs * (MAX_SLOTS - 1))
    since = first if last - _dt.datetime.min < window else max(first, last - window)
    totals = {r["slot"]: r for r in rows(con, "trend_by_completion", width=width, since=since, last=last)}
    slots = []
    if totals:
        at, end = min(totals), max(totals)
        step = _dt.timedelta(seconds=secs)
        while at <= end:
            slots.append(at)
            if _dt.datetime.max - at < step:
                break
            at += step
    slots = slots[-MAX_SLOTS:]
    points = [{"at": _iso(a), "label": _slot_label(a, secs), "runs": int(totals.get(a, {}).get("runs", 0)),
               "failing": int(totals.get(a, {}).get("failing", 0)), "new": int(totals.get(a, {}).get("new", 0))}
              for a in slots]
    per_rule: dict[str, dict] = {}
    for r in rows(con, "trend_rules_by_completion", width=width, since=since, last=last):
        per_rule.setdefault(r["code"], {})[r["slot"]] = r["runs"]
    per_agent: dict = {}
    if agents:
        for r in rows(con, "trend_agents_by_completion", width=width, since=since, last=last, **_agent_params(agents)):
            per_agent[(r["slot"], r["agent_id"])] = r
    return {
        "slot": width,
        "points": points,
        "rules": [{"code": code, "points": [int(by.get(a, 0)) for a in slots]} for code, by in sorted(per_rule.items())],
        "agents": [{"agent_id": ag, "points": [{"runs": int(per_agent.get((a, ag), {}).get("runs", 0)),
                                                "failing": int(per_agent.get((a, ag), {}).get("failing", 0))} for a in slots]}
                   for ag in agents],
        "after": after,
    }


def diff_lists(con, top: int) -> dict:
    """The first ``top`` runs of each change class (new, resolved, gone) and the counts."""
    out = {}
    for change in ("new", "still", "resolved", "gone"):
        out[change] = rows(con, "runs_by_change", change=change, top=top)
        for r in out[change]:
            r["completed_at"] = _iso(r["completed_at"])
    return out


GROUNDING_DRIFT = (
    ("same", "today's text is byte-identical to the recorded grounding.txt"),
    ("withheld", "the stored envelope is the conductor's withheld one, so today's verdict on it differs (expected: docs/rules.md#withheld-envelopes)"),
    ("rules_changed", "the recorded text matches an older workbench rule set (docs/rules.md#older-rule-sets)"),
    ("recorded_pass_fails_today", "recorded passed, fails today"),
    ("other", "differs otherwise"),
    ("unrecorded", "no grounding.txt in the archive"),
)
SOURCES_DRIFT = (
    ("same", "today's text is byte-identical to the recorded sources.txt"),
    ("withheld", "the stored envelope is the conductor's withheld one: the workbench checked the evidence the agent returned, the stored envelope has none, so today's text says 0 verified (expected: docs/rules.md#withheld-envelopes)"),
    ("verdict", "recorded and today's verdicts differ (passed vs FAILED) on the same stored evidence"),
    ("text", "same verdict, different text (e.g. other counts of verified or unresolved items)"),
    ("unrecorded", "no sources.txt in the archive"),
    ("unjudged", "not verifiable today"),
)


def drift(con, p: Passes, top: int) -> dict:
    """Recorded grounding.txt / sources.txt (what the workbench wrote) vs today's text.

    grounding: the classes of the ``recorded_drift`` view (lint history) for tonight's lint,
    plus ``same`` and ``unrecorded``. sources: same / withheld / verdict / text / unrecorded /
    unjudged (no rules_changed class: every workbench with a source check writes the same text,
    docs/rules.md#older-rule-sets).
    """
    g_counts = _one(con, "grounding_drift_same")
    execute(con, "grounding_drift", lint=p.lint_id, prefix="CREATE OR REPLACE TEMP TABLE report_grounding_drift AS\n")
    for r in rows(con, "grounding_drift_classes"):
        g_counts[r["drift"] or "other"] = g_counts.get(r["drift"] or "other", 0) + r["n"]
    g_examples = rows(con, "grounding_drift_examples", top=top)
    con.execute("DROP TABLE report_grounding_drift")
    out = {"grounding": {"classes": [(c, int(g_counts.get(c) or 0), text) for c, text in GROUNDING_DRIFT],
                         "examples": g_examples}}
    if p.verify_id is None:
        return out
    execute(con, "sources_drift", prefix="CREATE OR REPLACE TEMP VIEW report_sources_drift AS\n")
    counts = {r["class"]: r["n"] for r in rows(con, "sources_drift_counts")}
    examples = rows(con, "sources_drift_examples", top=top)
    out["sources"] = {"classes": [(c, int(counts.get(c) or 0), text) for c, text in SOURCES_DRIFT], "examples": examples}
    return out


def unresolved_by_source(con, p: Passes, top: int) -> dict:
    """Evidence items without an independent copy (source check), grouped by source id."""
    if p.verify_id is None:
        return {"rows": [], "total": 0, "more": 0}
    return _top(con, "unresolved_by_source", verify=p.verify_id, top=top)


def ingest_issues(con, p: Passes, top: int) -> dict:
    """Current ingest issues (the table keeps the latest issues of every run): by kind, and the
    most recent ``top``."""
    kinds = rows(con, "ingest_issue_kinds", ingest=p.ingest_id)
    found = rows(con, "ingest_issues", top=top)
    total = sum(k["n"] for k in kinds)
    return {"kinds": kinds, "rows": found, "total": total, "more": max(0, total - len(found))}


def worst_agents(con, top: int) -> list[dict]:
    """Agents with the most failing runs now (ties: higher failure rate, then id), with each
    agent's most frequent rule (in the passes build_state ran for)."""
    return rows(con, "worst_agents", top=top)


def failing_runs(con, limit: int | None = None, offset: int = 0) -> list[dict]:
    """Failing runs, the latest failing streaks first (since_nightly_id), then newest completion first."""
    return rows(con, "failing_runs", limit=limit, offset=offset, iso=ISO_FORMAT)
