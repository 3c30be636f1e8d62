"""Canonical bytes through orjson equal Python's json.dumps(sort_keys=True, separators=(",", ":"),
ensure_ascii=False) exactly (docs/rules.md#canonical-json): the content hashes ingest stores are the workbench's.

The fast path is only taken for values orjson parsed (``fast``), so the values here come from
jsontext.parse on JSON text, as in ingest."""

from __future__ import annotations

import json
import struct

from hypothesis import example, given
from hypothesis import strategies as st

from groundwork.core.canonical import canonical_bytes, content_hash
from groundwork.core.jsontext import needs_exact, parse


def reference(value) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def check(text: str) -> None:
    value, fast = parse(text, needs_exact(text))
    try:
        expected = reference(value)
    except UnicodeEncodeError:  # lone surrogates: never fast (orjson refuses them)
        assert not fast
        return
    assert canonical_bytes(value, fast) == expected, text


floats = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.floats(min_value=1e-7, max_value=1e-3),           # where orjson writes 0.0000... and Python 1e-05
    st.floats(min_value=1e14, max_value=1e18),           # where Python switches to 1e+16
    st.integers(0, 2**64 - 1).map(lambda b: struct.unpack("<d", struct.pack("<Q", b))[0]).filter(lambda f: f == f and abs(f) != float("inf")),
)
numbers = st.one_of(st.integers(min_value=-(2**70), max_value=2**70), floats)
strings = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12)
keys = st.sampled_from(["a", "B", "grounded_on", "é", "\U0001f600", "\uffff", "", "0.00001", "1e5"]) | strings
values = st.recursive(
    st.none() | st.booleans() | numbers | strings,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=5),
    max_leaves=25,
)


@given(values, st.booleans())
@example({"b": 1e-05, "a": [0.0001, 1e16, 1e15, -0.0, 5e-324]}, False)
@example({"t": "2026-11-30T05:12:21.000001+00:00", "s": "0.00001 and 1e5 in text"}, True)
@example({"\x7f": "\x00\x1f\u2028\u2029\"\\/"}, True)
@example([1e-05, "c50e-72a1", "12:30e-5", -2.5e-07, [0.00001234, {"x": 1e16}]], False)
@example(1e-05, False)
@example({"id": "01a0f4c2-c50e-72a1-b6ac-d3b5a5f22520", "n": 3}, True)
def test_canonical_bytes_equal_json_dumps(value, ascii_only):
    check(json.dumps(value, ensure_ascii=ascii_only))


def test_deep_nesting_beyond_orjson_limit_falls_back():
    text = "[" * 300 + "1" + "]" * 300
    check(text)
    check('{"a":' * 300 + "1" + "}" * 300)


def test_content_hash_known_value():
    # sha256 of b'{"a":1,"b":[1.5,"\xc3\xa9"]}' computed independently (hashlib over the literal bytes)
    import hashlib
    expected = hashlib.sha256('{"a":1,"b":[1.5,"é"]}'.encode("utf-8")).hexdigest()
    value, fast = parse('{"b": [1.5, "é"], "a": 1}', False)
    assert fast
    assert content_hash("dd-json-document-v1", value, fast) == expected
