"""Every page of `groundwork serve` over HTTP (starlette's TestClient): what a user sees on the runs
list (filters, facet counts, sorting, paging), a run page (the nightly's own page, live), a rule
page, and the headers that keep the pages script-free and read-only."""

from __future__ import annotations

import hashlib
import re
from html.parser import HTMLParser
from urllib.parse import quote

import pytest

from groundwork.core.escape import slug
from serve_support import EXAMPLE_WAREHOUSE

G1_RUN = "01a22a33-cac0-70bb-9d1e-fda8f17f0647"   # violation/G1/chat-before-retrieval (fails today)


class Doc(HTMLParser):
    """Tags, attributes and the text of table #runs rows."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)

    def links(self, prefix: str = "") -> list[str]:
        return [a["href"] for t, a in self.tags if t == "a" and a.get("href", "").startswith(prefix)]


def run_ids(html: str) -> list[str]:
    """The run ids linked from the runs table, in order."""
    table = html.split('<table id="runs">', 1)[1].split("</table>", 1)[0]
    return re.findall(r'<a href="/runs/[^"]+/">([^<]+)</a>', table)


def count_line(html: str) -> str:
    return re.search(r'<p id="count">([^<]*)</p>', html).group(1)


# ------------------------------------------------------------------------------------ runs list

def test_the_runs_list_pages_the_99_example_runs(example_client):
    r = example_client.get("/")
    assert r.status_code == 200
    assert count_line(r.text).startswith("99 runs · page 1 of 2")
    assert len(run_ids(r.text)) == 50
    second = example_client.get("/?page=2").text
    assert len(run_ids(second)) == 49 and not set(run_ids(second)) & set(run_ids(r.text))


def test_two_filters_narrow_the_list_and_every_row_matches(example_client):
    html = example_client.get("/?agent=fake.none&status=failed").text
    ids = run_ids(html)
    # fake.none's runs failing today's lint, counted independently in the warehouse (groundwork sql)
    import duckdb
    con = duckdb.connect(str(EXAMPLE_WAREHOUSE), read_only=True)
    try:
        want = {r[0] for r in con.execute("SELECT invocation_id FROM run_summary WHERE agent_id = 'fake.none' AND lint_status = 'failed'").fetchall()}
    finally:
        con.close()
    assert want and set(ids) == want
    assert count_line(html).startswith(f"{len(want)} run")


def test_facet_counts_are_counted_under_the_other_filters(example_client):
    html = example_client.get("/?status=failed").text
    # the status facet ignores its own filter: 72 passed and 27 failed of the 99
    assert 'passed (72)' in html and 'failed (27)' in html
    # the rule facet counts failing runs per code: 14 runs fail G0 today (README: 14 withheld runs ...)
    assert '<option value="G0">G0 (14)</option>' in html
    assert "unlintable (0)" in html


def test_the_rule_filter_keeps_the_runs_with_that_code(example_client):
    html = example_client.get("/?code=G1").text
    assert G1_RUN in run_ids(html)
    assert count_line(html).startswith("4 runs")


def test_date_range_filter_and_a_bad_date_is_named(example_client):
    assert count_line(example_client.get("/?since=2100-01-01").text).startswith("0 runs")
    assert count_line(example_client.get("/?until=2100-01-01").text).startswith("99 runs")
    r = example_client.get("/?since=yesterday")
    assert r.status_code == 200 and "since: expected a date (YYYY-MM-DD), got &#39;yesterday&#39;" in r.text


def test_sorting_by_a_column_both_ways(example_client):
    asc = run_ids(example_client.get("/?sort=invocation_id&desc=0").text)
    desc = run_ids(example_client.get("/?sort=invocation_id&desc=1").text)
    assert asc == sorted(asc) and desc == sorted(desc, reverse=True) and asc[0] < desc[0]
    # an unknown sort key is not pasted into SQL: the default order
    r = example_client.get("/?sort=completed_at;DROP TABLE runs")
    assert r.status_code == 200 and len(run_ids(r.text)) == 50


def test_new_since_the_last_nightly(nightly_client, example_client):
    assert "no nightly yet" in example_client.get("/").text
    html = nightly_client.get("/?new=1").text
    # the first nightly calls every failing run new: 27 (README, Quickstart)
    assert count_line(html).startswith("27 runs")
    assert count_line(nightly_client.get("/?new=1&status=passed").text).startswith("0 runs")


# ------------------------------------------------------------------------------------ run page

def _main(html: str, end: str) -> str:
    """A run page from its <h1> to its footer."""
    return html[html.index("<h1>"):html.index(end)]


def test_the_run_page_is_the_nightlys_run_page(nightly, nightly_client):
    _, reports = nightly
    static = (reports / "runs" / slug(G1_RUN) / "index.html").read_text(encoding="utf-8")
    live = nightly_client.get(f"/runs/{G1_RUN}/")
    assert live.status_code == 200
    assert _main(live.text, '<p class="muted">groundwork serve') == _main(static, '<p class="muted">Generated by')


def test_run_page_links_its_texts(nightly_client):
    r = nightly_client.get(f"/runs/{G1_RUN}/grounding.txt")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    assert r.text.startswith("grounding: FAILED [retrieval]\n  - G1: ") and r.text.endswith("\n")
    assert nightly_client.get(f"/runs/{G1_RUN}/sources.txt").text.startswith("sources: ")


def test_run_page_without_a_nightly(example_client):
    html = example_client.get(f"/runs/{G1_RUN}/").text
    assert '<span class="badge failed" id="g-status">failed</span>' in html
    assert "G1: chat span" in html


def test_unknown_run_and_rule_are_404_pages(example_client):
    r = example_client.get("/runs/no-such-run/")
    assert r.status_code == 404 and "no run &#39;no-such-run&#39; in the warehouse" in r.text
    assert example_client.get("/rules/ZZ9").status_code == 404
    assert example_client.get("/nowhere").status_code == 404


def test_a_run_page_without_the_slash_redirects(example_client):
    r = example_client.get(f"/runs/{G1_RUN}", follow_redirects=False)
    assert r.status_code in (301, 302, 307, 308) and r.headers["location"].endswith(f"/runs/{G1_RUN}/")


# ----------------------------------------------------------------------------------- rule page

def test_rule_page_has_title_sql_failing_runs_and_trend(example_client):
    html = example_client.get("/rules/G1").text
    assert "No chat span starts before the first retrieval span ends" in html   # sql/rules/G1.sql's title
    assert "sql/rules/G1.sql" in html and "SELECT j.invocation_id" in html
    failing = html.split('id="failing-runs"', 1)[1].split("</table>", 1)[0]
    assert f'href="/runs/{G1_RUN}/"' in failing
    assert "Runs failing it now (4)" in html
    trend = html.split('id="trend-table"', 1)[1].split("</table>", 1)[0]
    # one lint pass in the example warehouse: 99 judged, 4 failing G1
    assert re.search(r'<td class="n">99</td><td class="n">4</td><td class="n">4\.0 %</td>', trend), trend


def test_rule_list_links_every_rule(example_client):
    doc = Doc(example_client.get("/rules").text)
    codes = {h.rsplit("/", 1)[1] for h in doc.links("/rules/")}
    assert {"G0", "G1", "G2", "G3", "G4", "E1", "R1", "R2", "R3", "N1", "D1", "D2", "D3", "S1", "S2"} <= codes


def test_a_rule_trend_over_several_nightlies(nightly_client):
    html = nightly_client.get("/rules/G0").text
    assert "Runs failing it now (14)" in html


# ------------------------------------------------------------------------------- every response

PAGES = ["/", "/?agent=fake.none&status=failed&sort=agent_id", f"/runs/{G1_RUN}/", "/rules", "/rules/G1", "/sql",
         "/sql?q=SELECT+1", "/nowhere"]


@pytest.mark.parametrize("path", PAGES)
def test_every_page_has_a_strict_csp_and_no_script(example_client, path):
    r = example_client.get(path)
    csp = r.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "script-src" not in csp and "frame-ancestors 'none'" in csp
    assert "style-src 'self'" in csp and "'unsafe-inline'" not in csp
    assert r.headers["x-content-type-options"] == "nosniff"
    doc = Doc(r.text)
    assert not [t for t, _ in doc.tags if t in ("script", "iframe", "object", "embed")]
    assert not [a for _, a in doc.tags for k in a if k.startswith("on")]
    # nothing from elsewhere: every link, stylesheet and form target is this app's
    for t, a in doc.tags:
        for k in ("href", "src", "action"):
            if k in a:
                assert a[k].startswith("/") or a[k].startswith("#") or a[k] in ("grounding.txt", "sources.txt", "data:,"), (t, a)


@pytest.mark.parametrize("path", PAGES[:-1])
def test_every_page_says_how_fresh_its_data_is(example_client, path):
    html = example_client.get(path).text
    assert re.search(r'id="freshness">Data as of \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC', html)
    assert "last ingest: 2026-12-02 02:29:55 UTC" in html


def test_the_stylesheet_is_served_by_the_app(example_client):
    r = example_client.get("/static/style.css")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/css") and ".badge" in r.text


def test_nothing_but_get_is_answered_and_the_warehouse_is_never_written(example_client):
    before = hashlib.sha256(EXAMPLE_WAREHOUSE.read_bytes()).hexdigest()
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        r = example_client.request(method, "/sql", data={"q": "SELECT 1"})
        assert r.status_code == 405 and r.headers["allow"] == "GET, HEAD"
    for path in PAGES:
        example_client.get(path)
    assert hashlib.sha256(EXAMPLE_WAREHOUSE.read_bytes()).hexdigest() == before


def test_a_run_id_with_url_characters_is_linked_quoted(hostile_client):
    from serve_support import EVIL_ID
    html = hostile_client.get("/").text
    assert f'href="/runs/{quote(EVIL_ID, safe="")}/"' in html
    assert hostile_client.get(f"/runs/{quote(EVIL_ID, safe='')}/").status_code == 200


def test_an_unexpected_failure_is_a_500_page_and_one_line(tmp_path, capfd):
    """A warehouse copy that lost a view the pages read: the page says so, no traceback anywhere."""
    import shutil

    import duckdb
    from starlette.testclient import TestClient

    from groundwork.serve.app import create_app
    path = tmp_path / "w.duckdb"
    shutil.copyfile(EXAMPLE_WAREHOUSE, path)
    con = duckdb.connect(str(path))
    con.execute("DROP VIEW run_summary")
    con.close()
    with TestClient(create_app(path)) as client:
        r = client.get("/")
        assert r.status_code == 500 and "internal error: CatalogException" in r.text and "Traceback" not in r.text
        assert client.get("/rules").status_code == 200
    err = capfd.readouterr().err
    assert "groundwork serve: /: internal error: CatalogException" in err and "Traceback" not in err
