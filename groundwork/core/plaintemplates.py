"""Text templates as plain Python functions, kept between processes: a drop-in lint or verify
renders its few messages without importing jinja2 (~0.05 s of a process that lints one run).

The template files stay the one definition of every text. ``translate`` reads a template as
Jinja parses it (with the environment's settings, so whitespace control is Jinja's own) and
writes its tree as Python source; it knows only the few constructs the checks' text templates
use (output, if/elif/else, a plain for loop, attribute lookups as Jinja does them, ==/!=/and/
or/not, ``is none``, ``~``, a conditional expression, constants, and the filters ``length``,
``join`` and the project's text filters) and declines anything else (None): such a template is
rendered by Jinja. ``load`` returns the cached function of a template source, or None when there
is none yet (the caller renders with Jinja and ``store``s the translation for the next process).
The cache key covers the source, the settings, this file and jinja2's installed files.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from functools import lru_cache
from pathlib import Path

from groundwork.core.pyrepr import pyrepr, repr_json, repr_member_json, repr_str_json

CACHE_ENV = "GROUNDWORK_TEMPLATE_CACHE"  # a directory, or "off"; default ~/.cache/groundwork/templates


def _h12(value) -> str:
    """First 12 characters of str(value) (the workbench's {h[:12]})."""
    return ("None" if value is None else str(value))[:12]


# The project's text filters (groundwork.core.templating registers them in every environment).
TEXT_FILTERS = {
    "repr_json": repr_json,        # JSON text column -> Python repr
    "pyrepr": pyrepr,              # parsed value -> Python repr
    "repr_str_json": repr_str_json,  # JSON text column -> repr of its str()
    "repr_member_json": repr_member_json,  # JSON text of an object, a member's name -> repr of the member's str()
    "h12": _h12,
}


class Undefined(Exception):
    """A template read an attribute its value does not have (Jinja's StrictUndefined raises too)."""


def _getattr(obj, name: str):
    """An attribute as Jinja's Environment.getattr looks it up: the attribute, else the item."""
    try:
        return getattr(obj, name)
    except AttributeError:
        pass
    try:
        return obj[name]
    except (TypeError, LookupError, AttributeError):
        raise Undefined(f"{type(obj).__name__} has no attribute {name!r}") from None


def _join(value, d="") -> str:
    return str(d).join(map(str, value))  # Jinja's join filter without autoescape


_RUNTIME = {"_getattr": _getattr, "_f": {**TEXT_FILTERS, "length": len, "join": _join}}
_VERSION = "1"


class _Declined(Exception):
    pass


class _Writer:
    def __init__(self):
        self.lines: list[str] = []
        self.names = 0

    def emit(self, depth: int, line: str) -> None:
        self.lines.append("    " * depth + line)

    def local(self) -> str:
        self.names += 1
        return f"l_{self.names}"

    def body(self, nodes, depth: int, scope: dict) -> None:
        from jinja2 import nodes as n

        before = len(self.lines)
        for node in nodes:
            if isinstance(node, n.Output):
                for child in node.nodes:
                    if isinstance(child, n.TemplateData):
                        self.emit(depth, f"w({child.data!r})")
                    else:
                        self.emit(depth, f"w(str({self.expr(child, scope)}))")
            elif isinstance(node, n.If):
                self.emit(depth, f"if {self.expr(node.test, scope)}:")
                self.body(node.body, depth + 1, scope)
                for branch in node.elif_:
                    self.emit(depth, f"elif {self.expr(branch.test, scope)}:")
                    self.body(branch.body, depth + 1, scope)
                if node.else_:
                    self.emit(depth, "else:")
                    self.body(node.else_, depth + 1, scope)
            elif isinstance(node, n.For):
                if (node.else_ or node.test is not None or node.recursive or not isinstance(node.target, n.Name)
                        or "loop" in {x.name for x in node.find_all(n.Name)}):
                    raise _Declined("for loop")
                var = self.local()
                self.emit(depth, f"for {var} in {self.expr(node.iter, scope)}:")
                self.body(node.body, depth + 1, {**scope, node.target.name: var})
            else:
                raise _Declined(type(node).__name__)
        if len(self.lines) == before:
            self.emit(depth, "pass")

    def expr(self, node, scope: dict) -> str:
        from jinja2 import nodes as n

        if isinstance(node, n.Const):
            if not isinstance(node.value, (str, int, float, bool, type(None))):
                raise _Declined("constant")
            return repr(node.value)
        if isinstance(node, n.Name) and node.ctx == "load":
            return scope[node.name] if node.name in scope else f"ctx[{node.name!r}]"
        if isinstance(node, n.Getattr):
            return f"_getattr({self.expr(node.node, scope)}, {node.attr!r})"
        if isinstance(node, n.Filter) and node.node is not None:
            if node.name not in _RUNTIME["_f"] or node.kwargs or node.dyn_args or node.dyn_kwargs:
                raise _Declined(f"filter {node.name}")
            args = ", ".join([self.expr(node.node, scope), *(self.expr(a, scope) for a in node.args)])
            return f"_f[{node.name!r}]({args})"
        if isinstance(node, n.Test) and node.name == "none" and not node.args and not node.kwargs:
            return f"({self.expr(node.node, scope)} is None)"
        if isinstance(node, n.Not):
            return f"(not {self.expr(node.node, scope)})"
        if isinstance(node, (n.And, n.Or)):
            op = "and" if isinstance(node, n.And) else "or"
            return f"({self.expr(node.left, scope)} {op} {self.expr(node.right, scope)})"
        if isinstance(node, n.Compare) and len(node.ops) == 1 and node.ops[0].op in ("eq", "ne"):
            op = "==" if node.ops[0].op == "eq" else "!="
            return f"({self.expr(node.expr, scope)} {op} {self.expr(node.ops[0].expr, scope)})"
        if isinstance(node, n.Concat):
            return "''.join([" + ", ".join(f"str({self.expr(x, scope)})" for x in node.nodes) + "])"
        if isinstance(node, n.CondExpr) and node.expr2 is not None:
            return (f"({self.expr(node.expr1, scope)} if {self.expr(node.test, scope)} "
                    f"else {self.expr(node.expr2, scope)})")
        raise _Declined(type(node).__name__)


def translate(env, source: str) -> str | None:
    """The Python source of ``render(ctx)`` for a template ``source`` as ``env`` (a Jinja
    environment without autoescape or finalize, whose filters are the ones above) parses it,
    or None when it uses anything else."""
    if env.finalize is not None or env.autoescape is True:
        return None
    writer = _Writer()
    writer.emit(0, "def render(ctx):")
    writer.emit(1, "out = []")
    writer.emit(1, "w = out.append")
    try:
        writer.body(env.parse(source).body, 1, {})
    except _Declined:
        return None
    writer.emit(1, "return ''.join(out)")
    return "\n".join(writer.lines) + "\n"


@lru_cache(maxsize=1)
def _translator() -> str:
    """What a translation depends on besides the template and the environment: this file and
    the installed jinja2 (its parser decides the tree), identified without importing it."""
    return "\0".join((_VERSION, Path(__file__).read_text(encoding="utf-8"), _jinja_files()))


def _jinja_files() -> str:
    spec = importlib.util.find_spec("jinja2")
    if spec is None or not spec.origin:
        return ""
    try:
        st = os.stat(spec.origin)
    except OSError:
        return spec.origin
    return f"{spec.origin}\0{st.st_size}\0{st.st_mtime_ns}"


def cache_path(folder: Path, source: str, settings: str) -> Path:
    key = hashlib.sha256("\0".join((_translator(), settings, source)).encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return folder / f"{key}.py"


def load(path: Path):
    """The render function cached at ``path``, or None (no such file, or unreadable)."""
    try:
        text = path.read_text(encoding="utf-8")
        namespace = dict(_RUNTIME)
        exec(compile(text, str(path), "exec"), namespace)  # noqa: S102 - our own translation, in a private folder
        return namespace["render"]
    except (OSError, SyntaxError, ValueError, KeyError):
        return None


def store(path: Path, code: str) -> None:
    """Keep ``code`` at ``path`` (written whole, then renamed); a folder that cannot be written is skipped."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(code, encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        try:
            tmp.unlink()
        except OSError:
            pass
