"""Reports from warehouse rows: change classes, bounded fleet HTML, paging, run pages, machine
outputs, incremental per-run files."""

from __future__ import annotations

import json
import os
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest

from groundwork.core.warehouse import connect
from groundwork.reports import data, fleet, machine, runpage
from groundwork.reports.build import build_reports
from groundwork.reports.data import Passes
from report_rows import add_nightly, add_pass, add_run, add_verdict, add_violation

META = {"tool_version": "test", "nightly_id": 2, "generated_at": "2026-11-30T00:00:00Z", "runs_dir": "/archive",
        "out_dir": "/out", "started_epoch": 0.0}

G1 = ("G1", "G1: chat span 1a2b3c4d5e6f7081 started before the first retrieval span ended")
N1 = ("N1", "N1: 1 chat span(s) in an agent that declared no model call")
S1 = ("S1", "S1: evidence cites 'src:a', which 'snap' does not hold")


class Tags(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, d):
        self.text.append(d)


def parse(path: Path) -> Tags:
    p = Tags()
    p.feed(path.read_text(encoding="utf-8"))
    return p


@pytest.fixture()
def two_nights():
    """Baseline lint 1 (+verify 2) and tonight's lint 3 (+verify 4) with every change class:
    still (a), new pass->fail (b), resolved (c), gone (d), new run (e), new via sources (f),
    passing throughout (g), still failing with a different text (h)."""
    con = connect(":memory:")
    for inv in "abcdefgh":
        add_run(con, inv, agent="agent.one" if inv in "abcd" else "agent.two")
    add_pass(con, 1)
    add_pass(con, 2, "verify", "S1,S2")
    add_pass(con, 3)
    add_pass(con, 4, "verify", "S1,S2")
    base = {"a": [G1], "b": [], "c": [G1], "d": [G1], "f": [G1], "g": [], "h": [G1]}
    now = {"a": [G1], "b": [G1], "c": [], "e": [N1], "f": [G1], "g": [], "h": [G1, N1]}
    for inv, v in base.items():
        add_verdict(con, 1, inv, v)
        add_verdict(con, 2, inv, kind="verify")
    for inv, v in now.items():
        add_verdict(con, 3, inv, v)
        add_verdict(con, 4, inv, [S1] if inv == "f" else [], kind="verify")
    add_nightly(con, 1, 1, 2, exit_status=1)
    add_nightly(con, 2, 3, 4, exit_status=None, baseline=1)
    p = Passes(lint_id=3, verify_id=4, baseline_lint_id=1, baseline_verify_id=2, nightly_id=2)
    return con, p


def test_change_classes_since_the_previous_nightly(two_nights):
    con, p = two_nights
    data.build_state(con, p)
    t = data.totals(con, p)
    d = data.diff_lists(con, 50)
    ids = {k: sorted(r["invocation_id"] for r in rows) for k, rows in d.items()}
    assert ids == {"new": ["b", "e", "f"], "still": ["a", "h"], "resolved": ["c"], "gone": ["d"]}
    assert (t["new_failing"], t["still_failing"], t["resolved"], t["gone"]) == (3, 2, 1, 1)
    assert t["still_failing_changed"] == 1          # h gained N1
    assert t["runs_failing"] == 5                   # a b e f h
    assert (t["lint_failed"], t["verify_failed"], t["runs_linted"]) == (5, 1, 7)


def test_without_a_source_check_tonight_sources_are_left_out_of_the_comparison(two_nights):
    con, p = two_nights
    # Baseline: g failed only the source check; tonight no verify ran, so g is not "resolved".
    add_violation(con, 2, "g", 0, "S1", "S1: x")
    con.execute("UPDATE verify_verdicts SET status = 'failed', passed = FALSE WHERE lint_id = 2 AND invocation_id = 'g'")
    con.execute("UPDATE nightlies SET verify_id = NULL WHERE nightly_id = 2")
    p2 = Passes(lint_id=3, verify_id=None, baseline_lint_id=1, baseline_verify_id=2, nightly_id=2)
    data.build_state(con, p2)
    assert data.totals(con, p2)["resolved"] == 1   # only c (grounding)
    assert not any(r["invocation_id"] == "g" for r in data.diff_lists(con, 50)["resolved"])


def test_first_nightly_counts_every_failing_run_as_new(two_nights):
    con, _ = two_nights
    con.execute("UPDATE nightlies SET exit_status = 2 WHERE nightly_id = 1")  # never finished: no baseline
    p = Passes(lint_id=3, verify_id=4, nightly_id=2)
    data.build_state(con, p)
    t = data.totals(con, p)
    assert (t["new_failing"], t["still_failing"], t["resolved"], t["has_baseline"]) == (5, 0, 0, False)


def test_rule_agent_mode_breakdown_and_worst_agents(two_nights):
    con, p = two_nights
    data.build_state(con, p)
    rows = data.by_rule_agent_mode(con, 100)["rows"]
    got = {(r["code"], r["agent_id"], r["mode"]): (r["violations"], r["runs"], r["new_runs"]) for r in rows}
    assert got == {
        ("G1", "agent.one", "retrieval"): (2, 2, 1),      # a (still), b (new)
        ("G1", "agent.two", "retrieval"): (2, 2, 1),      # f (new via S1), h
        ("N1", "agent.two", "retrieval"): (2, 2, 1),      # e (new), h
        ("S1", "agent.two", "retrieval"): (1, 1, 1),      # f
    }
    worst = data.worst_agents(con, 10)
    assert [(a["agent_id"], a["runs"], a["failing"], a["new"]) for a in worst] == [("agent.two", 4, 3, 2), ("agent.one", 3, 2, 1)]
    top = data.by_rule_agent_mode(con, 2)
    assert len(top["rows"]) == 2 and top["total"] == 4 and top["more"] == 2


def test_trend_by_lint_lists_finished_nightlies_and_the_current_one(two_nights):
    con, p = two_nights
    con.execute("INSERT INTO nightlies (nightly_id, exit_status, lint_id) VALUES (3, 2, 3)")   # crashed: not shown
    data.build_state(con, p)
    tr = data.trend_by_lint(con, p)
    assert [pt["nightly_id"] for pt in tr["points"]] == [1, 2]
    g1 = next(r for r in tr["rules"] if r["code"] == "G1")
    assert g1["cells"] == [5, 4]   # baseline: a c d f h; tonight: a b f h


def test_reports_end_to_end_from_rows(two_nights, tmp_path):
    con, p = two_nights
    r = build_reports(con, tmp_path, p, META)
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["totals"]["new_failing"] == 3
    assert sorted(x["invocation_id"] for x in summary["since_previous_nightly"]["new"]) == ["b", "e", "f"]
    # A run page for every failing run, none for the others; texts for every judged run.
    pages = sorted(x.parent.name for x in (tmp_path / "runs").glob("*/index.html"))
    assert pages == ["a", "b", "e", "f", "h"]
    assert (tmp_path / "runs" / "c" / "grounding.txt").read_text() == "grounding: passed [retrieval] (1 retrieval, 1 chat spans)\n"
    assert (tmp_path / "runs" / "h" / "grounding.txt").read_text() == (
        "grounding: FAILED [retrieval]\n  - " + G1[1] + "\n  - " + N1[1] + "\n")
    assert (tmp_path / "runs" / "f" / "sources.txt").read_text() == "sources: 0 verified, 0 unresolved; FAILED\n  - " + S1[1] + "\n"
    # The fleet page links every listed failing run to its page, and nothing else outside the report.
    hrefs = [a.get("href") for tag, a in parse(tmp_path / "fleet.html").tags if tag == "a"]
    run_links = {h for h in hrefs if h.startswith("runs/")}
    assert run_links == {f"runs/{x}/index.html" for x in pages}
    assert all((tmp_path / h.split("#")[0]).exists() for h in hrefs if not h.startswith("#"))
    assert r.runs.pages_written == 5
    # Every link of every run page resolves (today's texts included), and a rule code's link lands
    # on the code's entry of rules.html.
    rule_ids = {a.get("id") for tag, a in parse(tmp_path / "rules.html").tags if tag == "tr"}
    for page in (tmp_path / "runs").glob("*/index.html"):
        for tag, a in parse(page).tags:
            if tag == "a" and not a["href"].startswith("#"):
                target, _, anchor = a["href"].partition("#")
                assert (page.parent / target).resolve().exists(), (page, a["href"])
                if target.endswith("rules.html") and anchor:
                    assert anchor in rule_ids, (page, a["href"])


def test_unlintable_run_page_links_only_existing_texts(tmp_path):
    con = connect(":memory:")
    add_run(con, "u")
    add_pass(con, 1)
    add_verdict(con, 1, "u", status="unlintable", summary=None)
    add_nightly(con, 1, 1, None, exit_status=None)
    build_reports(con, tmp_path, Passes(lint_id=1, nightly_id=1), META)
    page = tmp_path / "runs" / "u" / "index.html"
    assert not (tmp_path / "runs" / "u" / "grounding.txt").exists()
    assert "grounding.txt" not in [a["href"] for tag, a in parse(page).tags if tag == "a"]
    assert "could not lint this run: boom" in "".join(parse(page).text)


def test_run_page_highlights_the_span_named_by_a_violation(two_nights, tmp_path):
    con, p = two_nights
    build_reports(con, tmp_path, p, META)
    doc = parse(tmp_path / "runs" / "a" / "index.html")
    named = [a for tag, a in doc.tags if tag == "text" and "named" in a.get("class", "")]
    assert len(named) == 1
    html = (tmp_path / "runs" / "a" / "index.html").read_text()
    label = re.search(r'<text class="lbl mono named"[^>]*>([^<]*)</text>', html).group(1)
    assert "chat" in label and "1a2b3c4d5e6f7081" in label
    assert G1[1] in "".join(doc.text)


def test_failing_runs_are_paged_and_the_fleet_page_stays_bounded(tmp_path):
    con = connect(":memory:")
    add_pass(con, 1)
    n = 1203
    con.execute("INSERT INTO runs (invocation_id, agent_id, grounding_mode, completed_at) "
                "SELECT 'run-' || lpad(i::VARCHAR, 5, '0'), 'agent.' || (i % 7), 'none', TIMESTAMP '2026-11-01' + to_seconds(i * 7200) "
                "FROM range(?) t(i)", [n])
    con.execute("INSERT INTO lint_verdicts (lint_id, invocation_id, status, passed, mode, retrieval_count, chat_count, summary) "
                "SELECT 1, invocation_id, 'failed', FALSE, 'none', 0, 1, 'grounding: FAILED [none]\n  - ' || ? FROM runs", [N1[1]])
    con.execute("INSERT INTO lint_violations (lint_id, invocation_id, seq, code, message) SELECT 1, invocation_id, 0, 'N1', ? FROM runs", [N1[1]])
    add_nightly(con, 1, 1, None, exit_status=None)
    p = Passes(lint_id=1, nightly_id=1)
    data.build_state(con, p)
    d = fleet.collect(con, p, META)
    fleet.write(tmp_path, d, con=con, page_size=500)
    assert sorted(x.name for x in tmp_path.glob("failing/*.html")) == ["index.html", "since-1-2.html", "since-1-3.html", "since-1.html"]
    listed = []
    for name, size in (("since-1.html", 500), ("since-1-2.html", 500), ("since-1-3.html", 203)):
        runs = [a["href"].split("/")[2] for tag, a in parse(tmp_path / "failing" / name).tags if tag == "a" and a.get("href", "").startswith("../runs/")]
        assert len(runs) == size, name
        listed += runs
    assert listed == [f"run-{i:05d}" for i in reversed(range(n))]        # every failing run exactly once, newest first
    index = [a["href"] for tag, a in parse(tmp_path / "failing" / "index.html").tags if tag == "a" and a.get("href", "").startswith("since-")]
    assert index == ["since-1.html", "since-1-2.html", "since-1-3.html"]
    fleet_links = [a["href"] for tag, a in parse(tmp_path / "fleet.html").tags if tag == "a" and a.get("href", "").startswith("runs/")]
    # every failing run is new: the list is printed once (failing top-N), not again as "new"
    assert len(fleet_links) == len(set(fleet_links)) == fleet.TOP
    assert 'id="new-are-all-failing"' in (tmp_path / "fleet.html").read_text()
    # One run every 2 hours = 101 days of completions: the day chart shows the latest 90.
    assert len(d["trend_by_day"]) == 90
    assert d["trend_by_day"][-1]["day"] == "2027-02-09" and d["trend_by_day"][0]["day"] == "2026-11-12"


def test_run_pages_are_incremental_and_removed_when_a_run_stops_failing(two_nights, tmp_path):
    con, p = two_nights
    build_reports(con, tmp_path, p, META)
    page_a = tmp_path / "runs" / "a" / "index.html"
    before = 1_000_000_000_000_000_000  # a time no write can give the page, whatever the clock's resolution
    os.utime(page_a, ns=(before, before))
    data.build_state(con, p)
    again = runpage.write_all(con, tmp_path, p, META)
    assert (again.pages_written, again.pages_kept, again.texts_written) == (0, 5, 0)
    assert page_a.stat().st_mtime_ns == before
    # a passes in a later lint: its page goes, its grounding.txt is rewritten.
    add_pass(con, 5)
    for inv in "abcefgh":
        add_verdict(con, 5, inv, [G1] if inv == "b" else [])
    con.execute("UPDATE nightlies SET exit_status = 1 WHERE nightly_id = 2")
    add_nightly(con, 3, 5, 4, exit_status=None, baseline=2)
    p5 = Passes(lint_id=5, verify_id=4, baseline_lint_id=3, baseline_verify_id=4, nightly_id=3)
    data.build_state(con, p5)
    later = runpage.write_all(con, tmp_path, p5, META)
    assert not page_a.exists()
    # b still fails the same way: its page, which says since when it fails, is kept; f now fails
    # only its source check (rewritten); a, e and h pass (pages removed).
    assert (later.pages_removed, later.pages_kept, later.pages_written) == (3, 1, 1)
    since = parse(tmp_path / "runs" / "b" / "index.html")
    assert re.search(r"Failing since\s*nightly #2 \(\d{4}-\d\d-\d\d\)", "".join(since.text))
    assert later.texts_written == 4        # a, e, f, h changed text
    assert (tmp_path / "runs" / "a" / "grounding.txt").read_text().startswith("grounding: passed")


def test_junit_has_a_testcase_per_rule_and_agent(two_nights):
    con, p = two_nights
    data.build_state(con, p)
    root = ET.fromstring(machine.junit(con, p, META))
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    g = suites["grounding"]
    cases = {(c.get("classname"), c.get("name")): c for c in g.iter("testcase")}
    rules = "G0,E1,G1,G2,G3,G4,R1,R2,R3,N1,D1,D2,D3".split(",")
    assert set(cases) == {(f"grounding.{a}", r) for a in ("agent.one", "agent.two") for r in rules}
    failing = {k for k, c in cases.items() if c.find("failure") is not None}
    assert failing == {("grounding.agent.one", "G1"), ("grounding.agent.two", "G1"), ("grounding.agent.two", "N1")}
    f = cases[("grounding.agent.two", "N1")].find("failure")
    # the message ends with the rule file's title (sql/rules/N1.sql: "-- title: ..."), in the
    # singular for one violation in one run
    assert f.get("message") == "2 violations in 2 runs: An agent that declared no model call has no chat span"
    assert "e: " + N1[1] in f.text
    props = {x.get("name"): x.get("value") for x in g.find("properties").iter("property")}
    assert props["rule.N1"] == "An agent that declared no model call has no chat span (rules.html#N1)"
    assert props["rule.G0"] == "The trace and the envelope are well formed enough to be judged (rules.html#G0)"
    assert list(g)[0].tag == "properties"      # before the testcases, as the JUnit schemas want
    assert g.get("tests") == str(len(cases)) and g.get("failures") == "3"
    s = {(c.get("classname"), c.get("name")) for c in suites["sources"].iter("testcase") if c.find("failure") is not None}
    assert s == {("sources.agent.two", "S1")}
    one = [c for c in suites["sources"].iter("testcase") if c.get("name") == "S1" and c.find("failure") is not None][0]
    assert one.find("failure").get("message") == "1 violation in 1 run: Evidence cites a record its pinned source copy does not hold"


PROM_LINE = re.compile(r'^(# (HELP|TYPE) .*|[a-z_]+(\{([a-z_]+="([^"\\\n]|\\.)*",?)*\})? -?[0-9.e+]+)$')


def test_prometheus_label_values_are_one_per_string():
    # an agent id holding ESC and another holding the four characters \x1b were one label: two
    # series with one label set, which makes Prometheus refuse the whole textfile
    from groundwork.core.escape import prom_label

    agents = ["\x1b", "\\x1b", "\n", "\\x0a", "\\n", "\ud800", "\\ud800", '"', '\\"', "\\", "\\\\", "", "a.b"]
    labels = [prom_label(a) for a in agents]
    assert len(set(labels)) == len(agents), labels
    assert all(re.fullmatch(r'([^"\\\n]|\\.)*', x) for x in labels), labels


def test_prometheus_textfile_is_valid_exposition_format(two_nights):
    con, p = two_nights
    data.build_state(con, p)
    text = machine.prometheus(con, data.totals(con, p), dict(META, finished_epoch=1796000000.5, duration_seconds=2.5))
    assert text.endswith("\n")
    lines = text.splitlines()
    assert all(PROM_LINE.match(x) for x in lines), [x for x in lines if not PROM_LINE.match(x)]
    assert 'groundwork_violations{check="grounding",rule="N1",agent="agent.two",mode="retrieval"} 2' in lines
    assert "groundwork_runs_linted 7" in lines
    assert 'groundwork_runs_changed{change="new"} 3' in lines
    assert "groundwork_nightly_last_success_timestamp_seconds 1796000000.5" in lines


def test_violations_jsonl_has_one_object_per_violation(two_nights, tmp_path):
    con, p = two_nights
    data.build_state(con, p)
    machine.jsonl(con, tmp_path / "v.jsonl")
    rows = [json.loads(x) for x in (tmp_path / "v.jsonl").read_text().splitlines()]
    assert len(rows) == 7   # a G1, b G1, e N1, f G1 + S1, h G1 N1
    f = [r for r in rows if r["invocation_id"] == "f"]
    assert {(r["check"], r["code"], r["change"]) for r in f} == {("grounding", "G1", "new"), ("sources", "S1", "new")}


def test_rate_chart_scales_the_rate_axis_to_the_largest_rate_and_counts_on_their_own():
    from groundwork.reports.charts import rate_chart

    def chart(failing, total):
        return rate_chart([{"label": "a", "total": total, "failing": failing}, {"label": "b", "total": total, "failing": 0},
                           {"label": "c", "total": 0, "failing": 0}], [("failing", "fail", "failing")], width=400, height=200)

    for failing, total, top in ((1, 1000, "0.1%"), (2, 4, "50%"), (3, 200, "2%")):   # 0.1 %, 50 %, 1.5 %
        c = chart(failing, total)
        assert c["rate_top"] == top
        rate_h = c["rate_base"] - c["rate_top_y"]
        a, b = c["dots"]                                   # no dot for the slot without runs
        # 0.1 % on a 0-0.1 % axis and 50 % on a 0-50 % axis reach the top; 1.5 % is 3/4 of 0-2 %
        assert c["rate_base"] - a["y"] == pytest.approx(rate_h * (failing / total) / float(top[:-1]) * 100, abs=0.01)
        assert b["y"] == pytest.approx(c["rate_base"])     # 0 %: on the axis
        assert a["title"] == f"a: failing {top if failing / total * 100 == float(top[:-1]) else '1.5%'} ({failing} of {total} runs)"
        (bar,) = c["bars"]                                 # counts: their own axis, 1-2-5 steps
        assert bar["y"] + bar["h"] == pytest.approx(c["count_base"])
        assert c["count_top"] == {1: 1, 2: 2, 3: 5}[failing]
        assert bar["h"] == pytest.approx((c["count_base"] - c["count_top_y"]) * failing / c["count_top"])
        assert [t["text"] for t in c["rate_ticks"]][-1] == top


def test_timeline_places_spans_in_the_tree_and_survives_cycles():
    import datetime as dt

    t = dt.datetime(2026, 1, 1)

    def sp(ord_, name, sid, parent, start):
        return {"ord": ord_, "line_no": ord_ + 1, "name": name, "span_id": sid, "parent_id": parent,
                "start_time": t + dt.timedelta(microseconds=start), "end_time": t + dt.timedelta(microseconds=start + 5),
                "dd_agent_id": None, "dd_source_id": None, "dd_model_id": None}

    spans = [sp(0, "policy_gate", "p", "root", 1), sp(1, "invoke_agent", "root", None, 0), sp(2, "delegate", "d", "root", 3),
             sp(3, "chat", "c", "d", 4), sp(4, "retrieval", "orphan", "nowhere", 2),
             sp(5, "chat", "x", "y", 6), sp(6, "chat", "y", "x", 7)]          # a cycle outside the tree
    placed = runpage.place_in_tree(spans)
    assert [(s["span_id"], s["in_tree"], s["depth"]) for s in placed] == [
        ("root", True, 0), ("p", True, 1), ("d", True, 1), ("c", True, 2),
        ("orphan", False, None), ("x", False, None), ("y", False, None)]
    tl = runpage.timeline(placed, ["G0: span 'retrieval' (orphan) does not descend from invoke_agent"])
    named = [r["label"] for r in tl["rows"] if r["named"]]
    assert len(named) == 1 and "orphan" in named[0] and "outside the tree" in named[0]


def test_unusual_modes_with_equal_counts_keep_one_column_order_whatever_order_sql_returns(monkeypatch):
    """The rule x mode matrix of fleet.html / summary.json orders unusual modes by count, then by
    name: two nights over the same warehouse give the same page (SQL returns tied groups in any order)."""
    rows = [{"code": "G1", "mode": "telepathy", "violations": 2}, {"code": "G1", "mode": "(none)", "violations": 2},
            {"code": "G1", "mode": "retrieval", "violations": 5}, {"code": "G2", "mode": "zz", "violations": 1}]
    seen = []
    for order in (rows, rows[::-1]):
        monkeypatch.setattr(data, "rows", lambda con, name, **params: list(order))
        seen.append(data.by_rule_mode(None))
    assert seen[0] == seen[1]
    assert seen[0]["modes"] == ["retrieval", "(none)", "telepathy", "zz"]


def test_sources_drift_says_why_and_an_unlintable_runs_today_cell_says_why(tmp_path):
    """Recorded vs today: a withheld run's sources.txt (the workbench checked the evidence the agent
    returned; the stored envelope has none) is classed withheld, not a verdict change, and is not
    listed among the examples; a real verdict change is. An unlintable run's Today cell names the
    reason."""
    con = connect(":memory:")
    add_run(con, "w", withheld=True, recorded_grounding="grounding: FAILED [retrieval]\n  - G2: x\n",
            recorded_sources="sources: 5 verified, 0 unresolved\n")
    add_run(con, "v", recorded_grounding="grounding: passed [retrieval] (1 retrieval, 1 chat spans)\n",
            recorded_sources="sources: 1 verified, 0 unresolved\n")
    add_run(con, "u", recorded_grounding="grounding: passed [retrieval] (1 retrieval, 1 chat spans)\n",
            recorded_sources="sources: 0 verified, 0 unresolved\n")
    add_pass(con, 1)
    add_pass(con, 2, "verify", "S1,S2")
    add_verdict(con, 1, "w")
    add_verdict(con, 1, "v")
    add_verdict(con, 1, "u", status="unlintable")      # reason "boom"
    add_verdict(con, 2, "w", kind="verify")            # sources: 0 verified, 0 unresolved
    add_verdict(con, 2, "v", [S1], kind="verify")
    add_verdict(con, 2, "u", kind="verify")
    add_nightly(con, 1, 1, 2, exit_status=None)
    p = Passes(lint_id=1, verify_id=2, nightly_id=1)
    data.build_state(con, p)
    drift = data.drift(con, p, 20)
    counts = {c: n for c, n, _ in drift["sources"]["classes"]}
    assert (counts["withheld"], counts["verdict"], counts["same"], counts["text"]) == (1, 1, 1, 0)
    assert [(e["invocation_id"], e["class"]) for e in drift["sources"]["examples"]] == [("v", "verdict")]
    build_reports(con, tmp_path, p, META, state_ready=True)
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["drift"]["sources"]["counts"]["withheld"] == 1
    page = (tmp_path / "fleet.html").read_text()
    table = page[page.index('id="drift-grounding"'):page.index('<h3>sources.txt')]
    assert "unlintable today: boom" in table


def test_run_pages_fleet_and_summary_name_each_rules_title(two_nights, tmp_path):
    con, p = two_nights
    build_reports(con, tmp_path, p, META)
    title = "No chat span starts before the first retrieval span ends"     # sql/rules/G1.sql's title
    run = (tmp_path / "runs" / "h" / "index.html").read_text()
    assert f'<a class="code" href="../../rules.html#G1" title="{title}">G1</a>' in run
    assert f'<td class="rule-title">{title}</td>' in run
    fleet_html = (tmp_path / "fleet.html").read_text()
    assert f'<td class="rule-title">{title}</td>' in fleet_html
    rules_html = (tmp_path / "rules.html").read_text()
    assert f'<tr id="G1"><td class="mono code">G1</td><td class="title">{title}</td>' in rules_html
    assert "docs/rules.md#g1" in rules_html and "docs/rules.md#gw2" in rules_html
    summary = (tmp_path / "summary.md").read_text()
    assert f"- G1 ({title}): 4 violations in 4 runs, 2 new\n" in summary       # a b f h; b, f new
    assert "- N1 (An agent that declared no model call has no chat span): 2 violations in 2 runs, 1 new\n" in summary   # e h; e new
    rows = [json.loads(x) for x in (tmp_path / "violations.jsonl").read_text().splitlines()]
    assert {r["title"] for r in rows if r["code"] == "G1"} == {title}
    js = json.loads((tmp_path / "summary.json").read_text())
    assert js["rules"]["GW1"]["docs"] == "docs/rules.md#gw1" and js["rules"]["G1"]["title"] == title
    assert [r["title"] for r in js["by_rule"] if r["code"] == "G1"] == [title]


def test_run_page_says_none_for_missing_values_not_python_none(tmp_path):
    """Outside the compatible texts a missing span id or hash reads "(none)", never a bare None."""
    con = connect(":memory:")
    add_run(con, "r", spans=[
        {"name": "invoke_agent", "span_id": "00f067aa0ba902b7", "parent_id": None, "start": 0, "end": 1000},
        {"name": "retrieval", "span_id": None, "parent_id": "00f067aa0ba902b7", "start": 100, "end": 110, "dd_source_id": "src:a"},
        {"name": "chat", "span_id": "1a2b3c4d5e6f7081", "parent_id": "00f067aa0ba902b7", "start": 50, "end": 900}])
    add_pass(con, 1)
    add_verdict(con, 1, "r", [G1])
    add_nightly(con, 1, 1, None, exit_status=None)
    p = Passes(lint_id=1, nightly_id=1)
    build_reports(con, tmp_path, p, META)
    page = parse(tmp_path / "runs" / "r" / "index.html")
    text = "".join(page.text)
    assert "None" not in text
    assert "(none)" in text       # the retrieval's hash, and its span id on the timeline


def test_a_nightly_that_reuses_its_baselines_passes(two_nights, tmp_path):
    """A nightly whose row names the same lint and verify passes as its baseline (nothing was
    judged again): nothing is new or resolved, every failing run is still failing since the
    nightly its streak began, the run pages and list pages are kept, and its trend point has the
    baseline's counts."""
    con, p = two_nights
    build_reports(con, tmp_path, p, dict(META, nightly_id=2))
    pages = {f: f.stat().st_mtime_ns for f in [*tmp_path.glob("runs/*/index.html"), *tmp_path.glob("failing/*.html")]}
    con.execute("UPDATE nightlies SET exit_status = 1 WHERE nightly_id = 2")
    add_nightly(con, 3, 3, 4, exit_status=None, baseline=2)
    data.record_severities(con, 3, data.finding_severities())
    con.execute("INSERT INTO nightly_severities SELECT 2, code, severity FROM nightly_severities WHERE nightly_id = 3")
    p3 = data.nightly_passes(con, 3)
    assert (p3.lint_id, p3.baseline_lint_id, p3.verify_id, p3.baseline_verify_id) == (3, 3, 4, 4)
    r = build_reports(con, tmp_path, p3, dict(META, nightly_id=3, baseline_nightly_id=2))
    t = r.totals
    assert (t["new_failing"], t["resolved"], t["gone"], t["still_failing"], t["runs_failing"]) == (0, 0, 0, 5, 5)
    since = dict(con.execute("SELECT invocation_id, since_nightly_id FROM nightly_failing WHERE nightly_id = 3").fetchall())
    # a, f, h failed at nightly 1 already (the baseline's rows, recomputed from the history); b, e since 2.
    assert since == {"a": 1, "b": 2, "e": 2, "f": 1, "h": 1}
    assert (r.runs.pages_written, r.runs.texts_written) == (0, 0)
    assert {f: f.stat().st_mtime_ns for f in pages} == pages
    trend = data.trend_by_lint(con, p3)
    cells = {row["code"]: row["cells"] for row in trend["rules"]}
    assert cells["G1"][-2:] == [4, 4] and cells["N1"][-2:] == [2, 2]
    agents = data.trend_agents_by_lint(con, [2, 3], ["agent.one", "agent.two"])
    assert [[(x["runs"], x["failing"]) for x in a["points"]] for a in agents] == [[(3, 2), (3, 2)], [(4, 3), (4, 3)]]


def test_a_run_page_lists_a_bounded_part_of_a_huge_run_and_says_how_much_more_there_is(tmp_path):
    """One envelope may hold 100,000 grounded_on entries, each a violation: its page lists the first
    PAGE_ROWS rows of each table and PAGE_TEXT_LINES lines of each text, and says what it left out
    (the whole is in the texts and violations.jsonl), instead of a page of 70 MB."""
    con = connect(":memory:")
    refs = [(f"src:r{i}", f"{i:064x}") for i in range(1203)]
    add_run(con, "big", refs=refs, recorded_grounding="".join(f"line {i}\n" for i in range(2000)))
    add_pass(con, 1)
    messages = [f"G2: payload rests on 'src:r{i}' ({i:012x}…) which was not retrieved in this invocation" for i in range(2500)]
    add_verdict(con, 1, "big", [("G2", messages[0])], summary="grounding: FAILED [retrieval]" + "".join(f"\n  - {m}" for m in messages))
    con.execute("DELETE FROM lint_violations")
    con.execute("INSERT INTO lint_violations (lint_id, invocation_id, seq, code, message) "
                "SELECT 1, 'big', i, 'G2', m FROM (SELECT unnest(range(2500)) AS i, unnest(?::VARCHAR[]) AS m)", [messages])
    add_nightly(con, 1, 1, None, exit_status=None)
    build_reports(con, tmp_path, Passes(lint_id=1, nightly_id=1), META)
    path = tmp_path / "runs" / "big" / "index.html"
    assert path.stat().st_size < 800_000      # each of the 2,500 violations listed: over 1 MB
    html = path.read_text(encoding="utf-8")
    listed = re.findall(r'<td class="mono">(G2: payload rests on [^<]*)</td>', html)
    assert [m.replace("&#39;", "'") for m in listed] == messages[:runpage.PAGE_ROWS]
    text = " ".join("".join(parse(path).text).split())
    assert "1500 more violations not listed here: every one is in today's texts and in the report's violations.jsonl." in text
    assert "203 more entries not listed here." in text
    assert ("../../violations.jsonl" in [a["href"] for tag, a in parse(path).tags if tag == "a"])
    today = re.search(r'<pre id="today-grounding">(.*?)</pre>', html, re.S).group(1)
    assert today.startswith("grounding: FAILED [retrieval]\n  - G2: payload rests on &#39;src:r0&#39;")
    assert today.count("\n") == runpage.PAGE_TEXT_LINES        # the header and 299 violations, each with its newline
    assert today.endswith('<span class="muted">… 2201 more lines not shown</span>')   # 2,501 lines in all
    recorded = re.search(r'<pre id="recorded-grounding">(.*?)</pre>', html, re.S).group(1)
    assert recorded.startswith("line 0\nline 1\n") and "line 299\n<span" in recorded
    assert recorded.endswith("… 1700 more lines not shown</span>")
    # the report's own grounding.txt is whole
    assert (tmp_path / "runs" / "big" / "grounding.txt").read_text(encoding="utf-8").count("\n") == 2501


def test_a_page_text_is_cut_at_a_line_end_and_a_single_huge_line_is_cut_too():
    assert runpage.clip_text(None) == (None, 0)
    assert runpage.clip_text("a\nb") == ("a\nb", 0)
    long_line = "x" * (runpage.PAGE_TEXT_CHARS + 10)
    assert runpage.clip_text(long_line) == ("x" * runpage.PAGE_TEXT_CHARS, 1)
    assert runpage.clip_text(long_line + "\nmore\n") == ("x" * runpage.PAGE_TEXT_CHARS, 2)
    text = "short\n" + long_line + "\n"
    assert runpage.clip_text(text) == ("short\n", 1)


def test_a_run_completed_in_the_future_does_not_empty_the_trend_by_completion(tmp_path):
    """The by-completion window ends at the latest completion: one run dated 9999-12-31 (or next
    month, a clock's error) made it one slot of that run, every other run outside it. Runs that
    completed after the nightly's ingest ended are left out of it, and the page says how many."""
    import datetime as dt

    con = connect(":memory:")
    for i in range(10):
        add_run(con, f"r{i}", completed=dt.datetime(2026, 11, 20, i, 0, 0))
    add_run(con, "future", completed=dt.datetime(9999, 12, 31, 23, 59, 59))
    add_run(con, "skewed", completed=dt.datetime(2026, 12, 20))
    add_pass(con, 1)
    for inv in [f"r{i}" for i in range(10)] + ["future", "skewed"]:
        add_verdict(con, 1, inv, [G1] if inv in ("r3", "future") else [])
    add_nightly(con, 1, 1, None, exit_status=None)
    con.execute("INSERT INTO ingests (ingest_id, started_at, finished_at) VALUES (1, '2026-11-21 09:00:00', '2026-11-21 09:05:00')")
    con.execute("UPDATE nightlies SET ingest_id = 1")
    p = Passes(lint_id=1, nightly_id=1)
    data.build_state(con, p)
    trend = data.trend_by_completion(con, p, ["fake.retrieval"])
    assert trend["slot"] == "10 minutes" and trend["after"] == 2
    assert sum(pt["runs"] for pt in trend["points"]) == 10 and sum(pt["failing"] for pt in trend["points"]) == 1
    assert trend["points"][0]["at"] == "2026-11-20T00:00:00Z" and trend["points"][-1]["at"] == "2026-11-20T09:00:00Z"
    assert [sum(r["points"]) for r in trend["rules"]] == [1]
    assert sum(pt["runs"] for pt in trend["agents"][0]["points"]) == 10
    build_reports(con, tmp_path, p, META)
    text = " ".join("".join(parse(tmp_path / "fleet.html").text).split())
    assert ("2 runs completed after this nightly's ingest ended, so in the future of its clock: "
            "left out of the charts by completion time.") in text
    # without a finished ingest to go by (a report outside a nightly), every run counts, as before
    con.execute("UPDATE nightlies SET ingest_id = NULL")
    assert data.trend_by_completion(con, p, [])["after"] == 0
