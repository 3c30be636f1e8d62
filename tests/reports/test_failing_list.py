"""The failing list is paged by the nightly each run has been failing since: new failures make
pages of their own, so a nightly rewrites the pages whose runs changed and the index, while the
pages of streaks it did not touch keep their content and their file (reports/failing_list.py)."""

from __future__ import annotations

import os
import re

from groundwork.reports import failing_list, manifests

META = {"tool_version": "test", "generated_at": "2026-11-30T00:00:00Z"}
DAYS = {1: "2026-11-01", 2: "2026-11-02", 3: "2026-11-03"}


def row(inv: str, since: int) -> dict:
    return {"invocation_id": inv, "slug": inv, "has_page": True, "agent_id": "agent.one", "mode": "none",
            "completed_at": "2026-11-01T00:00:00Z", "g_status": "failed", "s_status": None, "codes": "N1",
            "since_nightly_id": since, "since_date": DAYS[since]}


def night(fdir, manifest, rows) -> set[str]:
    """Write the list of ``rows`` (latest streaks first) with 2 runs a page; the names written."""
    pages = failing_list.plan(rows, page_size=2)
    written = failing_list.write(fdir, pages, total=len(rows), meta=META, manifest=manifest, limit=2000)
    return {p.name for p in written}


def links(path) -> dict[str, str]:
    html = path.read_text(encoding="utf-8")
    return {text: href for href, text in re.findall(r'<a href="([^"]+)">([^<]+)</a>', html)}


def runs_on(path) -> list[str]:
    return re.findall(r'<a href="\.\./runs/([^/]+)/index\.html">', path.read_text(encoding="utf-8"))


def test_a_nightly_rewrites_the_pages_of_the_streaks_that_changed_and_the_index(tmp_path):
    fdir, manifest = tmp_path / "failing", manifests.Manifest({})
    # Nightly 2: r1..r3 fail since nightly 1 (two pages of 2), r4 and r5 since nightly 2.
    first = [row("r5", 2), row("r4", 2), row("r1", 1), row("r2", 1), row("r3", 1)]
    assert night(fdir, manifest, first) == {"index.html", "since-2.html", "since-1.html", "since-1-2.html"}
    assert runs_on(fdir / "since-2.html") == ["r5", "r4"]
    assert runs_on(fdir / "since-1.html") == ["r1", "r2"] and runs_on(fdir / "since-1-2.html") == ["r3"]
    old = 1_000_000_000_000_000_000   # a time no write can give a file
    for p in fdir.iterdir():
        os.utime(p, ns=(old, old))

    # Nightly 3: r6 fails, r4 is resolved. A list numbered from its top would shift every page by
    # one run; here nightly 1's pages are untouched.
    second = [row("r6", 3), row("r5", 2), row("r1", 1), row("r2", 1), row("r3", 1)]
    assert night(fdir, manifest, second) == {"index.html", "since-3.html", "since-2.html"}
    assert all(p.stat().st_mtime_ns == old for p in (fdir / "since-1.html", fdir / "since-1-2.html"))
    assert runs_on(fdir / "since-3.html") == ["r6"] and runs_on(fdir / "since-2.html") == ["r5"]
    # A page links to the index and to the other parts of its nightly's runs, not to another
    # nightly's page (that link would change as nightlies come and go).
    assert links(fdir / "since-3.html")["every failing run, by the nightly since which it fails"] == "index.html"
    assert [href for href in links(fdir / "since-3.html").values() if href.startswith("since-")] == []
    assert links(fdir / "since-1.html")["part 2 →"] == "since-1-2.html"
    assert links(fdir / "since-1-2.html")["← part 1"] == "since-1.html"
    assert "← part 1" not in links(fdir / "since-1.html")
    index = (fdir / "index.html").read_text(encoding="utf-8")
    assert re.findall(r'<a href="(since-[^"]+)">', index) == ["since-3.html", "since-2.html", "since-1.html", "since-1-2.html"]
    assert "5 failing runs" in index
    assert re.findall(r'nightly #(\d) \((\d{4}-\d\d-\d\d)\)</td><td class="n">(\d+)</td>', index) == [
        ("3", "2026-11-03", "1"), ("2", "2026-11-02", "1"), ("1", "2026-11-01", "3")]

    # Nothing changed: nothing is rewritten.
    assert night(fdir, manifest, second) == set()

    # r5 resolved too: nightly 2's page goes; the others stay as they are.
    third = [row("r6", 3), row("r1", 1), row("r2", 1), row("r3", 1)]
    assert night(fdir, manifest, third) == {"index.html"}
    assert sorted(p.name for p in fdir.iterdir()) == ["index.html", "since-1-2.html", "since-1.html", "since-3.html"]
    assert "since-2.html" not in manifest["lists"]


def test_a_report_outside_a_nightly_lists_its_failing_runs_on_pages_of_their_own(tmp_path):
    fdir = tmp_path / "failing"
    rows = [dict(row(f"r{i}", 1), since_nightly_id=None, since_date=None) for i in range(3)]
    assert night(fdir, manifests.Manifest({}), rows) == {"index.html", "since-none.html", "since-none-2.html"}
    assert runs_on(fdir / "since-none.html") + runs_on(fdir / "since-none-2.html") == ["r0", "r1", "r2"]
    assert "Runs failing since this report — part 1 of 2" in (fdir / "since-none.html").read_text(encoding="utf-8")


def test_the_earlier_numbered_pages_are_removed(tmp_path):
    fdir = tmp_path / "failing"
    fdir.mkdir()
    (fdir / "page-1.html").write_text("old", encoding="utf-8")
    manifest = manifests.Manifest({"lists": {"page-1.html": "x"}})
    night(fdir, manifest, [row("r1", 1)])
    assert sorted(p.name for p in fdir.iterdir()) == ["index.html", "since-1.html"]
    assert set(manifest["lists"]) == {"index.html", "since-1.html"}
