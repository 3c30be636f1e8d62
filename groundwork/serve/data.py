"""What the pages show, read from the warehouse copy: the runs list with its facets, a rule's
failing runs and trend, the freshness line. Every value is bound as a parameter; the only names
put into SQL text are the sort columns, taken from the fixed ``COLUMNS``."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from groundwork.reports import data as report_data

PAGE_SIZE = 50
STATUSES = ("passed", "failed", "unlintable")

# The runs list's columns (run_summary's, and `codes`), in the order shown; any is a sort key.
COLUMNS = ("invocation_id", "agent_id", "grounding_mode", "outcome_status", "completed_at", "lint_status",
           "verify_status", "codes", "lint_violation_count", "span_count")

LABELS = {"invocation_id": "Run", "agent_id": "Agent", "grounding_mode": "Mode", "outcome_status": "Outcome",
          "completed_at": "Completed", "lint_status": "Grounding", "verify_status": "Sources", "codes": "Rules",
          "lint_violation_count": "Violations", "span_count": "Spans"}

# One row per run: run_summary, with every violation code of its latest lint and verify passes.
_RUNS = """
SELECT invocation_id, agent_id, grounding_mode, outcome_status, completed_at, lint_status, verify_status,
       array_to_string(list_sort(list_distinct(string_split(concat_ws(',', lint_codes, verify_codes), ','))), ' ') AS codes,
       lint_violation_count, span_count
FROM run_summary
"""


@dataclass
class Filters:
    """The runs list's filters, as given in the query string (text; empty = no filter)."""

    agent: str = ""
    mode: str = ""
    code: str = ""
    status: str = ""
    new: bool = False
    since: dt.date | None = None
    until: dt.date | None = None

    def clauses(self, nightly_id: int | None, without: str | None = None) -> tuple[list[str], dict]:
        """WHERE clauses and their parameters; ``without`` leaves one facet's own filter out (its counts)."""
        where, params = [], {}
        if self.agent and without != "agent":
            where.append("agent_id IS NOT DISTINCT FROM $agent")
            params["agent"] = self.agent
        if self.mode and without != "mode":
            where.append("grounding_mode IS NOT DISTINCT FROM $mode")
            params["mode"] = self.mode
        if self.code and without != "code":
            where.append("list_contains(string_split(codes, ' '), $code)")
            params["code"] = self.code
        if self.status and without != "status":
            where.append("lint_status = $status")
            params["status"] = self.status
        if self.new and without != "new":
            where.append("invocation_id IN (SELECT invocation_id FROM nightly_changes WHERE nightly_id = $nightly AND change = 'new')")
            params["nightly"] = nightly_id
        if self.since is not None:
            where.append("CAST(completed_at AS DATE) >= $since")
            params["since"] = self.since
        if self.until is not None:
            where.append("CAST(completed_at AS DATE) <= $until")
            params["until"] = self.until
        return where, params


def _where(where: list[str]) -> str:
    return ("WHERE " + " AND ".join(where)) if where else ""


def _dicts(cur) -> list[dict]:
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row)) for row in cur.fetchall()]


def latest_nightly(con) -> dict | None:
    """The last nightly that finished (exit status 0 or 1): the one "new" is counted against."""
    found = _dicts(con.execute("SELECT nightly_id, finished_at, exit_status FROM nightlies "
                               "WHERE exit_status IN (0, 1) ORDER BY nightly_id DESC LIMIT 1"))
    return found[0] if found else None


def freshness(con) -> dict:
    """When the warehouse was last written by a nightly, an ingest and a check pass."""
    row = con.execute("SELECT (SELECT max(finished_at) FROM nightlies WHERE exit_status IN (0, 1)), "
                      "(SELECT max(finished_at) FROM ingests), (SELECT max(finished_at) FROM lints)").fetchone()
    return {"nightly": row[0], "ingest": row[1], "check": row[2]}


@dataclass
class RunsPage:
    rows: list[dict]
    total: int
    page: int
    pages: int
    facets: dict[str, list[tuple]] = field(default_factory=dict)


def runs_page(con, filters: Filters, sort: str, descending: bool, page: int, nightly_id: int | None) -> RunsPage:
    """One page of the runs list and the facet counts (each facet counted under the other filters)."""
    if sort not in COLUMNS:
        sort = "completed_at"
    con.execute(f"CREATE OR REPLACE TEMP TABLE serve_runs AS {_RUNS}")
    where, params = filters.clauses(nightly_id)
    total = con.execute(f"SELECT count(*) FROM serve_runs {_where(where)}", params).fetchone()[0]
    pages = max(1, -(-total // PAGE_SIZE))
    page = min(max(1, page), pages)
    order = f"{sort} {'DESC' if descending else 'ASC'} NULLS LAST, invocation_id"
    rows = _dicts(con.execute(f"SELECT * FROM serve_runs {_where(where)} ORDER BY {order} LIMIT {PAGE_SIZE} "
                              f"OFFSET {(page - 1) * PAGE_SIZE}", params))
    facets = {}
    for name, expr in (("agent", "agent_id"), ("mode", "grounding_mode"), ("status", "lint_status")):
        w, p = filters.clauses(nightly_id, without=name)
        facets[name] = con.execute(f"SELECT {expr}, count(*) FROM serve_runs {_where(w)} GROUP BY 1 "
                                   f"ORDER BY 2 DESC, 1 NULLS LAST", p).fetchall()
    w, p = filters.clauses(nightly_id, without="code")
    facets["code"] = con.execute(
        f"SELECT code, count(*) FROM (SELECT unnest(string_split(codes, ' ')) AS code FROM serve_runs {_where(w)}) "
        f"WHERE code <> '' GROUP BY 1 ORDER BY 1", p).fetchall()
    if nightly_id is not None:
        w, p = filters.clauses(nightly_id, without="new")
        w.append("invocation_id IN (SELECT invocation_id FROM nightly_changes WHERE nightly_id = $nightly AND change = 'new')")
        p["nightly"] = nightly_id
        facets["new"] = [(True, con.execute(f"SELECT count(*) FROM serve_runs {_where(w)}", p).fetchone()[0])]
    con.execute("DROP TABLE serve_runs")
    return RunsPage(rows=rows, total=total, page=page, pages=pages, facets=facets)


# ------------------------------------------------------------------------------------ a rule


def failing_runs(con, code: str, limit: int = 500) -> list[dict]:
    """The runs whose latest lint or verify pass has a violation of ``code``, with its messages."""
    return _dicts(con.execute(
        "SELECT invocation_id, agent_id, grounding_mode, completed_at, check_kind, count(*) AS violations, "
        "min(message) AS first_message FROM violation_messages WHERE code = $code "
        "GROUP BY ALL ORDER BY completed_at DESC NULLS LAST, invocation_id LIMIT $limit",
        {"code": code, "limit": limit}))


def rule_trend(con, code: str, limit: int = 60) -> list[dict]:
    """Per check pass (one a night for a nightly), oldest first: the runs it judged, those with a
    violation of ``code`` and their share. The rule page draws these; the lead may point the page
    at the reports' trend chart instead (one function to change)."""
    points = _dicts(con.execute(
        """
        WITH passes AS (
            SELECT lint_id, kind, finished_at FROM lints
            WHERE kind = CASE WHEN $code IN ('S0', 'S1', 'S2') THEN 'verify' ELSE 'lint' END AND finished_at IS NOT NULL
            ORDER BY lint_id DESC LIMIT $limit
        ), judged AS (
            SELECT p.lint_id, count(v.invocation_id) AS judged
            FROM passes p LEFT JOIN (SELECT lint_id, invocation_id FROM lint_verdicts
                                     UNION ALL SELECT lint_id, invocation_id FROM verify_verdicts) v USING (lint_id)
            GROUP BY p.lint_id
        ), failing AS (
            SELECT lint_id, count(DISTINCT invocation_id) AS failing
            FROM lint_violations WHERE code = $code AND lint_id IN (SELECT lint_id FROM passes) GROUP BY lint_id
        )
        SELECT p.lint_id, p.finished_at, j.judged, coalesce(f.failing, 0) AS failing
        FROM passes p JOIN judged j USING (lint_id) LEFT JOIN failing f USING (lint_id)
        ORDER BY p.lint_id
        """, {"code": code, "limit": limit}))
    for p in points:
        p["rate"] = (p["failing"] / p["judged"]) if p["judged"] else None
        p["passing"] = p["judged"] - p["failing"]
        p["label"] = f"#{p['lint_id']}"
    return points


# ------------------------------------------------------------------------------------- a run


def run_passes(con, invocation_id: str) -> tuple[int | None, int | None] | None:
    """The latest lint and verify passes that judged the run (run_summary's), or None: no such run."""
    row = con.execute("SELECT lint_id, verify_id FROM run_summary WHERE invocation_id = $id",
                      {"id": invocation_id}).fetchone()
    return None if row is None else (row[0], row[1])


def build_run_state(con, invocation_id: str, lint_id, verify_id, nightly_id) -> None:
    """The temp table report_state the run page's queries read (reports/runpage.collect), for one
    run: its verdicts in its latest passes and, when the last nightly found it failing, the nightly
    it has been failing since (nightly_failing);
    with the view report_violations under that nightly's severities, as the nightly's run page."""
    report_data.build_violations(con, nightly_id)
    con.execute(
        """
        CREATE OR REPLACE TEMP TABLE report_state AS
        SELECT $id AS invocation_id, g.status AS g_status, g.summary AS g_summary,
               s.status AS s_status, s.summary AS s_summary,
               f.since_nightly_id, CAST(CAST(n.started_at AS DATE) AS VARCHAR) AS since_date,
               (SELECT coalesce(string_agg(DISTINCT code, ' ' ORDER BY code), '') FROM report_violations
                WHERE invocation_id = $id AND (lint_id = $lint OR lint_id = $verify)) AS codes
        FROM (SELECT 1) AS one
        LEFT JOIN lint_verdicts g ON g.lint_id = $lint AND g.invocation_id = $id
        LEFT JOIN verify_verdicts s ON s.lint_id = $verify AND s.invocation_id = $id
        LEFT JOIN nightly_failing f ON f.nightly_id = $nightly AND f.invocation_id = $id
        LEFT JOIN nightlies n ON n.nightly_id = f.since_nightly_id
        """, {"id": invocation_id, "lint": lint_id, "verify": verify_id, "nightly": nightly_id})
