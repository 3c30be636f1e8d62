"""groundwork.commands.coercion gives every option and argument of every command the value
typer's own pydantic adapter gives it, or leaves the value to that adapter.

The reference is typer's coercion itself (``typer._coercion.build_runtime_param``), called for
each parameter of the real app with values a command line gives: plain ones (which coercion
must take itself, else pydantic is imported again) and odd or invalid ones (which must reach
typer's adapter: its error message is the one a user sees)."""

from __future__ import annotations

import enum

import pytest
from hypothesis import given, strategies as st

pytest.importorskip("typer._coercion")

import typer.main  # noqa: E402
from typer import _coercion  # noqa: E402
from typer._click.exceptions import BadParameter  # noqa: E402

from groundwork.cli import build_app  # noqa: E402
from groundwork.commands import coercion  # noqa: E402


def _params():
    out = []

    def walk(command, path):
        for param in command.params:
            out.append((f"{' '.join(path)} {param.name}".strip(), param))
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, path + [name])

    walk(typer.main.get_command(build_app()), [])
    return out


PARAMS = _params()
ODD = ["", " 3", "3 ", "+3", "-3", "-1", "1.5", "1e3", "1_000", "0x10", "abc", "99999999999999999999999",
       "٣", "nan", "inf", ".5", "5.", "TEXT", "Json", "jsonl", "markdown", "table", "csv"]


def _reference(param, value):
    """What typer's pydantic adapter makes of ``value``: ("ok", value) or ("error", message)."""
    try:
        return "ok", _coercion.build_runtime_param(param.type_descriptor)._coerce_value(value, param=param, ctx=None)
    except BadParameter as exc:
        return "error", exc.message


def _check(param, value):
    plain = coercion.plain_value(param.type_descriptor, value)
    if plain is coercion._OTHER:
        return False
    kind, expected = _reference(param, value)
    assert kind == "ok", (param.name, value, expected)
    assert plain == expected and type(plain) is type(expected), (param.name, value, plain, expected)
    return True


def test_every_parameter_type_of_the_app_is_one_coercion_knows_or_typers():
    kinds = {repr(p.type_descriptor.annotation) for _, p in PARAMS}
    assert {"<class 'str'>", "<class 'int'>", "<class 'float'>", "list[str]"} <= kinds


@pytest.mark.parametrize("where,param", PARAMS, ids=[w for w, _ in PARAMS])
def test_a_value_is_coerced_as_typers_adapter_would_or_left_to_it(where, param):
    annotation = param.type_descriptor.annotation
    plain_values = {str: ["x", "warehouse.duckdb", "a b", "-"], int: ["0", "7", "007", "65536"],
                    float: ["0", "0.05", "12.5"], list[str]: [["a"], ("a", "b"), []]}.get(annotation, [])
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        plain_values = [m.value for m in annotation] + list(annotation)
    for value in plain_values:
        if annotation in (int, float) and not coercion._in_range(annotation(value), param.type_descriptor.parameter_info):
            continue
        assert _check(param, value), (where, value)   # taken without pydantic
    for value in ODD + ([[1], ("a", 2)] if annotation == list[str] else []):
        _check(param, value)                           # taken as typer would, or left to typer


@given(st.text(max_size=12))
def test_any_text_for_an_int_float_or_enum_option_is_coerced_as_typer_would_or_left_to_it(text):
    for _, param in PARAMS:
        if param.type_descriptor.annotation is not str:
            _check(param, text)


def test_an_invalid_value_is_refused_with_typers_message(monkeypatch, capsys):
    from groundwork import cli

    monkeypatch.setattr("sys.argv", ["groundwork", "nightly", "runs", "--workers", "-1"])
    with pytest.raises(SystemExit) as exit_:
        cli.main()
    assert exit_.value.code == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "Invalid value for '--workers': Input should be greater than or equal to 0" in err
