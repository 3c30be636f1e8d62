"""Parsed values nested hundreds of levels deep (any depth the JSON parser accepts, ~1,000): the
helpers that print or store them (pyrepr, dumps, dumps_doc) give Python's exact text without
exhausting the stack; canonical hashing fails where the workbench's json.dumps does."""

from __future__ import annotations

import json
import sys

import pytest

from groundwork.core.canonical import canonical_bytes
from groundwork.core.jsontext import dumps, dumps_doc
from groundwork.core.pyrepr import pyrepr, pystr


def nested(depth: int):
    value: object = ["leaf", 1.5, None, {"k": "\u00e9"}]
    for i in range(depth):
        value = [value, i] if i % 2 else {"n": value, "t": True}
    return value


def python_text(fn, value):
    """What Python itself prints for ``value`` (its C repr/json.dumps recurse: room made for them)."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(10_000)
    try:
        return fn(value)
    finally:
        sys.setrecursionlimit(old)


@pytest.mark.parametrize("depth", [1, 330, 1000])
def test_repr_and_stored_json_of_a_deep_value_are_pythons(depth):
    value = nested(depth)
    assert pyrepr(value) == python_text(repr, value)
    assert pystr(value) == python_text(str, value)
    assert dumps(value) == python_text(json.dumps, value)
    assert dumps_doc(value) == python_text(lambda v: json.dumps(v, separators=(",", ":")), value)


def test_a_lone_surrogate_deep_down_is_kept_in_raw_json_and_replaced_in_the_document():
    value = nested(1000)
    inner = value
    while isinstance(inner, (dict, list)):
        inner = inner["n"] if isinstance(inner, dict) else inner[0]
        if isinstance(inner, list) and inner and inner[0] == "leaf":
            inner[0] = "a\ud800b"
            break
    assert "a\\ud800b" in dumps(value)
    assert "a\\ufffdb" in dumps_doc(value) and "\\ud800" not in dumps_doc(value)


def test_hashing_a_value_nested_past_json_dumps_depth_fails_as_json_dumps_does():
    """canonical_bytes is json.dumps's bytes, so its RecursionError too (the workbench's E1 has
    no answer to it): each caller says what that means (docs/rules.md#canonical-json)."""
    with pytest.raises(RecursionError):
        canonical_bytes(nested(1000))
    assert canonical_bytes(nested(300)) == json.dumps(nested(300), sort_keys=True, separators=(",", ":"),
                                                       ensure_ascii=False).encode()


@pytest.mark.parametrize("depth", [1000, 1010, 1024])
def test_a_text_nested_past_json_loads_depth_fails_to_parse_as_json_loads_does(depth):
    # orjson nests to 1024 levels, json.loads (the workbench's parser) to about 1000 less its
    # caller's stack: the fast path took texts the workbench cannot read (docs/rules.md#unlintable-runs).
    from groundwork.core.jsontext import loads, parse

    for text in ("[" * depth + "]" * depth, '{"a": ' * depth + "1" + "}" * depth):
        with pytest.raises(RecursionError):
            json.loads(text)
        with pytest.raises(RecursionError):
            parse(text, False)
        with pytest.raises(RecursionError):
            loads(text)
