"""`groundwork serve` in a real browser (headless Chromium over the DevTools pipe): from the runs
list to a rule, its failing runs and a run page by clicking; two filters applied with the form;
a saved query run from its form. No page logs a console error (a CSP violation or a failed load
would). Screenshots are kept in tests/artifacts/; ``GROUNDWORK_README_SCREENSHOT=1`` also writes
docs/serve.png (the README's) from the example warehouse."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import browser
from serve_support import ARTIFACTS, EXAMPLE_WAREHOUSE, ROOT, live_server

pytestmark = pytest.mark.skipif(not browser.available(), reason=f"chromium not installed at {browser.CHROMIUM} (CI installs Debian's chromium)")


@pytest.fixture(scope="module")
def chromium():
    with browser.Browser() as b:
        yield b


@pytest.fixture(scope="module")
def url():
    with live_server(EXAMPLE_WAREHOUSE) as base:
        yield base


def goto(b: browser.Browser, url: str) -> None:
    b.events.clear()
    b.call("Page.navigate", {"url": url}, session=True)
    b.wait_event("Page.loadEventFired")
    b.evaluate("1")


def click(b: browser.Browser, selector: str) -> None:
    """Click the element as a user would (a mouse press and release at the centre of its first line
    box: a link may wrap) and wait for the page it leads to."""
    box = b.evaluate(f"(() => {{ const e = document.querySelector({selector!r}); e.scrollIntoView({{block: 'center'}});"
                     f" const r = e.getClientRects()[0]; return [r.x + r.width / 2, r.y + r.height / 2]; }})()")
    assert box, selector
    b.events.clear()
    for kind in ("mousePressed", "mouseReleased"):
        b.call("Input.dispatchMouseEvent", {"type": kind, "x": box[0], "y": box[1], "button": "left", "clickCount": 1},
               session=True)
    b.wait_event("Page.loadEventFired")
    b.evaluate("1")


def text(b: browser.Browser, selector: str) -> str:
    return b.evaluate(f"document.querySelector({selector!r}).innerText")


def test_rule_to_failing_runs_to_a_run_page(chromium, url):
    b = chromium
    goto(b, url)
    assert text(b, "#count").startswith("99 runs")
    # the runs list links each rule code of a run to its rule page
    click(b, 'a[href="/rules"]')
    click(b, 'a[href="/rules/G1"]')
    assert b.evaluate("location.pathname") == "/rules/G1"
    assert "No chat span starts before the first retrieval span ends" in text(b, "#titles")
    b.screenshot(ARTIFACTS / "serve-rule.png")
    assert b.console_errors() == []
    first = b.evaluate("document.querySelector('#failing-runs tbody a').textContent")
    click(b, "#failing-runs tbody a")
    assert b.evaluate("location.pathname") == f"/runs/{first}/"
    assert text(b, "h1") == f"Run {first}"
    assert "G1:" in text(b, "#violation-list")
    assert b.evaluate("getComputedStyle(document.querySelector('.cols')).display") == "grid"   # the stylesheet loaded
    b.screenshot(ARTIFACTS / "serve-run.png")
    assert b.console_errors() == []


def test_two_filters_from_the_form(chromium, url):
    b = chromium
    goto(b, url)
    b.evaluate("document.querySelector('select[name=agent]').value = 'fake.none';"
               "document.querySelector('select[name=status]').value = 'failed'; 1")
    click(b, "#apply")
    params = b.evaluate("Object.fromEntries(new URLSearchParams(location.search))")
    assert params["agent"] == "fake.none" and params["status"] == "failed"
    rows = b.evaluate("[...document.querySelectorAll('#runs tbody tr')].map(r => [...r.cells].map(c => c.innerText))")
    assert rows and all(r[1] == "fake.none" and r[5] == "failed" for r in rows)
    assert text(b, "#count").startswith(f"{len(rows)} run")
    b.screenshot(ARTIFACTS / "serve-filtered.png")
    assert b.console_errors() == []


def test_a_saved_query_from_its_form(chromium, url):
    b = chromium
    goto(b, url + "sql")
    b.evaluate("document.querySelector('#saved-runs_citing_source').open = true;"
               "document.querySelector('#saved-runs_citing_source input[name=\"p.source_id\"]').value = 'src:a'; 1")
    click(b, "#saved-runs_citing_source button")
    assert b.evaluate("location.pathname") == "/sql"
    assert text(b, "#result").startswith("Result of runs_citing_source")
    header = b.evaluate("[...document.querySelectorAll('#result-table th')].map(c => c.innerText)")
    assert header[0] == "invocation_id"
    assert b.evaluate("document.querySelectorAll('#result-table tbody tr').length") > 1
    b.screenshot(ARTIFACTS / "serve-sql.png")
    assert b.console_errors() == []


def test_an_ad_hoc_query_from_the_box(chromium, url):
    b = chromium
    goto(b, url + "sql")
    b.evaluate("document.querySelector('#q').value = 'SELECT agent_id, count(*) AS runs FROM run_summary GROUP BY 1 ORDER BY 2 DESC'; 1")
    click(b, "#run")
    assert b.evaluate("document.querySelector('#result-table tbody td').innerText") == "fake.retrieval"
    assert b.console_errors() == []


def test_readme_screenshot(chromium, monkeypatch):
    """The README's picture: the runs list of the example warehouse, filtered to the failing runs,
    served as README's `groundwork serve --warehouse warehouse.duckdb.example` serves it."""
    b = chromium
    monkeypatch.chdir(ROOT)
    with live_server(Path(EXAMPLE_WAREHOUSE.name)) as base:
        goto(b, base + "?status=failed")
        assert "a read-only copy of warehouse.duckdb.example" in text(b, "#freshness")
        b.screenshot(ARTIFACTS / "serve-runs.png", full_page=False)
        if os.environ.get("GROUNDWORK_README_SCREENSHOT"):
            b.screenshot(ROOT / "docs" / "serve.png", full_page=False)
        assert b.console_errors() == []
