"""docs/rules.md is the reference code comments cite: every citation must land on a heading,
every rule file must have its section, and the section must carry the rule's message text."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RULES_MD = ROOT / "docs" / "rules.md"
RULES_DIR = ROOT / "sql" / "rules"
TEXT_SUFFIXES = {".py", ".sql", ".md", ".j2", ".c", ".h", ".json", ".toml", ".txt", ".yaml", ".yml",
                 ".cfg", ".ini", ".sh", ".html", ".css", ".xml", ".prom"}
SKIP_DIRS = {".git", ".venv", "venv", "__pycache__", "node_modules", "build", "dist", ".hypothesis",
             ".pytest_cache", "artifacts"}
# Data, not prose: the corpus and the example archive hold run folders, never citations.
SKIP_PATHS = (ROOT / "tests" / "fixtures", ROOT / "examples")

CITATION = re.compile(r"docs/rules\.md#([A-Za-z0-9_\-]+)")
DOCS_LINK = re.compile(r"\]\((?:\./)?rules\.md#([A-Za-z0-9_\-]+)\)")
OWN_LINK = re.compile(r"\]\(#([A-Za-z0-9_\-]+)\)")


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation other than - and _ dropped,
    spaces as hyphens."""
    text = heading.strip().lower().replace("`", "")
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(text: str) -> list[str]:
    return [slug(m.group(2)) for m in re.finditer(r"(?m)^(#{1,6})\s+(.+?)\s*#*\s*$", text)]


@pytest.fixture(scope="module")
def rules_md() -> str:
    return RULES_MD.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def headings(rules_md) -> set[str]:
    return set(anchors(rules_md))


def _text_files():
    for path in ROOT.rglob("*"):
        if any(part in SKIP_DIRS or part.endswith(".egg-info") for part in path.relative_to(ROOT).parts):
            continue
        if any(path.is_relative_to(skip) for skip in SKIP_PATHS):
            continue
        if path.suffix in TEXT_SUFFIXES and path.is_file():
            yield path


def test_headings_are_unique(rules_md):
    seen = anchors(rules_md)
    assert sorted({a for a in seen if seen.count(a) > 1}) == []


def test_every_citation_resolves(headings):
    """Anchors are compared case-insensitively (docs/rules.md#G2 and #g2 name the same section,
    as on GitHub)."""
    broken = []
    for path in _text_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        found = [m.group(1) for m in CITATION.finditer(text)]
        if path.parent == RULES_MD.parent:
            found += [m.group(1) for m in DOCS_LINK.finditer(text)]
        if path == RULES_MD:
            found += [m.group(1) for m in OWN_LINK.finditer(text)]
        broken += [f"{path.relative_to(ROOT)}: #{a}" for a in found if a.lower() not in headings]
    assert broken == []


def test_citations_are_found():
    # the scan above looks where the citations are (a scan that found nothing would prove nothing)
    assert any(CITATION.search(p.read_text(encoding="utf-8")) for p in RULES_DIR.glob("*.sql"))


@pytest.mark.parametrize("rule_file", sorted(RULES_DIR.glob("*.sql")), ids=lambda p: p.stem)
def test_every_rule_file_has_a_section(rule_file, headings):
    stem = rule_file.stem
    code = stem.split("_")[0]
    assert code.lower() in headings, f"docs/rules.md has no '## {code}' section"
    assert stem.lower() in headings, f"docs/rules.md has no section for {rule_file.name}"


def _template(stem: str) -> Path | None:
    # the package's own templates only: a virtualenv made in the checkout (README's cluster
    # steps make env/) holds an installed copy of each
    found = [p for pattern in (f"{stem}.txt.j2", f"{stem}.j2") for p in MESSAGE_TEMPLATES.rglob(pattern)]
    return found[0] if len(found) == 1 else None


MESSAGE_TEMPLATES = ROOT / "groundwork" / "checks" / "templates"
_JINJA = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", re.S)


@pytest.mark.parametrize("rule_file", sorted(RULES_DIR.glob("*.sql")), ids=lambda p: p.stem)
def test_section_carries_the_message_text(rule_file, rules_md):
    """Every fixed piece of a rule's message template (12 characters or more) is in docs/rules.md,
    so the documented message is the one groundwork prints."""
    template = _template(rule_file.stem)
    flat = " ".join(rules_md.split())
    if template is None and rule_file.stem == "S0":  # S0 builds its item text in SQL
        assert "`<sid> (<ref>)`" in flat
        return
    assert template is not None, f"no single message template {rule_file.stem}.txt.j2 in the repo"
    pieces = [" ".join(piece.split()) for piece in _JINJA.split(template.read_text(encoding="utf-8"))]
    missing = [piece for piece in pieces if len(piece) >= 12 and piece not in flat]
    assert missing == []
