"""Report data: SQL over the warehouse, returned as plain dicts and lists.

Every value is bound as a parameter. Everything is bounded (top-N) except ``failing_runs``,
which the caller pages. "Failing" means: the grounding verdict is failed or unlintable, or the
source-check verdict is failed or unverifiable. A nightly compares its lint (and verify) pass
with those of a baseline (the previous finished nightly):

- ``new``: failing a check now that it did not fail in the baseline (runs new to the warehouse
  included; every failing run is new when there is no baseline);
- ``still``: failing now and in the baseline, and not new in another check;
- ``resolved``: failing in the baseline, judged now, failing no check;
- ``gone``: failing in the baseline and not judged now.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass

STATE_TABLE = "report_state"


@dataclass(frozen=True)
class Passes:
    """The check passes a report is about, and the baseline they are compared with."""

    lint_id: int
    verify_id: int | None = None
    baseline_lint_id: int | None = None
    baseline_verify_id: int | None = None
    ingest_id: int | None = None
    nightly_id: int | None = None


def _rows(con, sql: str, params=()) -> list[dict]:
    cur = con.execute(sql, params if isinstance(params, dict) else list(params))
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row)) for row in cur.fetchall()]


def _one(con, sql: str, params=()) -> dict:
    rows = _rows(con, sql, params)
    return rows[0] if rows else {}


def _iso(value) -> str | None:
    if value is None:
        return None
    if isinstance(value, _dt.datetime):
        return value.strftime("%Y-%m-%dT%H:%M:%SZ")
    return str(value)


def build_state(con, p: Passes) -> None:
    """(Re)create the temp table ``report_state``: one row per run judged now or failing in the
    baseline, with its verdicts, its change class and its violation codes."""
    # Without a verify pass tonight, the source check is left out of the comparison entirely
    # (otherwise every run failing only the source check would look resolved).
    bverify = p.baseline_verify_id if p.verify_id is not None else None
    con.execute(
        f"""
        CREATE OR REPLACE TEMP TABLE {STATE_TABLE} AS
        WITH g AS (SELECT invocation_id, status, summary FROM lint_verdicts WHERE lint_id = $lint),
        gb AS (SELECT invocation_id, status, summary FROM lint_verdicts WHERE lint_id = $blint),
        s AS (SELECT invocation_id, status, summary FROM verify_verdicts WHERE lint_id = $verify),
        sb AS (SELECT invocation_id, status, summary FROM verify_verdicts WHERE lint_id = $bverify),
        ids AS (
            SELECT invocation_id FROM g UNION SELECT invocation_id FROM gb
            UNION SELECT invocation_id FROM s UNION SELECT invocation_id FROM sb
        ),
        codes AS (
            SELECT invocation_id, STRING_AGG(DISTINCT code, ' ' ORDER BY code) AS codes,
                   COUNT(*) AS violations
            FROM lint_violations
            WHERE lint_id = $lint OR lint_id = $verify
            GROUP BY invocation_id
        ),
        flags AS (
            SELECT ids.invocation_id,
                   g.status AS g_status, gb.status AS gb_status, s.status AS s_status, sb.status AS sb_status,
                   g.summary AS g_summary, gb.summary AS gb_summary, s.summary AS s_summary, sb.summary AS sb_summary,
                   COALESCE(g.status <> 'passed', FALSE) AS g_fail,
                   COALESCE(gb.status <> 'passed', FALSE) AS gb_fail,
                   COALESCE(s.status <> 'passed', FALSE) AS s_fail,
                   COALESCE(sb.status <> 'passed', FALSE) AS sb_fail
            FROM ids
            LEFT JOIN g ON g.invocation_id = ids.invocation_id
            LEFT JOIN gb ON gb.invocation_id = ids.invocation_id
            LEFT JOIN s ON s.invocation_id = ids.invocation_id
            LEFT JOIN sb ON sb.invocation_id = ids.invocation_id
        )
        SELECT f.*,
               r.agent_id, r.grounding_mode, r.completed_at, r.missing, r.withheld, r.ingest_id,
               (f.g_fail OR f.s_fail) AS failing,
               (f.gb_fail OR f.sb_fail) AS base_failing,
               CASE
                   WHEN (f.g_fail AND NOT f.gb_fail) OR (f.s_fail AND NOT f.sb_fail) THEN 'new'
                   WHEN f.g_fail OR f.s_fail THEN 'still'
                   WHEN (f.gb_fail OR f.sb_fail) AND f.g_status IS NULL AND f.s_status IS NULL THEN 'gone'
                   WHEN f.gb_fail OR f.sb_fail THEN 'resolved'
               END AS change,
               ((f.g_fail AND f.gb_fail AND f.g_summary IS DISTINCT FROM f.gb_summary)
                 OR (f.s_fail AND f.sb_fail AND f.s_summary IS DISTINCT FROM f.sb_summary)) AS verdict_changed,
               COALESCE(c.codes, '') AS codes,
               COALESCE(c.violations, 0) AS violations
        FROM flags f
        LEFT JOIN runs r ON r.invocation_id = f.invocation_id
        LEFT JOIN codes c ON c.invocation_id = f.invocation_id
        """,
        {"lint": p.lint_id, "blint": p.baseline_lint_id, "verify": p.verify_id, "bverify": bverify},
    )


def totals(con, p: Passes) -> dict:
    t = _one(
        con,
        f"""
        SELECT
            (SELECT COUNT(*) FROM runs) AS runs_total,
            (SELECT COUNT(*) FROM runs WHERE missing) AS runs_missing,
            COUNT(*) FILTER (WHERE g_status IS NOT NULL) AS runs_linted,
            COUNT(*) FILTER (WHERE g_status = 'passed') AS lint_passed,
            COUNT(*) FILTER (WHERE g_status = 'failed') AS lint_failed,
            COUNT(*) FILTER (WHERE g_status = 'unlintable') AS lint_unlintable,
            COUNT(*) FILTER (WHERE s_status IS NOT NULL) AS runs_verified,
            COUNT(*) FILTER (WHERE s_status = 'passed') AS verify_passed,
            COUNT(*) FILTER (WHERE s_status = 'failed') AS verify_failed,
            COUNT(*) FILTER (WHERE s_status = 'unverifiable') AS verify_unverifiable,
            COUNT(*) FILTER (WHERE failing) AS runs_failing,
            COUNT(*) FILTER (WHERE change = 'new') AS new_failing,
            COUNT(*) FILTER (WHERE change = 'still') AS still_failing,
            COUNT(*) FILTER (WHERE change = 'still' AND verdict_changed) AS still_failing_changed,
            COUNT(*) FILTER (WHERE change = 'resolved') AS resolved,
            COUNT(*) FILTER (WHERE change = 'gone') AS gone
        FROM {STATE_TABLE}
        """,
    )
    v = _one(
        con,
        """
        SELECT
            COUNT(*) FILTER (WHERE lint_id = $lint) AS lint_violations,
            COUNT(*) FILTER (WHERE lint_id = $verify) AS verify_violations
        FROM lint_violations WHERE lint_id = $lint OR lint_id = $verify
        """,
        {"lint": p.lint_id, "verify": p.verify_id},
    )
    u = _one(
        con,
        "SELECT COALESCE(SUM(verified), 0) AS evidence_verified, COALESCE(SUM(unresolved_count), 0) AS evidence_unresolved "
        "FROM verify_verdicts WHERE lint_id = ?",
        [p.verify_id],
    )
    t.update(v)
    t.update(u)
    t["has_baseline"] = p.baseline_lint_id is not None
    t["has_verify"] = p.verify_id is not None
    return {k: (int(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else x) for k, x in t.items()}


def passes_info(con, p: Passes) -> dict:
    """The lint/verify/ingest rows the report is about (ids, times, rule-set hash)."""
    def lint(lid):
        if lid is None:
            return None
        row = _one(con, "SELECT lint_id, kind, started_at, finished_at, ruleset_hash, rules, tool_version, sources_path, runs_checked, runs_failed FROM lints WHERE lint_id = ?", [lid])
        for k in ("started_at", "finished_at"):
            if k in row:
                row[k] = _iso(row[k])
        return row or {"lint_id": lid}

    ingest = None
    if p.ingest_id is not None:
        ingest = _one(con, "SELECT ingest_id, runs_dir, started_at, finished_at, folders_seen, runs_loaded, runs_unchanged, runs_rejected, runs_missing, issues FROM ingests WHERE ingest_id = ?", [p.ingest_id])
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


def _violation_groups(columns: str = "") -> str:
    """Violations of tonight's passes grouped by check, rule and ``columns``: violations, runs,
    runs new tonight (parameters $lint, $verify)."""
    return f"""
        SELECT l.kind AS check_kind, v.code{columns},
               COUNT(*) AS violations, COUNT(DISTINCT v.invocation_id) AS runs,
               COUNT(DISTINCT v.invocation_id) FILTER (WHERE st.change = 'new') AS new_runs
        FROM lint_violations v
        JOIN lints l ON l.lint_id = v.lint_id
        JOIN {STATE_TABLE} st ON st.invocation_id = v.invocation_id
        WHERE v.lint_id = $lint OR v.lint_id = $verify
        GROUP BY ALL
    """


def by_rule(con, p: Passes) -> list[dict]:
    """Per rule code: violations, runs, runs new tonight."""
    return _rows(con, _violation_groups() + " ORDER BY check_kind, code", {"lint": p.lint_id, "verify": p.verify_id})


def by_rule_mode(con, p: Passes) -> dict:
    """Violations by rule × grounding mode (a small matrix: rules are few, modes are few)."""
    rows = _rows(
        con,
        f"""
        SELECT v.code, COALESCE(st.grounding_mode, '(none)') AS mode, COUNT(*) AS violations
        FROM lint_violations v
        JOIN {STATE_TABLE} st ON st.invocation_id = v.invocation_id
        WHERE v.lint_id = $lint OR v.lint_id = $verify
        GROUP BY ALL
        """,
        {"lint": p.lint_id, "verify": p.verify_id},
    )
    counts: dict[str, dict[str, int]] = {}
    mode_totals: dict[str, int] = {}
    for r in rows:
        counts.setdefault(r["code"], {})[r["mode"]] = r["violations"]
        mode_totals[r["mode"]] = mode_totals.get(r["mode"], 0) + r["violations"]
    known = ["retrieval", "input_only", "none", "delegation"]
    modes = [m for m in known if m in mode_totals]
    others = sorted((m for m in mode_totals if m not in known), key=lambda m: -mode_totals[m])
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


def by_rule_agent_mode(con, p: Passes, top: int) -> dict:
    """Violations by rule × agent × grounding mode, largest first, top N (and how many more)."""
    params = {"lint": p.lint_id, "verify": p.verify_id, "top": top}
    base = _violation_groups(", st.agent_id, st.grounding_mode AS mode")
    rows = _rows(con, base + " ORDER BY violations DESC, code, agent_id NULLS LAST, mode NULLS LAST LIMIT $top", params)
    total = _one(con, f"SELECT COUNT(*) AS n FROM ({base})", {"lint": p.lint_id, "verify": p.verify_id})["n"]
    return {"rows": rows, "total": total, "more": max(0, total - len(rows))}


def trend_by_day(con, days: int = 90) -> list[dict]:
    """Runs judged now, failing and new, by UTC day of run completion (the latest ``days`` days)."""
    rows = _rows(
        con,
        f"""
        SELECT CAST(completed_at AS DATE) AS day, COUNT(*) AS runs,
               COUNT(*) FILTER (WHERE failing) AS failing,
               COUNT(*) FILTER (WHERE change = 'new') AS new
        FROM {STATE_TABLE}
        WHERE g_status IS NOT NULL OR s_status IS NOT NULL
        GROUP BY ALL
        ORDER BY day DESC NULLS LAST
        LIMIT ?
        """,
        [days],
    )
    rows.reverse()
    for r in rows:
        r["day"] = "unknown" if r["day"] is None else r["day"].isoformat()
    return rows


def trend_by_lint(con, p: Passes, nights: int = 30) -> dict:
    """One point per finished nightly (and the current one): runs judged, failing, new, resolved,
    and violations per rule; marks nights whose rule set changed."""
    points = _rows(
        con,
        """
        SELECT n.nightly_id, COALESCE(n.finished_at, n.started_at) AS at, n.lint_id, n.verify_id,
               l.runs_checked AS linted, l.runs_failed AS lint_failed, l.ruleset_hash,
               v.runs_checked AS verified, v.runs_failed AS verify_failed,
               n.runs_failing, n.new_failing, n.resolved, n.still_failing
        FROM nightlies n
        LEFT JOIN lints l ON l.lint_id = n.lint_id
        LEFT JOIN lints v ON v.lint_id = n.verify_id
        WHERE n.exit_status IN (0, 1) OR n.nightly_id = ?
        ORDER BY n.nightly_id DESC
        LIMIT ?
        """,
        [p.nightly_id, nights],
    )
    points.reverse()
    prev_hash = None
    for i, pt in enumerate(points):
        pt["at"] = _iso(pt["at"])
        pt["rules_changed"] = i > 0 and pt["ruleset_hash"] != prev_hash
        prev_hash = pt["ruleset_hash"]
    ids = [x for pt in points[-10:] for x in (pt["lint_id"], pt["verify_id"]) if x is not None]
    per_rule: dict[str, dict[int, int]] = {}
    if ids:
        for r in _rows(
            con,
            "SELECT lint_id, code, COUNT(*) AS n FROM lint_violations WHERE lint_id IN (SELECT UNNEST(?)) GROUP BY ALL",
            [ids],
        ):
            per_rule.setdefault(r["code"], {})[r["lint_id"]] = r["n"]
    recent = points[-10:]
    rule_rows = [
        {"code": code, "cells": [by.get(pt["lint_id"], 0) + by.get(pt["verify_id"], 0) for pt in recent]}
        for code, by in sorted(per_rule.items())
    ]
    return {"points": points, "recent": [pt["nightly_id"] for pt in recent], "rules": rule_rows}


def diff_lists(con, top: int) -> dict:
    """The first ``top`` runs of each change class (new, resolved, gone) and the counts."""
    out = {}
    for change in ("new", "still", "resolved", "gone"):
        out[change] = _rows(
            con,
            f"""
            SELECT invocation_id, agent_id, grounding_mode AS mode, completed_at, codes, change,
                   g_status, s_status, gb_status, sb_status, verdict_changed
            FROM {STATE_TABLE} WHERE change = ?
            ORDER BY completed_at DESC NULLS LAST, invocation_id
            LIMIT ?
            """,
            [change, top],
        )
        for r in out[change]:
            r["completed_at"] = _iso(r["completed_at"])
    return out


GROUNDING_DRIFT = (
    ("same", "today's text is byte-identical to the recorded grounding.txt"),
    ("withheld", "the stored envelope is the conductor's withheld one, so today's verdict on it differs (expected, spec 6.9)"),
    ("rules_changed", "the recorded text matches an older workbench rule set (spec 9.1)"),
    ("recorded_pass_fails_today", "recorded passed, fails today"),
    ("other", "differs otherwise"),
    ("unrecorded", "no grounding.txt in the archive"),
)
SOURCES_DRIFT = (
    ("same", "today's text is byte-identical to the recorded sources.txt"),
    ("verdict", "recorded and today's verdicts differ (passed vs FAILED)"),
    ("text", "same verdict, different text"),
    ("unrecorded", "no sources.txt in the archive"),
    ("unjudged", "not verifiable today"),
)


def drift(con, p: Passes, top: int) -> dict:
    """Recorded grounding.txt / sources.txt (what the workbench wrote) vs today's text.

    grounding: the classes of the ``recorded_drift`` view (lint history) for tonight's lint,
    plus ``same`` and ``unrecorded``. sources: same / verdict / text / unrecorded / unjudged.
    """
    g_counts = _one(con, f"""
        SELECT COUNT(*) FILTER (WHERE r.recorded_grounding IS NOT NULL AND st.g_summary || CHR(10) = r.recorded_grounding) AS same,
               COUNT(*) FILTER (WHERE r.recorded_grounding IS NULL) AS unrecorded
        FROM {STATE_TABLE} st JOIN runs r ON r.invocation_id = st.invocation_id
        WHERE st.g_status IS NOT NULL""")
    for r in _rows(con, "SELECT drift, COUNT(*) AS n FROM recorded_drift WHERE lint_id = ? GROUP BY drift", [p.lint_id]):
        g_counts[r["drift"] or "other"] = g_counts.get(r["drift"] or "other", 0) + r["n"]
    g_examples = _rows(con, f"""
        SELECT d.invocation_id, st.agent_id, st.failing AS has_page, d.drift AS class,
               d.recorded_grounding AS recorded, d.today_grounding AS today
        FROM recorded_drift d JOIN {STATE_TABLE} st ON st.invocation_id = d.invocation_id
        WHERE d.lint_id = ? AND d.drift <> 'withheld'
        ORDER BY d.drift, d.invocation_id LIMIT ?""", [p.lint_id, top])
    out = {"grounding": {"classes": [(c, int(g_counts.get(c) or 0), text) for c, text in GROUNDING_DRIFT],
                         "examples": g_examples}}
    if p.verify_id is None:
        return out
    cls = """
        CASE
            WHEN r.recorded_sources IS NULL THEN 'unrecorded'
            WHEN st.s_summary IS NULL THEN 'unjudged'
            WHEN st.s_summary || CHR(10) = r.recorded_sources THEN 'same'
            WHEN (POSITION('; FAILED' IN r.recorded_sources) > 0) <> (st.s_status <> 'passed') THEN 'verdict'
            ELSE 'text'
        END
    """
    base = f"""
        SELECT st.invocation_id, st.agent_id, st.failing AS has_page, {cls} AS class,
               r.recorded_sources AS recorded, st.s_summary || CHR(10) AS today
        FROM {STATE_TABLE} st JOIN runs r ON r.invocation_id = st.invocation_id
        WHERE st.s_status IS NOT NULL
    """
    counts = {r["class"]: r["n"] for r in _rows(con, f"SELECT class, COUNT(*) AS n FROM ({base}) GROUP BY class")}
    examples = _rows(con, f"SELECT * FROM ({base}) WHERE class IN ('verdict', 'text') ORDER BY class DESC, invocation_id LIMIT ?", [top])
    out["sources"] = {"classes": [(c, int(counts.get(c) or 0), text) for c, text in SOURCES_DRIFT], "examples": examples}
    return out


def unresolved_by_source(con, p: Passes, top: int) -> dict:
    """Evidence items without an independent copy (source check), grouped by source id."""
    if p.verify_id is None:
        return {"rows": [], "total": 0, "more": 0}
    base = """
        SELECT COALESCE(e.source_id, regexp_extract(u.item, '^(.*) \\([^()]*\\)$', 1)) AS source_id,
               COUNT(*) AS unresolved_items, COUNT(DISTINCT u.invocation_id) AS runs
        FROM verify_unresolved u
        LEFT JOIN evidence e ON e.invocation_id = u.invocation_id AND e.ord = u.seq
                             AND u.item = e.source_id || ' (' || e.snapshot_ref || ')'
        WHERE u.lint_id = $verify
        GROUP BY ALL
    """
    rows = _rows(con, base + " ORDER BY unresolved_items DESC, source_id LIMIT $top", {"verify": p.verify_id, "top": top})
    total = _one(con, f"SELECT COUNT(*) AS n FROM ({base})", {"verify": p.verify_id})["n"]
    return {"rows": rows, "total": total, "more": max(0, total - len(rows))}


def ingest_issues(con, p: Passes, top: int) -> dict:
    """Current ingest issues (the table keeps the latest issues of every run): by kind, and the
    most recent ``top``."""
    kinds = _rows(
        con,
        "SELECT kind, COUNT(*) AS n, COUNT(*) FILTER (WHERE ingest_id = ?) AS tonight FROM ingest_issues GROUP BY kind ORDER BY n DESC, kind",
        [p.ingest_id],
    )
    rows = _rows(
        con,
        "SELECT ingest_id, invocation_id, path, line, kind, message FROM ingest_issues "
        "ORDER BY ingest_id DESC, path NULLS FIRST, line NULLS FIRST LIMIT ?",
        [top],
    )
    total = sum(k["n"] for k in kinds)
    return {"kinds": kinds, "rows": rows, "total": total, "more": max(0, total - len(rows))}


def worst_agents(con, p: Passes, top: int) -> list[dict]:
    """Agents with the most failing runs now (ties: higher failure rate, then id), with each
    agent's most frequent rule."""
    return _rows(
        con,
        f"""
        WITH a AS (
            SELECT agent_id, COUNT(*) AS runs,
                   COUNT(*) FILTER (WHERE failing) AS failing,
                   COUNT(*) FILTER (WHERE change = 'new') AS new,
                   SUM(violations) AS violations
            FROM {STATE_TABLE}
            WHERE g_status IS NOT NULL OR s_status IS NOT NULL
            GROUP BY agent_id
        ), c AS (
            SELECT st.agent_id, v.code, COUNT(*) AS n,
                   ROW_NUMBER() OVER (PARTITION BY st.agent_id ORDER BY COUNT(*) DESC, v.code) AS rk
            FROM {STATE_TABLE} st
            JOIN lint_violations v ON v.invocation_id = st.invocation_id
            WHERE v.lint_id = $lint OR v.lint_id = $verify
            GROUP BY st.agent_id, v.code
        )
        SELECT a.agent_id, a.runs, a.failing, a.new, a.violations,
               ROUND(100.0 * a.failing / a.runs, 1) AS failing_pct,
               c.code AS top_code, c.n AS top_code_violations
        FROM a LEFT JOIN c ON c.agent_id IS NOT DISTINCT FROM a.agent_id AND c.rk = 1
        WHERE a.failing > 0
        ORDER BY a.failing DESC, a.failing / a.runs DESC, a.agent_id NULLS LAST
        LIMIT $top
        """,
        {"lint": p.lint_id, "verify": p.verify_id, "top": top},
    )


def failing_runs(con, limit: int | None = None, offset: int = 0) -> list[dict]:
    """Failing runs, new first, then newest completion first."""
    sql = f"""
        SELECT invocation_id, agent_id, grounding_mode AS mode, completed_at, codes, violations,
               g_status, s_status, change, verdict_changed
        FROM {STATE_TABLE}
        WHERE failing
        ORDER BY (change = 'new') DESC, completed_at DESC NULLS LAST, invocation_id
    """
    params: list = []
    if limit is not None:
        sql += " LIMIT ? OFFSET ?"
        params = [limit, offset]
    rows = _rows(con, sql, params)
    for r in rows:
        r["completed_at"] = _iso(r["completed_at"])
    return rows
