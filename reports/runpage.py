"""Per-run outputs under ``OUT/runs/<slug>/``.

- ``grounding.txt`` / ``sources.txt``: today's exact texts (the summary column, rendered by the
  lint/verify text templates, plus ``\\n``) for every failing run and every run whose text today
  differs from the file recorded in the archive; none for a run the workbench could not
  lint/verify. (Writing 200,000 small files for a 100,000-run archive took 45 s; for the other
  runs the archive's own file already is today's text.)
- ``index.html`` for every failing run: the span tree as a timeline (spans named by a violation
  highlighted), grounded_on vs evidence vs retrievals side by side, and the violations.

Writing is incremental: ``OUT/.groundwork-manifest.json`` remembers a digest of what each file
was made from, so a nightly rewrites only what changed (new, changed or re-judged runs) and
removes the pages of runs that no longer fail. Delete the manifest to force a full rewrite.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from groundwork import __version__
from groundwork.core.escape import slug
from groundwork.reports import data
from groundwork.reports.output import write_atomic
from groundwork.reports.render import TEMPLATES_DIR, render_html

MANIFEST = ".groundwork-manifest.json"
BATCH = 5000        # runs per page-data batch
MAX_TIMELINE_ROWS = 400
_PAGE_TEMPLATES = ("run.html", "_layout.html", "_style.css")


@dataclass
class RunOutputs:
    pages_written: int = 0
    pages_kept: int = 0
    pages_removed: int = 0
    texts_written: int = 0
    texts_kept: int = 0
    texts_removed: int = 0
    paths: list[Path] = field(default_factory=list)


def _digest(*parts) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(b"\x00" if p is None else b"\x01" + str(p).encode("utf-8", "surrogatepass"))
    return h.hexdigest()[:32]


def _template_version() -> str:
    texts = [(TEMPLATES_DIR / name).read_text(encoding="utf-8") for name in _PAGE_TEMPLATES]
    return _digest(__version__, Path(__file__).read_text(encoding="utf-8"), *texts)


def _load_manifest(out: Path) -> dict:
    try:
        m = orjson.loads((out / MANIFEST).read_bytes())
        if isinstance(m, dict) and m.get("version") == 1:
            return m
    except (OSError, orjson.JSONDecodeError):
        pass
    return {"version": 1, "pages": {}, "texts": {}}


def write_texts(con, out: Path, manifest: dict, result: RunOutputs) -> None:
    """grounding.txt / sources.txt under runs/<slug>/ for every run that fails now, and for every
    other judged run whose text today differs from the one recorded in the archive (for the rest
    the archive's own file already is today's text). Files of runs that leave that set are
    removed. data.build_state must have run."""
    texts = manifest["texts"]
    runs_dir = out / "runs"
    wanted = set()
    cur = con.execute(
        f"""SELECT st.invocation_id, st.g_summary, st.s_summary, st.s_status
            FROM {data.STATE_TABLE} st LEFT JOIN runs r ON r.invocation_id = st.invocation_id
            WHERE st.failing
               OR (st.g_summary IS NOT NULL AND st.g_summary || CHR(10) IS DISTINCT FROM r.recorded_grounding)
               OR (st.s_summary IS NOT NULL AND st.s_summary || CHR(10) IS DISTINCT FROM r.recorded_sources)"""
    )
    while True:
        chunk = cur.fetchmany(10000)
        if not chunk:
            break
        for inv, g, s, s_status in chunk:
            sl = slug(inv)
            wanted.add(sl)
            key = [None if g is None else _digest(g), None if s is None else _digest(s)]
            d = runs_dir / sl
            if texts.get(sl) == key and (g is None or (d / "grounding.txt").exists()):
                result.texts_kept += 1
                continue
            d.mkdir(parents=True, exist_ok=True)
            for name, text in (("grounding.txt", g), ("sources.txt", s)):
                f = d / name
                if text is None:
                    if name == "grounding.txt" or s_status is not None:
                        f.unlink(missing_ok=True)  # unlintable/unverifiable: the workbench writes nothing
                else:
                    f.write_bytes((text + "\n").encode("utf-8", "replace"))
            texts[sl] = key
            result.texts_written += 1
    for sl in [x for x in texts if x not in wanted]:
        for name in ("grounding.txt", "sources.txt"):
            (runs_dir / sl / name).unlink(missing_ok=True)
        del texts[sl]
        result.texts_removed += 1


def _failing_keys(con) -> list[tuple[str, str, str]]:
    rows = con.execute(
        f"SELECT invocation_id, ingest_id, g_status, g_summary, s_status, s_summary, codes FROM {data.STATE_TABLE} "
        "WHERE failing ORDER BY invocation_id"
    ).fetchall()
    return [(r[0], slug(r[0]), _digest(*r[1:])) for r in rows]


def write_pages(con, out: Path, p: data.Passes, meta: dict, manifest: dict, result: RunOutputs) -> None:
    """index.html for every failing run; stale pages of runs that no longer fail are removed."""
    version = _template_version()
    pages = manifest["pages"]
    runs_dir = out / "runs"
    current = {}
    todo = []
    for inv, sl, key in _failing_keys(con):
        key = _digest(version, key)
        current[sl] = key
        if pages.get(sl) == key and (runs_dir / sl / "index.html").exists():
            result.pages_kept += 1
        else:
            todo.append(inv)
    for sl in list(pages):
        if sl not in current:
            (runs_dir / sl / "index.html").unlink(missing_ok=True)
            del pages[sl]
            result.pages_removed += 1
    for i in range(0, len(todo), BATCH):
        batch = todo[i:i + BATCH]
        for inv, page in collect(con, p, batch).items():
            sl = slug(inv)
            d = runs_dir / sl
            d.mkdir(parents=True, exist_ok=True)
            tl = page.pop("_timeline")
            html = render_html("run.html", d={"meta": meta, "run": page}, tl=tl, root="../../")
            write_atomic(d / "index.html", html)
            pages[sl] = current[sl]
            result.pages_written += 1
            if len(result.paths) < 5:
                result.paths.append(d / "index.html")


def write_all(con, out: Path, p: data.Passes, meta: dict) -> RunOutputs:
    """Per-run text files and run pages; data.build_state(con, p) must have been called."""
    out.mkdir(parents=True, exist_ok=True)
    manifest = _load_manifest(out)
    result = RunOutputs()
    write_texts(con, out, manifest, result)
    write_pages(con, out, p, meta, manifest, result)
    write_atomic(out / MANIFEST, orjson.dumps(manifest))
    return result


# ---------------------------------------------------------------------------------------------
# Page data
# ---------------------------------------------------------------------------------------------

def _group(con, sql: str, params) -> dict[str, list[dict]]:
    cur = con.execute(sql, params)
    names = [d[0] for d in cur.description]
    out: dict[str, list[dict]] = {}
    for row in cur.fetchall():
        r = dict(zip(names, row))
        out.setdefault(r["invocation_id"], []).append(r)
    return out


def collect(con, p: data.Passes, ids: list[str]) -> dict[str, dict]:
    """Run-page data for the given runs (one query per table for the whole batch)."""
    con.execute("CREATE OR REPLACE TEMP TABLE report_batch AS SELECT UNNEST(?::VARCHAR[]) AS invocation_id", [ids])
    b = "JOIN report_batch b USING (invocation_id)"
    runs = _group(con, f"""
        SELECT r.invocation_id, r.run_path, r.agent_id, r.agent_version, r.grounding_mode, r.outcome_status,
               r.succeeded, r.withheld, r.problem_type, r.completed_at, r.conversation_id, r.parent_invocation_id,
               r.telemetry_trace_id, r.span_count, r.evidence_count, r.delegation_count, r.missing,
               r.recorded_grounding, r.recorded_sources, r.unlintable_reason, r.unverifiable_reason,
               st.g_status, st.g_summary, st.s_status, st.s_summary, st.change, st.codes
        FROM runs r {b} LEFT JOIN {data.STATE_TABLE} st USING (invocation_id)""", [])
    lint = _group(con, f"SELECT v.invocation_id, v.status, v.mode, v.retrieval_count, v.chat_count, v.reason FROM lint_verdicts v {b} WHERE v.lint_id = ?", [p.lint_id])
    verify = _group(con, f"SELECT v.invocation_id, v.status, v.verified, v.unresolved_count, v.reason FROM verify_verdicts v {b} WHERE v.lint_id = ?", [p.verify_id])
    viol = _group(con, f"""
        SELECT v.invocation_id, l.kind AS check_kind, v.seq, v.code, v.message
        FROM lint_violations v {b} JOIN lints l ON l.lint_id = v.lint_id
        WHERE v.lint_id = ? OR v.lint_id = ? ORDER BY l.kind, v.seq""", [p.lint_id, p.verify_id])
    unresolved = _group(con, f"SELECT u.invocation_id, u.seq, u.item FROM verify_unresolved u {b} WHERE u.lint_id = ? ORDER BY u.seq", [p.verify_id])
    spans = _group(con, f"""
        SELECT t.invocation_id, t.ord, t.line_no, t.name, t.span_id, t.parent_id, t.trace_id,
               t.start_time, t.end_time, t.dd_agent_id, t.dd_source_id, t.dd_content_hash, t.dd_model_id
        FROM spans t {b} ORDER BY t.invocation_id, t.ord""", [])
    refs = _group(con, f"SELECT r.invocation_id, r.ord, r.path, r.kind, r.source_id, r.content_hash, r.value_json FROM payload_refs r {b} ORDER BY r.ord", [])
    evidence = _group(con, f"""
        SELECT e.invocation_id, e.ord, e.source_id, e.content_hash, e.canonicalisation, e.snapshot_ref,
               e.computed_hash, e.canonical_error, e.content_type
        FROM evidence e {b} ORDER BY e.ord""", [])
    deleg = _group(con, f"""
        SELECT d.invocation_id, d.ord, d.delegated_invocation_id, d.content_hash, d.delegated_agent_id, d.delegated_status
        FROM delegations d {b} ORDER BY d.ord""", [])
    pages = {}
    for inv in ids:
        run = (runs.get(inv) or [{"invocation_id": inv}])[0]
        for k in ("completed_at",):
            run[k] = data._iso(run.get(k))
        v = viol.get(inv, [])
        sp = place_in_tree(spans.get(inv, []))
        pages[inv] = {
            **run,
            "slug": slug(inv),
            "lint": (lint.get(inv) or [None])[0],
            "verify": (verify.get(inv) or [None])[0],
            "violations": v,
            "unresolved": unresolved.get(inv, []),
            "sides": _sides(refs.get(inv, []), evidence.get(inv, []), sp, deleg.get(inv, [])),
            "delegations": deleg.get(inv, []),
            "span_rows": len(sp),
            "_timeline": timeline(sp, [x["message"] for x in v]),
        }
    con.execute("DROP TABLE IF EXISTS report_batch")
    return pages


def place_in_tree(spans: list[dict]) -> list[dict]:
    """Depth and in-tree flag of one run's spans, ordered for the timeline: spans reached from an
    invoke_agent span by parent links (breadth first, each span once), by start time; then the
    spans outside the tree. (The span_tree view answers the same for the whole warehouse; a page
    needs one run, and the view's recursion over every run cost 1.5 s per batch at 100,000 runs.)"""
    children: dict = {}
    for s in spans:
        if s["parent_id"] is not None:
            children.setdefault(s["parent_id"], []).append(s)
    depth: dict[int, int] = {}
    frontier = [s for s in spans if s["name"] == "invoke_agent"]
    for s in frontier:
        depth[s["ord"]] = 0
    while frontier:
        nxt = []
        for s in frontier:
            for c in children.get(s["span_id"], ()):
                if c["ord"] not in depth:
                    depth[c["ord"]] = depth[s["ord"]] + 1
                    nxt.append(c)
        frontier = nxt
    placed = [dict(s, in_tree=s["ord"] in depth, depth=depth.get(s["ord"])) for s in spans]
    never = _dt.datetime.max
    placed.sort(key=lambda s: (not s["in_tree"], s["start_time"] or never, s["depth"] or 0, s["ord"]))
    return placed


def _sides(refs: list[dict], evidence: list[dict], spans: list[dict], deleg: list[dict]) -> dict:
    """grounded_on vs evidence vs retrievals, each item marked with where else its pair occurs."""
    ret = [s for s in spans if s["name"] == "retrieval"]
    ret_pairs = {(s["dd_source_id"] or "None", s["dd_content_hash"] or "None") for s in ret}
    ret_hashes = {h for _, h in ret_pairs}
    ev_pairs = {(e["source_id"], e["content_hash"]) for e in evidence}
    ev_hashes = {h for _, h in ev_pairs}
    ref_pairs = {(r["source_id"], r["content_hash"]) for r in refs if r["kind"] == "ref"}
    del_pairs = {("invocation:" + str(d["delegated_invocation_id"]), d["content_hash"]) for d in deleg}
    out_refs = []
    for r in refs:
        pair = (r["source_id"], r["content_hash"])
        out_refs.append({**r, "in_evidence": r["kind"] == "ref" and pair in ev_pairs,
                         "retrieved": r["kind"] == "ref" and pair in ret_pairs,
                         "delegated": r["kind"] == "ref" and pair in del_pairs})
    out_ev = []
    for e in evidence:
        pair = (e["source_id"], e["content_hash"])
        out_ev.append({**e, "cited": pair in ref_pairs, "retrieved_hash": e["content_hash"] in ret_hashes,
                       "hash_ok": None if e["computed_hash"] is None else e["computed_hash"] == e["content_hash"]})
    out_ret = []
    for s in ret:
        pair = (s["dd_source_id"] or "None", s["dd_content_hash"] or "None")
        out_ret.append({"span_id": s["span_id"], "source_id": s["dd_source_id"], "content_hash": s["dd_content_hash"],
                        "in_tree": s["in_tree"], "cited": pair in ref_pairs, "in_evidence": pair[1] in ev_hashes})
    return {"refs": out_refs, "evidence": out_ev, "retrievals": out_ret}


_KIND = {"invoke_agent": "sp-root", "retrieval": "sp-retrieval", "chat": "sp-chat", "delegate": "sp-delegate", "policy_gate": "sp-policy"}


def _named(span_id: str | None, name: str | None, messages: list[str]) -> bool:
    if span_id is None:
        return False
    for m in messages:
        if f"({span_id})" in m or f"chat span {span_id} " in m:
            return True
        if name == "invoke_agent" and m.startswith("G0: expected exactly one invoke_agent span"):
            return True
    return False


def _short(value, n: int = 48) -> str:
    s = "None" if value is None else str(value)
    return s if len(s) <= n else s[: n - 1] + "…"


def timeline(spans: list[dict], messages: list[str]) -> dict:
    """SVG geometry of the span timeline: one row per span (tree spans by start time, indented by
    depth; then spans outside the tree), bars scaled to the run's time range."""
    rows = spans[:MAX_TIMELINE_ROWS]
    label_w, width, row_h = 380, 1100, 20
    bar_w = width - label_w - 10
    times = [(s["start_time"], s["end_time"]) for s in rows if s["start_time"] is not None and s["end_time"] is not None]
    t0 = min((a for a, _ in times), default=None)
    t1 = max((b for _, b in times), default=None)
    span_us = max(1.0, (t1 - t0).total_seconds() * 1e6) if t0 is not None else 1.0
    out = []
    for i, s in enumerate(rows):
        named = _named(s["span_id"], s["name"], messages)
        y = 6 + i * row_h
        detail = s["dd_source_id"] if s["name"] in ("retrieval",) else s["dd_model_id"] if s["name"] == "chat" else s["dd_agent_id"]
        label = ("  " * min(int(s["depth"] or 0), 8)) + _short(s["name"], 24) + " " + _short(s["span_id"], 18)
        if detail is not None:
            label += " " + _short(detail, 40)
        if not s["in_tree"]:
            label = _short(label, 36) + " (outside the tree)"
        label = _short(label, 54)   # the label column is 380 px of 11.5 px monospace
        bar = None
        if s["start_time"] is not None and s["end_time"] is not None and t0 is not None:
            a = (s["start_time"] - t0).total_seconds() * 1e6
            dur = max(0.0, (s["end_time"] - s["start_time"]).total_seconds() * 1e6)
            bar = {"x": round(label_w + bar_w * a / span_us, 2), "w": round(max(2.0, bar_w * dur / span_us), 2), "dur_us": int(dur)}
        out.append({"y": y, "label": label, "cls": _KIND.get(s["name"], "sp-other"), "named": named, "bar": bar,
                    "title": f"{_short(s['name'], 40)} {s['span_id']}: line {s['line_no']}"})
    return {"width": width, "height": 12 + len(rows) * row_h, "label_w": label_w, "rows": out,
            "row_h": row_h, "hidden": max(0, len(spans) - len(rows)), "total_us": int(span_us) if t0 is not None else 0}

