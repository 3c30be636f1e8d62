"""What the reports say a rule code means (groundwork.checks.rules.catalog): a title for every code
of the rule files, each code's section of docs/rules.md exists, and a code split into several
files has a title of its own."""

from __future__ import annotations

import re
from pathlib import Path

from groundwork.checks.rules import SPLIT_CODE_TITLES, catalog
from groundwork.reports.render import plural

ROOT = Path(__file__).resolve().parents[2]


def _headings() -> set[str]:
    text = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    return {re.sub(r"[^\w\- ]", "", m.group(1).strip().lower().replace("`", "")).replace(" ", "-")
            for m in re.finditer(r"(?m)^#{1,6}\s+(.+?)\s*$", text)}


def test_every_code_of_the_rule_files_has_a_title_and_a_docs_section():
    codes = catalog()
    files = {}
    for path in (ROOT / "sql" / "rules").glob("*.sql"):
        header = dict(re.findall(r"(?m)^-- (code|title): (.*)$", path.read_text(encoding="utf-8")))
        files.setdefault(header["code"], []).append(header["title"])
    assert set(codes) == set(files) | {"unlintable", "unverifiable"}
    for code, titles in files.items():
        expected = titles[0] if len(titles) == 1 else SPLIT_CODE_TITLES[code]
        assert codes[code].title == expected
        assert len(codes[code].parts) == (len(titles) if len(titles) > 1 else 0)
    assert {c for c, t in files.items() if len(t) > 1} == set(SPLIT_CODE_TITLES) == {"G0"}
    missing = [c.code for c in codes.values() if c.anchor not in _headings()]
    assert missing == []
    assert codes["G1"].title == "No chat span starts before the first retrieval span ends"
    assert codes["GW2"].kind == "finding" and codes["S1"].kind == "source"
    assert codes["G1"].description == "A workbench grounding rule; applies to runs of the retrieval mode, whatever the outcome."


def test_report_order_is_lint_order_then_the_source_check_then_findings():
    order = list(catalog())
    assert order[:3] == ["G0", "E1", "G1"]
    assert order.index("D3") < order.index("S0") < order.index("S2") < order.index("GW1") < order.index("unlintable")


def test_plural():
    assert [plural(n, "run") for n in (0, 1, 2)] == ["0 runs", "1 run", "2 runs"]
    assert plural(1, "evidence item") == "1 evidence item" and plural(3, "more span") == "3 more spans"
