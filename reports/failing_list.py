"""The complete list of failing runs: ``failing/index.html`` and pages keyed by the nightly the
runs have been failing since.

A run stays in its failing streak, so it stays on the pages of the nightly that streak began
(``failing/since-<N>.html``, then ``since-<N>-2.html`` ... when more than PAGE_SIZE runs began
failing at nightly N; ``since-none`` for a report outside a nightly). New failures make pages of
their own, so a nightly re-renders the pages whose runs changed (a new nightly's, a streak's
that lost resolved runs) and the index, not every page (pages numbered from the top of one list
would all shift by the number of new failures). Within a nightly the newest completion comes
first; the index and the pages go from the latest nightly to the earliest.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import orjson

from groundwork.core.escape import slug
from groundwork.reports import data, manifests
from groundwork.reports.output import write_atomic
from groundwork.reports.render import render_html

PAGE_SIZE = 500     # failing runs per list page
INDEX = "index.html"
TEMPLATES = ("failing.html", "failing_index.html", "_run_table.html", "_layout.html", "_style.css", "_rules.html")
SHOWN = ("invocation_id", "slug", "has_page", "agent_id", "mode", "completed_at", "g_status", "s_status", "codes",
         "since_nightly_id", "since_date")  # the columns of failing_runs a list page shows


@dataclass
class Page:
    name: str                  # file name under failing/
    since: int | None          # the nightly the runs began failing at (None: outside a nightly)
    since_date: str | None
    part: int                  # 1-based part of that nightly's runs
    parts: int
    streak_runs: int           # runs failing since that nightly, on all its parts
    rows: list


def page_name(since: int | None, part: int) -> str:
    """The file name of part ``part`` of the runs failing since nightly ``since``."""
    key = "none" if since is None else str(since)
    return f"since-{key}.html" if part == 1 else f"since-{key}-{part}.html"


def plan(rows: list[dict], page_size: int = PAGE_SIZE) -> list[Page]:
    """The list pages of ``rows`` (data.failing_runs: by since_nightly_id, latest first, NULL
    last), in that order: each nightly's runs in parts of ``page_size``."""
    groups: list[list[dict]] = []
    for r in rows:
        if groups and groups[-1][0]["since_nightly_id"] == r["since_nightly_id"]:
            groups[-1].append(r)
        else:
            groups.append([r])
    pages = []
    for group in groups:
        parts = -(-len(group) // page_size)
        since, day = group[0]["since_nightly_id"], group[0]["since_date"]
        for i in range(parts):
            pages.append(Page(page_name(since, i + 1), since, day, i + 1, parts, len(group),
                              group[i * page_size:(i + 1) * page_size]))
    return pages


def failing_rows(con) -> list[dict]:
    """Every failing run, as a list page shows it (the columns SHOWN)."""
    out = []
    for r in data.failing_runs(con) if con is not None else []:
        r["slug"] = slug(r["invocation_id"])
        r["has_page"] = True
        out.append({k: r[k] for k in SHOWN})
    return out


def write(fdir: Path, pages: list[Page], *, total: int, meta: dict, manifest: manifests.Manifest,
          limit: int) -> list[Path]:
    """Write the index and every page of ``pages`` into ``fdir`` whose content is not the one
    ``manifest`` records; remove the pages of an earlier list no longer in it."""
    fdir.mkdir(exist_ok=True)
    written = []
    lists = manifest.setdefault("lists", {})
    version = manifests.template_version(TEMPLATES, Path(__file__), limit)
    d = {"meta": meta}
    groups = [{"since": p.since, "since_date": p.since_date, "runs": p.streak_runs,
               "pages": [q.name for q in pages if q.since == p.since]} for p in pages if p.part == 1]

    def put(name: str, key: str, template: str, **context) -> None:
        if lists.get(name) == key and (fdir / name).exists():
            return
        written.append(write_atomic(fdir / name, render_html(template, limit=limit, d=d, root="../", **context)))
        manifest.put("lists", name, key)

    put(INDEX, manifests.digest(version, INDEX, total, orjson.dumps(groups).decode()), "failing_index.html",
        total=total, groups=groups)
    for i, p in enumerate(pages):
        # Links to the other parts of the same nightly's runs only: a link to another nightly's
        # page would change as nightlies come and go (the index links every page).
        newer = pages[i - 1].name if p.part > 1 else None
        older = pages[i + 1].name if p.part < p.parts else None
        key = manifests.digest(version, p.name, p.since, p.since_date, p.part, p.parts, p.streak_runs, newer, older,
                               orjson.dumps(p.rows).decode())
        put(p.name, key, "failing.html", p=p, rows=p.rows, newer=newer, older=older)
    keep = {INDEX, *(p.name for p in pages)}
    for old in [*fdir.glob("since-*.html"), *fdir.glob("page-*.html")]:   # page-N.html: the earlier numbered pages
        if old.name not in keep:
            old.unlink()
    for name in [n for n in lists if n not in keep]:
        manifest.drop("lists", name)
    return written
