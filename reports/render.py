"""The reports' Jinja environment, over reports/templates: the nightly's pages and files, and
the commands' text, JUnit and drift outputs.

Built by groundwork.core.templating (the project's settings, text filters and compiled-template
cache), plus the escapers of groundwork.core.escape as filters (visible, md, xml_chars,
prom_label, slug), ``plural`` ("1 run", "2 runs") and the global ``rule(code)``: what a rule code
means (groundwork.checks.rules.catalog; None for a code no rule file has). HTML pages are rendered through ``html_environment``, whose ``finalize``
shows every run-controlled string visibly.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from jinja2 import Environment

from groundwork.checks.rules import CodeInfo, catalog
from groundwork.core.escape import md, prom_label, slug, visible, xml_chars
from groundwork.core.templating import build_environment, template_cache

TEMPLATES_DIR = Path(__file__).resolve().with_name("templates")


@lru_cache(maxsize=1)
def rule_catalog() -> dict[str, CodeInfo]:
    """The codes of the installed rule files (and the two unjudged verdicts), by code."""
    return catalog()


def rule(code) -> CodeInfo | None:
    """What ``code`` means, or None for a code no rule file has (a code of an older warehouse)."""
    return rule_catalog().get(code) if isinstance(code, str) else None


def plural(n, word: str, many: str | None = None) -> str:
    """``n`` and ``word``, in the plural unless n is 1: plural(1, "run") is "1 run"."""
    return f"{n} {word if n == 1 else (many or word + 's')}"


@lru_cache(maxsize=1)
def environment() -> Environment:
    env = build_environment(TEMPLATES_DIR, template_cache())
    env.filters.update(visible=visible, md=md, xml_chars=xml_chars, prom_label=prom_label, slug=slug, plural=plural)
    env.globals.update(rule=rule)
    return env


def render(template: str, **context) -> str:
    """Render a template from reports/templates/ with the given context."""
    return environment().get_template(template).render(**context)


def _finalizer(limit: int | None):
    def finalize(value):
        """Every printed plain string goes through ``visible`` (and is cut at ``limit``); markup
        built by the templates themselves (macro output) is left alone."""
        if isinstance(value, str) and not hasattr(value, "__html__"):
            s = visible(value, keep_newlines=True)
            if limit is not None and len(s) > limit:
                s = s[:limit] + f"… [{len(s) - limit} more characters]"
            return s
        return value

    return finalize


@lru_cache(maxsize=4)
def html_environment(limit: int | None = None) -> Environment:
    """The reports' environment with a ``finalize`` that shows run-controlled strings visibly
    (and cut at ``limit``) without copying the data first: pages are rendered thousands at a
    time."""
    return environment().overlay(finalize=_finalizer(limit))


def render_html(template: str, limit: int | None = None, **context) -> str:
    return html_environment(limit).get_template(template).render(**context)
