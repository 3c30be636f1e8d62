"""Fleet report: one self-contained HTML file, a Markdown summary and a JSON summary.

The HTML is bounded whatever the warehouse size: tables are top-N, the complete list of failing
runs is on ``failing/``, paged by the nightly each run has been failing since
(reports/failing_list.py), and every failing run has its own page (reports/runpage.py).
"""

from __future__ import annotations

from pathlib import Path

import orjson

from groundwork.core.escape import slug
from groundwork.reports import data, failing_list, manifests, sections
from groundwork.reports.charts import rate_chart
from groundwork.reports.output import write_atomic
from groundwork.reports.render import render, render_html, rule, rule_catalog

TOP = 100           # rows per bounded table in the fleet report
DIFF_TOP = 50       # runs listed per change class
MAX_STRING = 2000   # longest run-controlled string shown in the fleet report and list pages
WARNED_RUNS = 20    # runs listed per finding code of severity warn
TREND_AGENTS = 8    # agents with a trend chart of their own (the worst agents, in that order)


def _with_slugs(rows: list[dict], page_flag: str | None = None) -> list[dict]:
    for r in rows:
        r["slug"] = slug(r["invocation_id"])
        if page_flag is not None:
            r["has_page"] = bool(r.get(page_flag))
    return rows


def collect(con, p: data.Passes, meta: dict, *, top: int = TOP, state_ready: bool = False,
            kept: sections.Kept | None = None, totals: dict | None = None) -> dict:
    """All fleet-report data as plain values (strings exactly as stored). ``state_ready``: the
    caller already ran data.build_state(con, p); ``totals``: and data.totals(con, p) after it.
    ``kept``: the sections kept from an earlier nightly that read the same
    (reports/sections.py); None: every section computed."""
    if not state_ready:
        data.build_state(con, p)
        totals = None
    kept = kept or sections.none()
    d = {
        "meta": meta,
        "passes": data.passes_info(con, p),
        "totals": dict(totals) if totals is not None else data.totals(con, p),
        "by_rule": data.by_rule(con),
        "by_rule_mode": data.by_rule_mode(con),
        "by_rule_agent_mode": data.by_rule_agent_mode(con, top),
        "trend_by_day": data.trend_by_day(con),
        "trend_by_lint": data.trend_by_lint(con, p),
        "diff": data.diff_lists(con, DIFF_TOP),
        "drift": kept.get("drift", lambda: data.drift(con, p, 20)),
        "unresolved": kept.get("unresolved", lambda: data.unresolved_by_source(con, p, 50)),
        "ingest_issues": data.ingest_issues(con, p, 50),
        "worst_agents": data.worst_agents(con, 20),
        "failing_top": data.failing_runs(con, top),
        "warnings": data.warnings(con, p),
    }
    listed = data.warned_runs(con, p, WARNED_RUNS)
    for w in d["warnings"]:
        w["title"] = None if rule(w["code"]) is None else rule(w["code"]).title
        w["listed"] = [{"invocation_id": inv, "slug": slug(inv)} for inv in listed.get(w["code"], [])]
    agents = [a["agent_id"] for a in d["worst_agents"][:TREND_AGENTS]]
    d["trend_by_completion"] = data.trend_by_completion(con, p, agents)
    d["trend_agents_by_lint"] = data.trend_agents_by_lint(con, [pt["nightly_id"] for pt in d["trend_by_lint"]["points"]], agents)
    for change, rows in d["diff"].items():
        _with_slugs(rows)
        for r in rows:
            r["has_page"] = change in ("new", "still")
    for r in d["by_rule"]:
        info = rule(r["code"])
        r["title"] = None if info is None else info.title
    _with_slugs(d["failing_top"])
    for r in d["failing_top"]:
        r["has_page"] = True
    for check in d["drift"].values():
        _with_slugs(check["examples"], "has_page")
    for r in d["ingest_issues"]["rows"]:
        r["slug"] = None if r["invocation_id"] is None else slug(r["invocation_id"])
    return d


FAILING = [("failing", "fail", "failing"), ("new", "new", "new failing")]
SMALL = {"width": 430, "height": 150, "max_labels": 4}


def _small(title: str, code: str | None, chart: dict) -> dict:
    """A small chart; ``code`` only for a code of the rule files (it then names the chart in the
    page's markup; any other title is shown as text only)."""
    return {"title": title, "code": code if rule(code) is not None else None, "chart": chart}


def _charts(d: dict) -> dict:
    """The trend charts: failure rates (on an axis scaled to the largest rate) with the counts on
    an axis of their own, for the fleet, per rule and per agent, over nightlies and over completion
    time. Small charts are scaled each on its own (their axes say how)."""
    nights = d["trend_by_lint"]["points"]
    labels = [f"#{pt['nightly_id']}" for pt in nights]
    lint = rate_chart([{"label": lb, "total": pt["linted"] or 0, "failing": pt["runs_failing"] or 0, "new": pt["new_failing"] or 0}
                       for lb, pt in zip(labels, nights)], FAILING)
    comp = d["trend_by_completion"]
    slots = comp["points"]
    completion = rate_chart([{"label": pt["label"], "total": pt["runs"], "failing": pt["failing"], "new": pt["new"]}
                             for pt in slots], FAILING)

    def rule_title(code):
        info = rule(code)
        return f"{code}: {info.title}" if info else code

    def denominator(code, pt):
        info = rule(code)
        return (pt["verified"] if info is not None and info.kind == "source" else pt["linted"]) or 0

    order = {code: i for i, code in enumerate(rule_catalog())}

    def in_rule_order(series):   # lint order, then the source check, then findings; unknown codes last
        return sorted(series, key=lambda r: (order.get(r["code"], len(order)), str(r["code"])))

    runs_with = [("runs", "fail", "runs with a violation")]
    rules_lint = [_small(rule_title(r["code"]), r["code"], rate_chart(
        [{"label": lb, "total": denominator(r["code"], pt), "runs": x["runs"]} for lb, pt, x in zip(labels, nights, r["points"])],
        runs_with, **SMALL)) for r in in_rule_order(d["trend_by_lint"]["rule_runs"])]
    rules_completion = [_small(rule_title(r["code"]), r["code"], rate_chart(
        [{"label": pt["label"], "total": pt["runs"], "runs": n} for pt, n in zip(slots, r["points"])], runs_with, **SMALL))
        for r in in_rule_order(comp["rules"])]
    failing = [("failing", "fail", "failing runs")]

    def agent(a):
        return "(none)" if a is None else a

    agents_lint = [_small(agent(a["agent_id"]), None, rate_chart(
        [{"label": lb, "total": x["runs"], "failing": x["failing"]} for lb, x in zip(labels, a["points"])], failing, **SMALL))
        for a in d["trend_agents_by_lint"]]
    agents_completion = [_small(agent(a["agent_id"]), None, rate_chart(
        [{"label": pt["label"], "total": x["runs"], "failing": x["failing"]} for pt, x in zip(slots, a["points"])], failing, **SMALL))
        for a in comp["agents"]]
    return {"lint": lint, "completion": completion, "rules_lint": rules_lint, "rules_completion": rules_completion,
            "agents_lint": agents_lint, "agents_completion": agents_completion}


def write(out: Path, d: dict, *, page_size: int = failing_list.PAGE_SIZE, con=None, manifest: dict | None = None) -> list[Path]:
    """Write fleet.html, rules.html (what each rule code means: every code the pages name links
    to its entry there), summary.md, summary.json and the failing-run list (reports.failing_list).
    ``manifest`` (reports.manifests.load): a list page whose content is the one it records is not
    rendered again (a page shows no change class, so it stays the same while its runs' verdicts do)."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    n_failing = d["totals"]["runs_failing"]
    pages = failing_list.plan(failing_list.failing_rows(con), page_size)
    html = render_html("fleet.html", limit=MAX_STRING, d=d, charts=_charts(d), pages=len(pages), root="")
    written.append(write_atomic(out / "fleet.html", html))
    written.append(write_atomic(out / "rules.html", render_html("rules.html", d={"meta": d["meta"]},
                                                                codes=list(rule_catalog().values()), root="")))
    written.append(write_atomic(out / "summary.md", render("summary.md", d=d, pages=len(pages))))
    written.append(write_atomic(out / "summary.json", orjson.dumps(json_summary(d), option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS) + b"\n"))
    manifest = manifests.Manifest({}) if manifest is None else manifest
    written += failing_list.write(out / "failing", pages, total=n_failing, meta=d["meta"], manifest=manifest,
                                  limit=MAX_STRING)
    return written


def json_summary(d: dict) -> dict:
    """The JSON summary: the fleet data minus presentation-only fields."""
    def strip(rows):
        return [{k: v for k, v in r.items() if k not in ("slug", "has_page")} for r in rows]

    return {
        "format": "groundwork-nightly-summary/1",
        "meta": d["meta"],
        "passes": d["passes"],
        "totals": d["totals"],
        "by_rule": d["by_rule"],
        "rules": {c.code: {"title": c.title, "kind": c.kind, "modes": list(c.modes), "page": f"rules.html#{c.code}",
                           "docs": f"docs/rules.md#{c.anchor}"} for c in rule_catalog().values()},
        "by_rule_mode": d["by_rule_mode"],
        "by_rule_agent_mode": d["by_rule_agent_mode"],
        "trend_by_day": d["trend_by_day"],
        "trend_by_lint": d["trend_by_lint"],
        "trend_by_completion": d["trend_by_completion"],
        "trend_agents_by_lint": d["trend_agents_by_lint"],
        "since_previous_nightly": {k: strip(v) for k, v in d["diff"].items()},
        "drift": {k: {"counts": {c: n for c, n, _ in v["classes"]}, "examples": strip(v["examples"])} for k, v in d["drift"].items()},
        "unresolved_by_source": d["unresolved"],
        "ingest_issues": d["ingest_issues"],
        "worst_agents": d["worst_agents"],
        "failing_runs_top": strip(d["failing_top"]),
    }
