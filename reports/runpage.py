"""Per-run outputs under ``OUT/runs/<slug>/``.

- ``grounding.txt`` / ``sources.txt``: today's exact texts (the summary column, rendered by the
  lint/verify text templates, plus ``\\n``) for every failing run and every run whose text today
  differs from the file recorded in the archive; none for a run the workbench could not
  lint/verify. (Writing 200,000 small files for a 100,000-run archive took 45 s; for the other
  runs the archive's own file already is today's text.)
- ``index.html`` for every failing run: the span tree as a timeline (spans named by a violation
  highlighted), grounded_on vs evidence vs retrievals side by side, and the violations.

Writing is incremental: the manifest (reports/manifests.py) remembers a digest of what each file
was made from, so a nightly rewrites only what changed (new, changed or re-judged runs) and
removes the pages of runs that no longer fail. A page shows the nightly its run has been failing
since, not "new" or "still", so it stays the same from one night to the next while the run's
verdicts do.
"""

from __future__ import annotations

import datetime as _dt
import os
from dataclasses import dataclass, field
from pathlib import Path

from groundwork.core.escape import slug
from groundwork.reports import data, manifests
from groundwork.reports.output import write_atomic, write_bytes
from groundwork.reports.render import render_html

BATCH = 5000        # runs per page-data batch
MAX_TIMELINE_ROWS = 400
# A page lists at most PAGE_ROWS rows of each table (violations, unresolved items, grounded_on,
# evidence, retrievals, delegations) and at most PAGE_TEXT_LINES lines of PAGE_TEXT_CHARS
# characters of each text, and says how many more there are: the whole of them is in the
# report's grounding.txt / sources.txt / violations.jsonl and in the archive. (One envelope of
# 100,000 grounded_on entries, each a G2 and a G3: a 71 MB page that took 1 GB to render.)
PAGE_ROWS = 1000
PAGE_TEXT_LINES = 300
PAGE_TEXT_CHARS = 64 * 1024
_PAGE_TEMPLATES = ("run.html", "_layout.html", "_style.css", "_rules.html")
# The sql/reports/ queries a run page is made from (collect), one per table.
_PAGE_QUERIES = ("run_page_runs", "run_page_lint", "run_page_verify", "run_page_violations", "run_page_unresolved",
                 "run_page_spans", "run_page_payload_refs", "run_page_evidence", "run_page_delegations")


@dataclass
class RunOutputs:
    pages_written: int = 0
    pages_kept: int = 0
    pages_removed: int = 0
    texts_written: int = 0
    texts_kept: int = 0
    texts_removed: int = 0
    paths: list[Path] = field(default_factory=list)


_digest = manifests.digest


def _template_version() -> str:
    return manifests.template_version(_PAGE_TEMPLATES, Path(__file__), *(data.query(name)[0] for name in _PAGE_QUERIES))


def write_texts(con, out: Path, manifest: manifests.Manifest, result: RunOutputs, since_ingest: int | None = None) -> None:
    """grounding.txt / sources.txt under runs/<slug>/ for every run that fails now, and for every
    other judged run whose text today differs from the one recorded in the archive (for the rest
    the archive's own file already is today's text). Files of runs that leave that set are
    removed. data.build_state must have run. With ``since_ingest`` (the report directory holds
    what the baseline nightly wrote, whose ingest that was) only the runs whose texts or verdicts
    differ from the baseline's, or reloaded since, are looked at (run_texts $scoped)."""
    texts = manifest["texts"]
    runs_dir = out / "runs"
    scoped = since_ingest is not None
    wanted = set()
    cur = data.execute(con, "run_texts", scoped=scoped, since_ingest=since_ingest)
    while True:
        chunk = cur.fetchmany(10000)
        if not chunk:
            break
        for inv, g, s, s_status, want in chunk:
            sl = slug(inv)
            d = runs_dir / sl
            if not want:   # scoped only: a run that has left the set
                if sl in texts:
                    for name in ("grounding.txt", "sources.txt"):
                        (d / name).unlink(missing_ok=True)
                    manifest.drop("texts", sl)
                    result.texts_removed += 1
                continue
            wanted.add(sl)
            key = [None if g is None else _digest(g), None if s is None else _digest(s)]
            if texts.get(sl) == key and (g is None or (d / "grounding.txt").exists()):
                result.texts_kept += 1
                continue
            for name, text in (("grounding.txt", g), ("sources.txt", s)):
                f = d / name
                if text is None:
                    if name == "grounding.txt" or s_status is not None:
                        f.unlink(missing_ok=True)  # unlintable/unverifiable: the workbench writes nothing
                else:
                    write_bytes(f, (text + "\n").encode("utf-8", "replace"))
            manifest.put("texts", sl, key)
            result.texts_written += 1
    if scoped:
        result.texts_kept = len(texts) - result.texts_written   # the others, as the baseline wrote them
        return
    for sl in [x for x in texts if x not in wanted]:
        for name in ("grounding.txt", "sources.txt"):
            (runs_dir / sl / name).unlink(missing_ok=True)
        manifest.drop("texts", sl)
        result.texts_removed += 1


def _page_keys(con, p: data.Passes, version: str) -> list[tuple[str, str, str]]:
    """(invocation id, slug, page key) of every run with a page: the key is a digest of the
    templates' ``version`` and of what the page is made from (failing_keys)."""
    rows = data.execute(con, "failing_keys", lint=p.lint_id, nightly=p.nightly_id, version=version).fetchall()
    return [(inv, slug(inv), key) for inv, key in rows]


def write_pages(con, out: Path, p: data.Passes, meta: dict, manifest: manifests.Manifest, result: RunOutputs) -> None:
    """index.html for every failing run and every run with a warn finding; stale pages of runs
    that no longer have one are removed."""
    pages = manifest["pages"]
    runs_dir = out / "runs"
    current = {}
    todo = []
    exists, base = os.path.exists, os.fspath(runs_dir)   # ~3,000 kept pages at 100,000 runs: no Path per page
    for inv, sl, key in _page_keys(con, p, _template_version()):
        current[sl] = key
        if pages.get(sl) == key and exists(f"{base}/{sl}/index.html"):
            result.pages_kept += 1
        else:
            todo.append(inv)
    for sl in list(pages):
        if sl not in current:
            (runs_dir / sl / "index.html").unlink(missing_ok=True)
            manifest.drop("pages", sl)
            result.pages_removed += 1
    for i in range(0, len(todo), BATCH):
        batch = todo[i:i + BATCH]
        for inv, page in collect(con, p, batch).items():
            sl = slug(inv)
            d = runs_dir / sl
            tl = page.pop("_timeline")
            texts = [name for name in ("grounding.txt", "sources.txt") if (d / name).exists()]   # write_texts' files
            html = render_html("run.html", d={"meta": meta, "run": page}, tl=tl, root="../../", texts=texts)
            write_atomic(d / "index.html", html)
            manifest.put("pages", sl, current[sl])
            result.pages_written += 1
            if len(result.paths) < 5:
                result.paths.append(d / "index.html")


def write_all(con, out: Path, p: data.Passes, meta: dict, manifest: manifests.Manifest | None = None) -> RunOutputs:
    """Per-run text files and run pages; data.build_state(con, p) must have been called. With
    ``manifest`` (reports.manifests.load) the caller saves it; without, it is loaded and saved here."""
    out.mkdir(parents=True, exist_ok=True)
    own = manifest is None
    manifest = manifests.load(out) if own else manifest
    result = RunOutputs()
    write_texts(con, out, manifest, result, since_ingest=_baseline_ingest(con, p, meta, manifest))
    write_pages(con, out, p, meta, manifest, result)
    if own:
        manifests.save(out, manifest)
    return result


def written(meta: dict) -> dict:
    """What OUT/.groundwork-written.json records once a report is complete: the nightly and its warehouse."""
    return {"nightly_id": meta.get("nightly_id"), "warehouse": meta.get("warehouse")}


def _baseline_ingest(con, p: data.Passes, meta: dict, manifest: manifests.Manifest) -> int | None:
    """The ingest of the baseline nightly when the report directory holds that nightly's outputs
    (manifests.WRITTEN) and its severities were the same, else None."""
    if p.baseline_nightly_id is None or manifest.written != written({**meta, "nightly_id": p.baseline_nightly_id}):
        return None
    row = data.execute(con, "baseline_ingest", baseline=p.baseline_nightly_id, nightly=p.nightly_id).fetchone()
    return None if row is None else row[0]


# ---------------------------------------------------------------------------------------------
# Page data
# ---------------------------------------------------------------------------------------------

def _group(con, name: str, **params) -> dict[str, list[dict]]:
    """The rows of sql/reports/<name>.sql by invocation id."""
    out: dict[str, list[dict]] = {}
    for r in data.rows(con, name, **params):
        out.setdefault(r["invocation_id"], []).append(r)
    return out


def collect(con, p: data.Passes, ids: list[str]) -> dict[str, dict]:
    """Run-page data for the given runs (one query per table for the whole batch, each reading the
    temp table report_batch of their ids)."""
    con.execute("CREATE OR REPLACE TEMP TABLE report_batch AS SELECT UNNEST(?::VARCHAR[]) AS invocation_id", [ids])
    runs = _group(con, "run_page_runs")
    lint = _group(con, "run_page_lint", lint=p.lint_id)
    verify = _group(con, "run_page_verify", verify=p.verify_id)
    viol = _group(con, "run_page_violations", lint=p.lint_id, verify=p.verify_id, cap=PAGE_ROWS)
    unresolved = _group(con, "run_page_unresolved", verify=p.verify_id, cap=PAGE_ROWS)
    spans = _group(con, "run_page_spans")
    refs = _group(con, "run_page_payload_refs")
    evidence = _group(con, "run_page_evidence")
    deleg = _group(con, "run_page_delegations")
    pages = {}
    for inv in ids:
        run = (runs.get(inv) or [{"invocation_id": inv}])[0]
        for k in ("completed_at",):
            run[k] = data._iso(run.get(k))
        for k in ("g_summary", "s_summary", "recorded_grounding", "recorded_sources"):
            run[k], run[k + "_more"] = clip_text(run.get(k))
        v = viol.get(inv, [])
        un = unresolved.get(inv, [])
        sp = place_in_tree(spans.get(inv, []))
        sides = _sides(refs.get(inv, []), evidence.get(inv, []), sp, deleg.get(inv, []))
        more = {"violations": v[0]["total"] - len(v) if v else 0, "unresolved": un[0]["total"] - len(un) if un else 0}
        for k in ("refs", "evidence", "retrievals"):
            more[k] = max(0, len(sides[k]) - PAGE_ROWS)
            sides[k] = sides[k][:PAGE_ROWS]
        dl = deleg.get(inv, [])
        more["delegations"] = max(0, len(dl) - PAGE_ROWS)
        pages[inv] = {
            **run,
            "slug": slug(inv),
            "lint": (lint.get(inv) or [None])[0],
            "verify": (verify.get(inv) or [None])[0],
            "violations": v,
            "unresolved": un,
            "sides": sides,
            "delegations": dl[:PAGE_ROWS],
            "more": more,
            "span_rows": len(sp),
            "_timeline": timeline(sp, [x["message"] for x in v]),
        }
    con.execute("DROP TABLE IF EXISTS report_batch")
    return pages


def clip_text(text: str | None) -> tuple[str | None, int]:
    """``text`` cut to what a page shows (PAGE_TEXT_LINES lines, PAGE_TEXT_CHARS characters, at a
    line's end where it can be), and how many of its lines were left out."""
    if text is None or (len(text) <= PAGE_TEXT_CHARS and text.count("\n") < PAGE_TEXT_LINES):
        return text, 0
    head = text[:PAGE_TEXT_CHARS]
    cut = 0
    for _ in range(PAGE_TEXT_LINES):
        nl = head.find("\n", cut)
        if nl < 0:
            break
        cut = nl + 1
    shown = head[:cut] if cut else head
    return shown, text.count("\n", len(shown)) + (0 if text.endswith("\n") else 1)


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
    s = "(none)" if value is None else str(value)
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
        label = _short(label, 54)   # the label column: 380 px, 54 characters of 11 px monospace (6.6 px each) and a
        #                             clip (tl-labels) for wider characters, so a label never runs into its bar
        bar = None
        if s["start_time"] is not None and s["end_time"] is not None and t0 is not None:
            a = (s["start_time"] - t0).total_seconds() * 1e6
            dur = max(0.0, (s["end_time"] - s["start_time"]).total_seconds() * 1e6)
            bar = {"x": round(label_w + bar_w * a / span_us, 2), "w": round(max(2.0, bar_w * dur / span_us), 2), "dur_us": int(dur)}
        out.append({"y": y, "label": label, "cls": _KIND.get(s["name"], "sp-other"), "named": named, "bar": bar,
                    "title": f"{_short(s['name'], 40)} {_short(s['span_id'], 64)}: line {s['line_no']}"})
    return {"width": width, "height": 12 + len(rows) * row_h, "label_w": label_w, "rows": out,
            "row_h": row_h, "hidden": max(0, len(spans) - len(rows)), "total_us": int(span_us) if t0 is not None else 0}

