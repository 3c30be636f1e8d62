"""Every string that came from a run is hostile: agent ids, run ids, modes, source ids, span
names, messages, recorded texts, ingest issue paths. The reports must show them as text, never as
markup, links, script or bidi tricks, and every machine output must stay parseable."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from groundwork.core.warehouse import connect
from groundwork.reports.build import build_reports
from groundwork.reports.data import Passes
from groundwork.core.escape import slug
from report_rows import add_nightly, add_pass, add_run, add_verdict
from test_reports import META, PROM_LINE, parse

EVIL = "<script>alert(1)</script>\"'</textarea><img src=x onerror=alert(2)>javascript:alert(1)\u202eevil\x07\x1b[31m"
EVIL_ID = "javascript:alert(1)//<b>\u202e"
EVIL_SRC = "[x](javascript:alert(3)) <a href=\"javascript:alert(4)\">s</a>"
EVIL_MSG = f"G2: payload rests on {EVIL_SRC!r} ({'a' * 12}…) which was not retrieved in this invocation </pre><script>alert(5)</script>"

ALLOWED_TAGS = {"html", "head", "meta", "title", "style", "body", "nav", "a", "h1", "h2", "h3", "p", "span", "div",
                "table", "thead", "tbody", "tr", "th", "td", "pre", "code", "ul", "li", "svg", "line", "rect", "text",
                "i", "em", "circle", "polyline", "figure", "figcaption", "defs", "clippath"}
SAFE_HREF = re.compile(r"^(#[a-z-]+|(\.\./)*(runs/[0-9A-Za-z._-]+/index\.html|fleet\.html|failing/(index|since-(\d+|none)(-\d+)?)\.html|"
                       r"summary\.(md|json)|index\.html|since-(\d+|none)(-\d+)?\.html|grounding\.txt|sources\.txt|rules\.html(#[A-Za-z0-9]+)?))$")


@pytest.fixture(scope="module")
def hostile_reports(tmp_path_factory):
    return build_hostile(tmp_path_factory.mktemp("hostile"))


def build_hostile(out: Path) -> Path:
    """Reports for a warehouse whose every run-controlled string is hostile."""
    con = connect(":memory:")
    spans = [
        {"name": "invoke_agent", "span_id": "r00t", "parent_id": None, "start": 0, "end": 1000, "dd_agent_id": EVIL},
        {"name": EVIL, "span_id": "0dd", "parent_id": "r00t", "start": 10, "end": 20},
        {"name": "retrieval", "span_id": "5ea", "parent_id": "r00t", "start": 30, "end": 40,
         "dd_source_id": EVIL_SRC, "dd_content_hash": EVIL},
    ]
    add_run(con, EVIL_ID, agent=EVIL, mode=EVIL, spans=spans, refs=[(EVIL_SRC, "a" * 64)], evidence=[(EVIL, EVIL)],
            recorded_grounding="grounding: passed [" + EVIL + "] (0 retrieval, 0 chat spans)\n",
            recorded_sources="sources: 0 verified, 1 unresolved (no independent copy: " + EVIL + ")\n")
    add_run(con, "plain-run", agent=EVIL_SRC, mode="none")
    add_pass(con, 1, rules="G0,G2," + EVIL)
    add_pass(con, 2, "verify", "S1,S2")
    add_verdict(con, 1, EVIL_ID, [("G2", EVIL_MSG), (EVIL, EVIL)], mode=EVIL)
    add_verdict(con, 1, "plain-run", [("N1", "N1: 1 chat span(s) in an agent that declared no model call")], mode="none")
    add_verdict(con, 2, EVIL_ID, [("S1", f"S1: evidence cites {EVIL!r}, which 'snap' does not hold")], kind="verify")
    add_verdict(con, 2, "plain-run", kind="verify")
    con.execute("INSERT INTO verify_unresolved (lint_id, invocation_id, seq, item) VALUES (2, ?, 0, ?)", [EVIL_ID, EVIL + " (None)"])
    con.execute("INSERT INTO ingest_issues (ingest_id, invocation_id, path, line, kind, message) VALUES (1, ?, ?, 3, ?, ?)",
                [EVIL_ID, EVIL_ID + "/spans.jsonl", EVIL, EVIL])
    add_nightly(con, 1, 1, 2, exit_status=None)
    meta = dict(META, runs_dir=EVIL, nightly_id=1)
    build_reports(con, out, Passes(lint_id=1, verify_id=2, nightly_id=1, ingest_id=1), meta)
    return out


def html_files(out: Path) -> list[Path]:
    return [out / "fleet.html", out / "failing" / "index.html", *sorted(out.glob("failing/since-*.html")),
            *sorted(out.glob("runs/*/index.html"))]


def test_hostile_run_id_gets_a_hashed_page_name(hostile_reports):
    page = hostile_reports / "runs" / slug(EVIL_ID) / "index.html"
    assert slug(EVIL_ID).startswith("x-") and page.exists()
    assert sorted(p.parent.name for p in hostile_reports.glob("runs/*/index.html")) == sorted([slug(EVIL_ID), "plain-run"])


def test_html_contains_no_injected_element_attribute_or_link(hostile_reports):
    for path in html_files(hostile_reports):
        doc = parse(path)
        tags = {t for t, _ in doc.tags}
        assert tags <= ALLOWED_TAGS, (path, tags - ALLOWED_TAGS)
        for tag, attrs in doc.tags:
            assert not any(k.startswith("on") for k in attrs), (path, tag, attrs)
            assert not any("javascript:" in (v or "").lower() for v in attrs.values()), (path, tag, attrs)
            if tag == "a":
                assert SAFE_HREF.match(attrs["href"]), (path, attrs["href"])
        src = path.read_text(encoding="utf-8")
        assert "\u202e" not in src and "\x07" not in src and "\x1b" not in src
        assert "Content-Security-Policy" in src and "default-src 'none'" in src


def test_hostile_strings_are_shown_as_text(hostile_reports):
    page = hostile_reports / "runs" / slug(EVIL_ID) / "index.html"
    text = "".join(parse(page).text)
    shown = EVIL.replace("\u202e", "\\u202e").replace("\x07", "\\x07").replace("\x1b", "\\x1b")
    assert shown in text                                  # the agent id, exactly, as visible text
    assert EVIL_MSG.replace("\u202e", "\\u202e") in text   # the violation message
    assert EVIL_SRC in text                               # the retrieval / grounded_on source id
    fleet_text = "".join(parse(hostile_reports / "fleet.html").text)
    assert shown in fleet_text and EVIL_ID.replace("\u202e", "\\u202e") in fleet_text


def test_markdown_summary_has_no_live_markup(hostile_reports):
    md = (hostile_reports / "summary.md").read_text(encoding="utf-8")
    assert not re.search(r"(?<!\\)<(script|img|/textarea|a )", md), "live HTML in Markdown"
    assert not re.search(r"(?<!\\)\]\(", md), "live Markdown link"
    assert "\u202e" not in md
    assert "\\<script\\>alert\\(1\\)\\</script\\>" in md


def test_machine_outputs_stay_parseable(hostile_reports):
    root = ET.parse(hostile_reports / "junit.xml").getroot()   # control characters would make this fail
    classnames = {c.get("classname") for c in root.iter("testcase")}
    assert "grounding." + EVIL.replace("\x07", "\\x07").replace("\x1b", "\\x1b") in classnames
    lines = (hostile_reports / "metrics" / "groundwork.prom").read_text(encoding="utf-8").splitlines()
    assert all(PROM_LINE.match(x) for x in lines), [x for x in lines if not PROM_LINE.match(x)]
    assert all(x.count("\n") == 0 for x in lines)
    summary = json.loads((hostile_reports / "summary.json").read_text(encoding="utf-8"))
    assert summary["worst_agents"][0]["agent_id"] in (EVIL, EVIL_SRC)          # JSON keeps exact strings
    rows = [json.loads(x) for x in (hostile_reports / "violations.jsonl").read_text(encoding="utf-8").splitlines()]
    assert {r["message"] for r in rows if r["invocation_id"] == EVIL_ID} >= {EVIL_MSG, EVIL}


def test_per_run_texts_are_exact_even_for_hostile_runs(hostile_reports):
    g = (hostile_reports / "runs" / slug(EVIL_ID) / "grounding.txt").read_text(encoding="utf-8")
    assert g == f"grounding: FAILED [{EVIL}]\n  - {EVIL_MSG}\n  - {EVIL}\n"


def test_huge_strings_cannot_bloat_the_fleet_report(tmp_path):
    con = connect(":memory:")
    huge = "<b>" + "A" * 1_000_000
    add_run(con, "big", agent=huge, mode=huge)
    add_pass(con, 1)
    add_verdict(con, 1, "big", [("G0", huge)], mode=huge)
    add_nightly(con, 1, 1, None, exit_status=None)
    build_reports(con, tmp_path, Passes(lint_id=1, nightly_id=1), META)
    size = (tmp_path / "fleet.html").stat().st_size
    assert size < 200_000, size
    assert "more characters]" in (tmp_path / "fleet.html").read_text()
    # The exact texts are not cut.
    assert (tmp_path / "runs" / "big" / "grounding.txt").read_text() == f"grounding: FAILED [{huge}]\n  - {huge}\n"


def test_lint_and_verify_junit_outputs_escape_hostile_strings():
    """`groundwork lint/verify --format junit` render lint/junit.xml.j2 and verify/junit.xml.j2:
    autoescaped like the nightly's junit.xml (a `.xml.j2` name is an XML template too)."""
    from types import SimpleNamespace

    from groundwork.reports.render import render

    lint_xml = render("lint/junit.xml.j2", suites=[("G2", "title", [(EVIL_ID, EVIL_MSG)])],
                      unlintable=[SimpleNamespace(invocation_id=EVIL_ID, reason=EVIL)],
                      findings=[("GW4", EVIL_ID, EVIL)])
    root = ET.fromstring(lint_xml)
    names = [c.get("name") for c in root.iter("testcase")]
    assert names.count(EVIL_ID) == 3 and "<script>" not in lint_xml
    assert [f.get("message") for f in root.iter("failure")][-1] == EVIL_MSG
    run = SimpleNamespace(invocation_id=EVIL_ID, status="failed", codes=["S1"], violations=[EVIL], summary=EVIL_MSG)
    verify_xml = render("verify/junit.xml.j2", runs=[run], failed=1, unverifiable=0, sources_path=EVIL, seconds=0.1)
    case = ET.fromstring(verify_xml).find(".//testcase")
    assert case.get("name") == EVIL_ID and case.find("failure").text == EVIL_MSG and "<script>" not in verify_xml
