"""The one Jinja environment of the project: text templates (exact workbench texts) and HTML.

Autoescape is on for .html/.xml templates (agents control most strings in a run) and off for
.txt/.md templates, whose output must be byte-identical to the workbench's.
"""

from __future__ import annotations

from functools import lru_cache

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from groundwork.paths import TEMPLATES_DIR
from groundwork.pyrepr import pyrepr, repr_json, repr_str_json


def _h12(value) -> str:
    """First 12 characters of str(value) (the workbench's {h[:12]})."""
    return ("None" if value is None else str(value))[:12]


@lru_cache(maxsize=1)
def environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(str(TEMPLATES_DIR)),
        autoescape=select_autoescape(enabled_extensions=("html", "htm", "xml", "svg"), default_for_string=False),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["repr_json"] = repr_json   # JSON text column -> Python repr
    env.filters["pyrepr"] = pyrepr         # parsed value -> Python repr
    env.filters["repr_str_json"] = repr_str_json  # JSON text column -> repr of its str()
    env.filters["h12"] = _h12
    from reports.filters import register as _register_report_filters  # visible, md, xml_chars, ...

    _register_report_filters(env)
    return env


def render(template: str, **context) -> str:
    """Render a template from reports/templates/ with the given context."""
    return environment().get_template(template).render(**context)
