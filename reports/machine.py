"""Machine outputs of a nightly: JUnit XML (CI), Prometheus textfile metrics, JSON Lines.

- ``junit.xml``: one testsuite per check (grounding, sources), one testcase per rule and agent;
  a failing testcase names the violation count, the runs and the first messages.
- ``metrics/groundwork.prom``: node_exporter textfile-collector format (no timestamps, written
  atomically). Label sets are bounded: the known grounding modes plus ``other``, and the
  ``MAX_AGENT_LABELS`` agents with the most violations plus ``other``.
- ``violations.jsonl``: one JSON object per violation of tonight's passes, with its rule's title.

JUnit names each rule code's title twice: in the testsuite's properties (``rule.<code>``) and in
a failure's message.
"""

from __future__ import annotations

import time
from pathlib import Path

import orjson

from groundwork.reports import data, sections
from groundwork.reports.output import write_atomic
from groundwork.reports.render import render, rule

MAX_AGENT_LABELS = 200
JUNIT_EXAMPLES = 20
KNOWN_MODES = ("retrieval", "input_only", "none", "delegation")


def _rules(con, lint_id) -> list[str]:
    if lint_id is None:
        return []
    row = data.execute(con, "pass_rules", pass_id=lint_id).fetchone()
    return [c.strip() for c in (row[0] or "").split(",") if c.strip()] if row else []


def _suites(con, p: data.Passes) -> list[dict]:
    """The JUnit testsuites of ``p``'s passes (plain values: reports/sections.py may keep them)."""
    suites = []
    for check, pass_id, bad in (("grounding", p.lint_id, "unlintable"), ("sources", p.verify_id, "unverifiable")):
        if pass_id is None:
            continue
        agents = [r[0] for r in data.execute(con, "junit_agents", check=check).fetchall()]
        stats = {}
        for code, agent, n, runs in data.execute(con, "junit_stats", pass_id=pass_id).fetchall():
            stats[(code, agent)] = {"violations": n, "runs": runs, "examples": []}
        for code, agent, inv, msg in data.execute(con, "junit_examples", pass_id=pass_id, examples=JUNIT_EXAMPLES).fetchall():
            stats[(code, agent)]["examples"].append({"invocation_id": inv, "message": msg})
        unjudged = {agent: (n, ids) for agent, n, ids in data.execute(
            con, "junit_unjudged", check=check, status=bad, examples=JUNIT_EXAMPLES).fetchall()}
        codes = _rules(con, pass_id)
        codes += sorted({c for c, _ in stats} - set(codes))
        cases = []
        for agent in agents:
            for code in codes:
                cases.append({"agent": agent, "rule": code, **stats.get((code, agent), {"violations": 0, "runs": 0, "examples": []})})
            if agent in unjudged:
                n, ids = unjudged[agent]
                cases.append({"agent": agent, "rule": bad, "violations": 0, "runs": n, "error": True,
                              "examples": [{"invocation_id": i, "message": bad} for i in ids]})
        suites.append({
            "name": check, "cases": cases, "tests": len(cases),
            "failures": sum(1 for c in cases if c["violations"] and not c.get("error")),
            "errors": sum(1 for c in cases if c.get("error")),
        })
    return suites


def junit(con, p: data.Passes, meta: dict, kept: sections.Kept | None = None) -> str:
    """JUnit XML: a testcase per (rule, agent) for every agent judged tonight. ``kept``: the
    sections kept from an earlier nightly that read the same (None: computed)."""
    suites = (kept or sections.none()).get("junit", lambda: _suites(con, p))
    for suite in suites:
        suite["rules"] = [(c, rule(c)) for c in dict.fromkeys(case["rule"] for case in suite["cases"])]
    return render("junit.xml", suites=suites, meta=meta)


def _mode_label(mode) -> str:
    return mode if mode in KNOWN_MODES else "other"


def prometheus(con, totals: dict, meta: dict) -> str:
    """Prometheus text exposition (textfile collector) of the passes data.build_state ran for."""
    rows = data.execute(con, "metrics_violations").fetchall()
    per_agent: dict = {}
    for _, _, agent, _, n in rows:
        per_agent[agent] = per_agent.get(agent, 0) + n
    keep = set(sorted(per_agent, key=lambda a: (-per_agent[a], "" if a is None else str(a)))[:MAX_AGENT_LABELS])
    series: dict[tuple, int] = {}
    for kind, code, agent, mode, n in rows:
        key = ("grounding" if kind == "lint" else "sources", code,
               ("" if agent is None else agent) if agent in keep else "other", _mode_label(mode))
        series[key] = series.get(key, 0) + n
    return render("metrics.prom", violations=sorted(series.items(), key=lambda kv: kv[0]), t=totals, meta=meta)


def jsonl(con, path: Path) -> Path:
    """violations.jsonl: one object per violation of tonight's lint and verify passes (those
    data.build_state ran for)."""
    tmp = path.with_name(f".{path.name}.tmp")
    cur = data.execute(con, "violations_jsonl", iso=data.ISO_FORMAT)
    keys = ("invocation_id", "agent_id", "grounding_mode", "completed_at", "check", "seq", "code", "message", "change")
    titles: dict = {}

    def title(code):
        if code not in titles:
            info = rule(code)
            titles[code] = None if info is None else info.title
        return titles[code]

    with open(tmp, "wb") as fh:
        while True:
            chunk = cur.fetchmany(20000)
            if not chunk:
                break
            fh.write(b"".join(orjson.dumps(dict(zip(keys, row), title=title(row[6])), option=orjson.OPT_APPEND_NEWLINE)
                              for row in chunk))
    tmp.replace(path)
    return path


METRICS_FILE = Path("metrics") / "groundwork.prom"


def write_metrics(con, out: Path, totals: dict, meta: dict) -> Path:
    """metrics/groundwork.prom, whose last-success timestamp is now: written only once the
    nightly has succeeded (``meta.started_epoch`` gives the duration)."""
    now = time.time()
    meta = dict(meta, finished_epoch=round(now, 3), duration_seconds=round(now - meta.get("started_epoch", now), 3))
    return write_atomic(out / METRICS_FILE, prometheus(con, totals, meta).encode("utf-8"))


def write(con, out: Path, p: data.Passes, totals: dict, meta: dict, *, metrics: bool = True,
          kept: sections.Kept | None = None) -> list[Path]:
    """junit.xml, violations.jsonl and (unless ``metrics`` is False: the caller writes it once
    the nightly has finished, ``write_metrics``) the metrics textfile. ``kept``: as for ``junit``."""
    files = [write_atomic(out / "junit.xml", junit(con, p, meta, kept).encode("utf-8")),
             jsonl(con, out / "violations.jsonl")]
    if metrics:
        files.insert(1, write_metrics(con, out, totals, meta))
    return files
