"""The checks' exact texts: every rule's message, grounding.txt and sources.txt.

The templates are the checks' own (groundwork/checks/templates): ``messages/<stem>.txt.j2`` for
the rule file ``sql/rules/<stem>.sql`` (``Rule.template``), whose ``r`` is one row of the rule;
``grounding.txt.j2`` (``v``: one lint verdict) and ``sources.txt.j2`` (``r``: one source-check
verdict). The environment is groundwork.core.templating's, so compiled templates are kept
between processes.

Rendering is in bulk: a template is wrapped in a loop over the rows (``_bulk_source``) and
rendered once for many rows; per-row rendering costs ~3x more, which matters at 100,000 runs.
A wrapped template is rendered by its plain Python translation when the template cache holds
one (groundwork.core.plaintemplates: made by the first process that renders it), so a process
that renders a few messages (the drop-in lint and verify) does not import jinja2.
"""

from __future__ import annotations

import collections
import re
from functools import lru_cache
from pathlib import Path

from groundwork.core import plaintemplates, pyrepr
from groundwork.core.cachedir import cache_dir
from groundwork.core.paths import CHECK_TEMPLATES_DIR

TEMPLATES_DIR = CHECK_TEMPLATES_DIR
GROUNDING = "grounding.txt.j2"
SOURCES = "sources.txt.j2"

# groundwork.core.templating: the environment's settings and filters (read, not imported: it
# imports jinja2). Part of the key of a template's plain translation too.
_TEMPLATING = Path(plaintemplates.__file__).resolve().with_name("templating.py")
# The files every text depends on besides its template: a change to any of them may change a
# text (the lint's rule-set hash covers them, so no verdict is reused across it).
TEXT_SOURCES = (
    TEMPLATES_DIR / GROUNDING,
    Path(__file__).resolve(),
    _TEMPLATING,
    Path(plaintemplates.__file__).resolve(),
    Path(pyrepr.__file__).resolve(),
    Path(pyrepr.__file__).resolve().with_name("unicode14_nonprintable.txt"),
)

_SEP = "\x00"


@lru_cache(maxsize=1)
def _environment():
    from groundwork.core.templating import build_environment, template_cache

    return build_environment(TEMPLATES_DIR, template_cache())


def _bulk_source(source: str, var: str) -> str:
    """A template's source wrapped in a loop over ``rows``: each row's text without the
    template's final newline, followed by NUL."""
    if source.endswith("\n"):
        source = source[:-1]
    return "{% for " + var + " in rows %}" + source + _SEP + "{% endfor %}"


@lru_cache(maxsize=1)
def _bulk_environment():
    import jinja2

    class BulkLoader(jinja2.BaseLoader):
        """Serves ``<var>:<name>``: template ``name`` wrapped in a loop over ``rows``
        (``_bulk_source``), compiled and cached like any other template."""

        def __init__(self, inner: jinja2.BaseLoader):
            self.inner = inner

        def get_source(self, environment, template):
            var, _, name = template.partition(":")
            source, filename, uptodate = self.inner.get_source(environment, name)
            return _bulk_source(source, var), filename, uptodate

    env = _environment()
    return env.overlay(loader=BulkLoader(env.loader))


class _Jinja:
    """A wrapped template rendered by Jinja (``render(ctx)``, as a plain translation is called)."""

    def __init__(self, template):
        self.template = template

    def __call__(self, ctx: dict) -> str:
        return self.template.render(**ctx)


def _source(name: str) -> str:
    """The text of template ``name`` as Jinja's FileSystemLoader reads it (a missing one raises
    Jinja's TemplateNotFound)."""
    try:
        with open(TEMPLATES_DIR / name, encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        import jinja2

        raise jinja2.TemplateNotFound(name) from None


@lru_cache(maxsize=None)
def _bulk_template(name: str, var: str):
    """Template ``name`` wrapped in a loop: one render call (``render(ctx)``) for many rows.

    A message is the template's text for one row without its final newline; rows are separated
    by NUL. The plain translation kept in the template cache when there is one; else Jinja's
    template, whose translation is then kept for the next process.
    """
    folder = cache_dir(plaintemplates.CACHE_ENV, "templates")
    path = None
    if folder is not None:
        source = _bulk_source(_source(name), var)
        path = plaintemplates.cache_path(folder, source, _TEMPLATING.read_text(encoding="utf-8"))
        plain = plaintemplates.load(path)
        if plain is not None:
            return plain
    template = _bulk_environment().get_template(f"{var}:{name}")
    if path is not None:
        code = plaintemplates.translate(_bulk_environment(), source)
        if code is not None:
            plaintemplates.store(path, code)
            plain = plaintemplates.load(path)
            if plain is not None:
                return plain
    return _Jinja(template)



def precompile(names, var: str = "r") -> None:
    """Compile templates ``names`` now (a missing one is reported when a row needs it)."""
    import jinja2

    for name in names:
        try:
            _bulk_template(name, var)
        except jinja2.TemplateNotFound:
            pass


def render_many(name: str, rows: list, var: str = "r") -> list[str]:
    """Render template ``name`` once per row (``var`` names the row inside the template)."""
    if not rows:
        return []
    render = _bulk_template(name, var)
    pieces = render({"rows": rows}).split(_SEP)
    if len(pieces) == len(rows) + 1:
        return pieces[:-1]
    # Some value carried a NUL itself: render those rows one by one.
    return [render({"rows": [row]})[:-1] for row in rows]


@lru_cache(maxsize=None)
def _reads_run_id(name: str) -> bool:
    """Whether template ``name`` looks at ``invocation_id`` (else a row's text depends only on
    its other columns)."""
    return re.search(r"\binvocation_id\b", _source(name)) is not None


def render_rows(name: str, columns: list[str], rows: list[tuple]) -> list[str]:
    """Render template ``name`` for rule rows (tuples whose first column is ``invocation_id``).

    A text is a pure function of the row's values, so each distinct row (ignoring the run, when
    the template does not print it) is rendered once and its text shared.
    """
    if not rows:
        return []
    if any(type(v) is list for v in rows[0]):  # an array column (GW2's lines): tuples, to be hashed
        rows = [tuple(tuple(v) if type(v) is list else v for v in row) for row in rows]
    Row = _row_type(tuple(columns))
    skip = 0 if _reads_run_id(name) else 1
    index: dict[tuple, int] = {}
    setdefault = index.setdefault
    positions = [setdefault(row[skip:], len(index)) for row in rows]
    if skip:
        distinct = [Row(None, *key) for key in index]
    else:
        distinct = [Row._make(key) for key in index]
    texts = render_many(name, distinct)
    if len(distinct) == len(rows):
        return texts
    return [texts[p] for p in positions]


@lru_cache(maxsize=64)
def _row_type(columns: tuple[str, ...]):
    return collections.namedtuple("Row", columns, rename=True)


# One lint verdict as grounding.txt.j2 reads it (``v``).
Grounding = collections.namedtuple("Grounding", "passed mode retrieval_count chat_count violations")


def grounding_texts(verdicts: list[Grounding]) -> list[str]:
    """Exact grounding.txt content (final newline included) for each verdict."""
    return render_many(GROUNDING, verdicts, "v")


def grounding_text(passed: bool, mode: str | None, retrieval_count: int, chat_count: int,
                   violations: list[str]) -> str:
    """Exact grounding.txt content for one report."""
    return grounding_texts([Grounding(passed, mode, retrieval_count, chat_count, violations)])[0]
