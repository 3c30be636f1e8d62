"""Machine outputs of a nightly: JUnit XML (CI), Prometheus textfile metrics, JSON Lines.

- ``junit.xml``: one testsuite per check (grounding, sources), one testcase per rule and agent;
  a failing testcase names the violation count, the runs and the first messages.
- ``metrics/groundwork.prom``: node_exporter textfile-collector format (no timestamps, written
  atomically). Label sets are bounded: the known grounding modes plus ``other``, and the
  ``MAX_AGENT_LABELS`` agents with the most violations plus ``other``.
- ``violations.jsonl``: one JSON object per violation of tonight's passes.
"""

from __future__ import annotations

from pathlib import Path

import orjson

from groundwork.reports import data
from groundwork.reports.output import write_atomic
from groundwork.reports.render import render

MAX_AGENT_LABELS = 200
JUNIT_EXAMPLES = 20
KNOWN_MODES = ("retrieval", "input_only", "none", "delegation")


def _rules(con, lint_id) -> list[str]:
    if lint_id is None:
        return []
    row = con.execute("SELECT rules FROM lints WHERE lint_id = ?", [lint_id]).fetchone()
    return [c.strip() for c in (row[0] or "").split(",") if c.strip()] if row else []


def junit(con, p: data.Passes, meta: dict) -> str:
    """JUnit XML: a testcase per (rule, agent) for every agent judged tonight."""
    suites = []
    for check, pass_id, status_col, bad in (("grounding", p.lint_id, "g_status", "unlintable"),
                                            ("sources", p.verify_id, "s_status", "unverifiable")):
        if pass_id is None:
            continue
        agents = [r[0] for r in con.execute(
            f"SELECT DISTINCT agent_id FROM {data.STATE_TABLE} WHERE {status_col} IS NOT NULL ORDER BY agent_id NULLS LAST").fetchall()]
        stats = {}
        for code, agent, n, runs in con.execute(
            f"""SELECT v.code, st.agent_id, COUNT(*), COUNT(DISTINCT v.invocation_id)
                FROM lint_violations v JOIN {data.STATE_TABLE} st USING (invocation_id)
                WHERE v.lint_id = ? GROUP BY ALL""", [pass_id]).fetchall():
            stats[(code, agent)] = {"violations": n, "runs": runs, "examples": []}
        for code, agent, inv, msg in con.execute(
            f"""SELECT code, agent_id, invocation_id, message FROM (
                    SELECT v.code, st.agent_id, v.invocation_id, v.message,
                           ROW_NUMBER() OVER (PARTITION BY v.code, st.agent_id ORDER BY v.invocation_id, v.seq) AS rk
                    FROM lint_violations v JOIN {data.STATE_TABLE} st USING (invocation_id)
                    WHERE v.lint_id = ?) WHERE rk <= ? ORDER BY code, agent_id, rk""", [pass_id, JUNIT_EXAMPLES]).fetchall():
            stats[(code, agent)]["examples"].append({"invocation_id": inv, "message": msg})
        unjudged = {agent: (n, ids) for agent, n, ids in con.execute(
            f"""SELECT agent_id, COUNT(*), LIST(invocation_id ORDER BY invocation_id)[1:{JUNIT_EXAMPLES}]
                FROM {data.STATE_TABLE} WHERE {status_col} = ? GROUP BY agent_id""", [bad]).fetchall()}
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
    return render("junit.xml", suites=suites, meta=meta)


def _mode_label(mode) -> str:
    return mode if mode in KNOWN_MODES else "other"


def prometheus(con, p: data.Passes, totals: dict, meta: dict) -> str:
    """Prometheus text exposition (textfile collector)."""
    rows = con.execute(
        f"""SELECT l.kind, v.code, st.agent_id, st.grounding_mode, COUNT(*)
            FROM lint_violations v JOIN lints l ON l.lint_id = v.lint_id
            JOIN {data.STATE_TABLE} st USING (invocation_id)
            WHERE v.lint_id = ? OR v.lint_id = ? GROUP BY ALL""", [p.lint_id, p.verify_id]).fetchall()
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


def jsonl(con, p: data.Passes, path: Path) -> Path:
    """violations.jsonl: one object per violation of tonight's lint and verify passes."""
    tmp = path.with_name(f".{path.name}.tmp")
    cur = con.execute(
        f"""SELECT v.invocation_id, st.agent_id, st.grounding_mode, st.completed_at,
                   CASE l.kind WHEN 'lint' THEN 'grounding' ELSE 'sources' END, v.seq, v.code, v.message, st.change
            FROM lint_violations v JOIN lints l ON l.lint_id = v.lint_id
            JOIN {data.STATE_TABLE} st USING (invocation_id)
            WHERE v.lint_id = ? OR v.lint_id = ?
            ORDER BY v.invocation_id, l.kind, v.seq""", [p.lint_id, p.verify_id])
    keys = ("invocation_id", "agent_id", "grounding_mode", "completed_at", "check", "seq", "code", "message", "change")
    with open(tmp, "wb") as fh:
        while True:
            chunk = cur.fetchmany(20000)
            if not chunk:
                break
            fh.write(b"".join(orjson.dumps(dict(zip(keys, (data._iso(x) if i == 3 else x for i, x in enumerate(row))))) + b"\n"
                              for row in chunk))
    tmp.replace(path)
    return path


def write(con, out: Path, p: data.Passes, totals: dict, meta: dict) -> list[Path]:
    return [
        write_atomic(out / "junit.xml", junit(con, p, meta).encode("utf-8")),
        write_atomic(out / "metrics" / "groundwork.prom", prometheus(con, p, totals, meta).encode("utf-8")),
        jsonl(con, p, out / "violations.jsonl"),
    ]
