"""groundwork.core.plaintemplates: the checks' templates rendered as plain Python give exactly
Jinja's text (the drop-in renders its messages so, without importing jinja2)."""

from __future__ import annotations

import collections

import pytest

import groundwork.ingest as ingest
from groundwork.checks import messages, rules
from groundwork.checks.messages import TEMPLATES_DIR, Grounding, _bulk_environment, _bulk_source
from groundwork.checks.verify import RunVerdict as SourceVerdict
from groundwork.checks.verify import source_rules
from groundwork.checks.sources import load_into_warehouse
from groundwork.core import plaintemplates
from groundwork.core.warehouse import connect

from ingest_support import CORPUS

ODD = ["", "it's", 'a "q"', "back\\slash", "{{ not a tag }}", "x\x00y", "\u00e9\u2028\U0001f600", "\ud800", "None"]


def _both(name: str, var: str, rows: list) -> tuple[str, str]:
    """(plain text, Jinja text) of template ``name`` wrapped for ``rows``."""
    env = _bulk_environment()
    source = _bulk_source((TEMPLATES_DIR / name).read_text(encoding="utf-8"), var)
    code = plaintemplates.translate(env, source)
    assert code is not None, f"{name} uses a construct the plain form declines"
    namespace = dict(plaintemplates._RUNTIME)
    exec(compile(code, name, "exec"), namespace)
    return namespace["render"]({"rows": rows}), env.from_string(source).render(rows=rows)


@pytest.fixture(scope="module")
def corpus():
    con = connect(":memory:")
    ingest.ingest_archive(con, CORPUS / "runs")
    yield con
    con.close()


def test_every_check_template_has_a_plain_form():
    names = sorted(str(p.relative_to(TEMPLATES_DIR)) for p in TEMPLATES_DIR.rglob("*.j2"))
    assert len(names) >= 25
    env = _bulk_environment()
    for name in names:
        var = "v" if name == messages.GROUNDING else "r"
        source = _bulk_source((TEMPLATES_DIR / name).read_text(encoding="utf-8"), var)
        assert plaintemplates.translate(env, source) is not None, name


def test_rule_messages_of_the_corpus_are_jinjas(corpus):
    rendered = 0
    for rule in rules.load_rules():
        columns, rows = rules.run(corpus, rule)
        Row = collections.namedtuple("Row", columns, rename=True)
        rows = [Row._make(r) for r in rows]
        plain, jinja = _both(rule.template, "r", rows)
        assert plain == jinja, rule.stem
        rendered += len(rows)
    assert rendered > 50


def test_source_messages_of_the_corpus_are_jinjas(corpus):
    loaded = load_into_warehouse(corpus, CORPUS / "sources.yaml")
    found = 0
    for code, rule in source_rules().items():
        if code == "S0":
            continue
        names, rows = rules.run(corpus, rule, {"config_id": loaded.config_id})
        dicts = [dict(zip(names, row)) for row in rows]
        plain, jinja = _both(rule.template, "r", dicts)
        assert plain == jinja, code
        found += len(dicts)
    assert found > 0


def test_grounding_and_sources_texts_with_odd_values_are_jinjas():
    verdicts = [Grounding(passed, mode, n, m, msgs) for passed in (True, False) for mode in (None, "", "retrieval", *ODD)
                for n, m in ((0, 0), (3, 12)) for msgs in ([], ["G1: x"], ODD)]
    assert _both(messages.GROUNDING, "v", verdicts)[0] == _both(messages.GROUNDING, "v", verdicts)[1]
    sources = [SourceVerdict("", "", verified, unresolved, violations) for verified in (0, 7)
               for unresolved in ([], ["a (b)"], ODD) for violations in ([], ["S1: x"], ODD)]
    plain, jinja = _both(messages.SOURCES, "r", sources)
    assert plain == jinja


def test_what_the_plain_form_declines_is_left_to_jinja(tmp_path, monkeypatch):
    env = _bulk_environment()
    for source in ("{{ r.x|upper }}", "{% for x in r %}{{ loop.index }}{% endfor %}", "{% set y = 1 %}{{ y }}",
                   "{{ r.x + 1 }}", "{% for x in r %}{% else %}none{% endfor %}", "{{ r[0] }}"):
        assert plaintemplates.translate(env, source) is None, source
    # with no plain form at all, messages are rendered by Jinja, the same
    monkeypatch.setattr(plaintemplates, "translate", lambda env, source: None)
    monkeypatch.setenv(plaintemplates.CACHE_ENV, str(tmp_path / "cache"))
    messages._bulk_template.cache_clear()
    try:
        texts = messages.grounding_texts([Grounding(False, "retrieval", 1, 2, ["G1: a", "G3: b"])])
        assert isinstance(messages._bulk_template(messages.GROUNDING, "v"), messages._Jinja)
    finally:
        messages._bulk_template.cache_clear()
    assert texts == ["grounding: FAILED [retrieval]\n  - G1: a\n  - G3: b\n"]


def test_a_plain_form_is_kept_and_used_by_the_next_process(tmp_path, monkeypatch):
    monkeypatch.setenv(plaintemplates.CACHE_ENV, str(tmp_path / "cache"))
    messages._bulk_template.cache_clear()
    try:
        first = messages.grounding_texts([Grounding(True, None, 0, 0, [])])
        kept = sorted((tmp_path / "cache").glob("*.py"))
        assert len(kept) == 1
        messages._bulk_template.cache_clear()
        assert not isinstance(messages._bulk_template(messages.GROUNDING, "v"), messages._Jinja)
        # a damaged file is made again, never an error
        kept[0].write_text("def render(ctx):\n  return (", encoding="utf-8")
        messages._bulk_template.cache_clear()
        again = messages.grounding_texts([Grounding(True, None, 0, 0, [])])
    finally:
        messages._bulk_template.cache_clear()
    assert first == again == ["grounding: passed [unknown mode] (0 retrieval, 0 chat spans)\n"]
