"""Option and argument values coerced without pydantic, as typer would coerce them.

typer (0.2x) coerces each value a command line gives through a pydantic TypeAdapter built for
the parameter's annotation: importing pydantic and building the adapters costs every command
~0.1 s of CPU (more than a nightly with nothing new spends on its ingest). ``install`` gives
typer's parameters a coercion that returns a plainly valid value as that adapter would (a
``str``; an ``int`` or ``float`` written in digits, within the parameter's min/max; a list of
``str``; one of an Enum's choices, through typer's own choice matching) and hands any other
value to typer's adapter, so an invalid value is refused with typer's message and exit code.
A typer without these adapters (before 0.2x) is left as it is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from typing import Any

try:
    from typer._coercion import RuntimeParam as _RuntimeParam, build_runtime_param as _build
    from typer._param_types import coerce_cli_choice
    from typer.core import _TyperParameter
except ImportError:  # a typer that coerces without pydantic
    _RuntimeParam = None

_OTHER = object()  # not plainly valid: typer's adapter decides
_INT = re.compile(r"[0-9]{1,18}")
_DECIMAL = re.compile(r"[0-9]{1,15}(?:\.[0-9]{1,15})?")


def _in_range(number, info) -> bool:
    return (info.min is None or number >= info.min) and (info.max is None or number <= info.max)


def plain_value(descriptor, value, ctx=None):
    """``value`` (not None) as typer's pydantic adapter for ``descriptor`` (a TypeDescriptor)
    returns it, or ``_OTHER`` when the value is not plainly valid for it."""
    annotation, info = descriptor.annotation, descriptor.parameter_info
    if descriptor.file_annotation is not None or info.parser is not None:
        return _OTHER
    kind = type(value)
    if annotation is str:
        return value if kind is str else _OTHER
    if annotation is int or annotation is float:
        if kind is str and (_INT if annotation is int else _DECIMAL).fullmatch(value):
            number = annotation(value)
        elif kind is annotation:
            number = value
        else:
            return _OTHER
        return number if _in_range(number, info) else _OTHER
    if annotation == list[str]:
        if isinstance(value, (list, tuple)) and all(type(item) is str for item in value):
            return list(value)
        return _OTHER
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        try:
            return coerce_cli_choice(value, choices=tuple(annotation), case_sensitive=info.case_sensitive, ctx=ctx)
        except ValueError:
            return _OTHER
    return _OTHER


@dataclass(frozen=True)
class PlainRuntimeParam(_RuntimeParam or object):
    """typer's coercion of one parameter, pydantic's adapter built only for a value
    ``plain_value`` does not take."""

    descriptor: Any = None

    def _coerce_value(self, value, param, ctx):
        plain = plain_value(self.descriptor, value, ctx)
        if plain is not _OTHER:
            return plain
        return _build(self.descriptor)._coerce_value(value, param=param, ctx=ctx)


_typers_own = []  # typer's get_runtime_param, once install replaced it


def _get_runtime_param(self):
    if self._runtime_param is None:
        descriptor = self.type_descriptor
        try:
            self._runtime_param = PlainRuntimeParam(parameter_info=descriptor.parameter_info,
                                                    annotation=descriptor.annotation, descriptor=descriptor)
        except TypeError:  # a typer whose RuntimeParam takes other fields (its private API): its own coercion
            return _typers_own[0](self)
    return self._runtime_param


def install() -> None:
    """Coerce the values of every typer command of this process through ``PlainRuntimeParam``."""
    if _RuntimeParam is not None and hasattr(_TyperParameter, "get_runtime_param") and not _typers_own:
        _typers_own.append(_TyperParameter.get_runtime_param)
        _TyperParameter.get_runtime_param = _get_runtime_param
