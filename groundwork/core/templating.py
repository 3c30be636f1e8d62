"""Jinja environments with the project's settings, over a given template folder.

The checks render their messages over groundwork/checks/templates (groundwork.checks.messages),
the reports and the commands' outputs over reports/templates (groundwork.reports.render); both
build their environment here, so both have the same settings and text filters.

Autoescape is on for .html/.xml templates, .html.j2/.xml.j2 too (agents control most strings in
a run), and off for .txt/.md templates, whose output must be byte-identical to the workbench's.

Compiled templates are kept between processes (``TemplateCache``): compiling the ~25 templates
a lint or a report uses costs a new process ~30-60 ms; loading them from the cache ~2 ms. A
cached template is used only while its source is byte for byte the one it was compiled from.
"""

from __future__ import annotations

import os

import jinja2
from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from jinja2.bccache import Bucket, FileSystemBytecodeCache

from groundwork.core.cachedir import cache_dir
from groundwork.core.plaintemplates import CACHE_ENV, TEXT_FILTERS  # noqa: F401 - CACHE_ENV: named here too


def _settings(env: Environment, name: str | None) -> str:
    """What the code Jinja generates for template ``name`` depends on besides its source."""
    finalize = env.finalize
    autoescape = env.autoescape(name) if callable(env.autoescape) else env.autoescape
    return repr((jinja2.__version__, env.block_start_string, env.block_end_string, env.variable_start_string,
                 env.variable_end_string, env.comment_start_string, env.comment_end_string,
                 env.line_statement_prefix, env.line_comment_prefix, env.trim_blocks, env.lstrip_blocks,
                 env.newline_sequence, env.keep_trailing_newline, env.optimized, env.is_async,
                 sorted(env.extensions), autoescape,
                 None if finalize is None else (finalize.__module__, finalize.__qualname__,
                                                getattr(finalize, "jinja_pass_arg", None))))


class TemplateCache(FileSystemBytecodeCache):
    """Jinja's bytecode cache in a private directory, keyed by template name, file and the
    environment's settings (an overlay with a ``finalize`` compiles the same file differently),
    checked against the source: an edited template is compiled again. A cache that cannot be
    read or written is skipped, never an error."""

    def get_bucket(self, environment, name, filename, source):
        key = self.get_cache_key(f"{name}\0{_settings(environment, name)}", filename)
        bucket = Bucket(environment, key, self.get_source_checksum(source))
        self.load_bytecode(bucket)
        return bucket

    def load_bytecode(self, bucket: Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except Exception:  # truncated or foreign file: compile instead
            bucket.reset()

    def dump_bytecode(self, bucket: Bucket) -> None:
        try:
            super().dump_bytecode(bucket)
        except OSError:
            pass


def template_cache(directory: str | os.PathLike | None = None) -> TemplateCache | None:
    """The compiled-template cache in ``directory`` (default: $GROUNDWORK_TEMPLATE_CACHE, else
    $XDG_CACHE_HOME/groundwork/templates or ~/.cache/groundwork/templates); None when it is
    switched off ("off") or the directory cannot be used."""
    path = cache_dir(CACHE_ENV, "templates", directory)
    return None if path is None else TemplateCache(str(path), "%s.jinja")


def build_environment(templates_dir: str | os.PathLike, cache: TemplateCache | None = None) -> Environment:
    """A Jinja environment over ``templates_dir`` with the project's settings and text filters."""
    env = Environment(
        loader=FileSystemLoader(str(templates_dir)),
        autoescape=select_autoescape(enabled_extensions=("html", "htm", "xml", "svg", "html.j2", "xml.j2"), default_for_string=False),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        bytecode_cache=cache,
    )
    env.filters.update(TEXT_FILTERS)  # repr_json, pyrepr, repr_str_json, repr_member_json, h12 (groundwork.core.plaintemplates)
    return env
