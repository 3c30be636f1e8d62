"""The C fast path for canonical bytes (groundwork/core/_canonical_native.c) against json.dumps itself.

The oracle is Python's json.dumps(value, sort_keys=True, separators=(",", ":"),
ensure_ascii=False).encode("utf-8") (docs/rules.md#canonical-json): the extension returns exactly those bytes or
declines (None), and canonical_bytes then gives json.dumps' result or its exception, so every
outcome -- bytes, CanonicalisationError text, RecursionError, ValueError -- is the same with the
extension and without it (GROUNDWORK_NATIVE=off).

Skipped when the extension is not built, unless GROUNDWORK_REQUIRE_NATIVE=1 (native_support).
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import subprocess
import sys

import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from groundwork.core import canonical
from groundwork.core.canonical import CanonicalisationError, canonical_bytes
from groundwork.ingest import ingest_archive
from groundwork.ingest import parse as ingest_parse

from ingest_support import CORPUS_RUNS, EXAMPLE_RUNS, fresh_con
from native_support import built

native = built("groundwork.core._canonical_native")


def reference(value) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def outcome(fn, value):
    """("ok", bytes) or (exception type, str(exception))."""
    try:
        return "ok", fn(value)
    except Exception as exc:  # noqa: BLE001 - the exception itself is compared
        return type(exc), str(exc)


def python_path(value, fast=False):
    """canonical_bytes with the extension switched off (orjson / json.dumps)."""
    saved, canonical._native = canonical._native, None
    try:
        return canonical_bytes(value, fast)
    finally:
        canonical._native = saved


def check(value):
    """The extension's bytes are json.dumps' bytes; when it declines, canonical_bytes still ends
    exactly as the Python path does (same bytes or same exception and message)."""
    got = native.canonical(value)
    expected = outcome(reference, value)
    if got is not None:
        assert expected == ("ok", got)
    else:  # declined: only for what json.dumps cannot encode to UTF-8 (lone surrogates) here
        assert expected[0] is UnicodeEncodeError
    assert outcome(canonical_bytes, value) == outcome(python_path, value)
    assert outcome(lambda v: canonical_bytes(v, True), value) == outcome(python_path, value)


def as_float(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


FLOAT_EDGES = [0.0, -0.0, 1.0, -1.0, 0.1, 1e-4, 1e-05, 0.00001234, 1e15, 1e16, 1e+16 + 2, 9007199254740993.0,
               5e-324, -5e-324, 2.2250738585072014e-308, 2.225073858507201e-308, 1.7976931348623157e308,
               1.5e300, 123456789012345680.0, 0.30000000000000004, float("nan"), float("inf"), float("-inf"),
               as_float(0x7FF8000000000001), as_float(0xFFF8000000000000)]
INT_EDGES = [0, -1, 2**63 - 1, -(2**63), 2**63, -(2**63) - 1, 2**64, 10**18, 10**19, -(10**19), 10**100, -(3**200)]
# code points around every branch of the encoder: escapes, 0x7F, UTF-8 length steps, surrogates
CHAR_EDGES = ("\x00\x01\x07\x08\t\n\x0b\x0c\r\x0e\x1f \"\\/\x7f\x80\xff\u0100\u07ff\u0800\u2028\u2029"
              "\ud7ff\ue000\ufeff\uffff\U00010000\U0001f600\U0010ffff")

floats = st.one_of(
    st.floats(),                                           # NaN and the infinities included
    st.sampled_from(FLOAT_EDGES),
    st.integers(0, 2**64 - 1).map(as_float),               # any bit pattern: subnormals, NaN payloads
    st.floats(min_value=1e-7, max_value=1e-3),
    st.floats(min_value=1e14, max_value=1e18),
)
ints = st.one_of(st.integers(), st.integers(min_value=-(2**200), max_value=2**200), st.sampled_from(INT_EDGES))
chars = st.one_of(st.characters(), st.sampled_from(CHAR_EDGES))
texts = st.one_of(
    st.text(chars, max_size=20),
    st.text(st.characters(codec="ascii"), max_size=40),
    st.text(st.characters(exclude_categories=()), max_size=6),  # lone surrogates (category Cs)
)
keys = st.one_of(texts, st.sampled_from(["a", "A", "b", "aa", "a\x00", "\x7f", "é", "\uffff", "\U0001f600", "", "Z"]))
scalars = st.one_of(st.none(), st.booleans(), ints, floats, texts)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(keys, inner, max_size=40),
    max_leaves=60,
)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values)
@example({"b": 1e-05, "a": [0.0001, 1e16, 1e15, -0.0, 5e-324, float("nan"), float("-inf")]})
@example({"k": "a\"b\\c\n", "name": "Café – ü"})
@example({"\x7f": "\x00\x1f\u2028\u2029\"\\/\x08\x0c"})
@example({"\ud800": 1})
@example(["ok", {"x": "\udfff"}])
@example({str(i): i for i in range(40, 0, -1)})             # beyond the insertion sort: qsort
@example({"\U0001f600": 1, "\uffff": 2, "é": 3, "e": 4, "": 5, "ab": 6, "a": 7})
@example("x" * 10_000 + "\n" + "é" * 5000)                  # several encoder chunks
@example(INT_EDGES + FLOAT_EDGES)
def test_native_bytes_equal_json_dumps(value):
    check(value)


@settings(max_examples=300, deadline=None)
@given(values.filter(lambda v: outcome(orjson.dumps, v)[0] == "ok"))
def test_values_orjson_parsed_hash_alike_fast_or_not(value):
    """What ingest hashes: documents orjson parsed (fast=True), with and without the extension."""
    try:
        text = json.dumps(value, allow_nan=False)  # JSON text orjson can parse
    except ValueError:
        return
    doc = orjson.loads(text)
    expected = reference(doc)
    assert canonical_bytes(doc, True) == expected
    assert canonical_bytes(doc) == expected
    assert python_path(doc, True) == expected


SPEC_VECTORS = [  # docs/rules.md#test-vectors: input object, canonical bytes, SHA-256
    ({"schema_class": "Message", "message_text": "hello"},
     b'{"message_text":"hello","schema_class":"Message"}',
     "edb337c01d552ad81bc71730e9c27ab42a5562873de69e673479f7891ea60886"),
    ({"source_id": "src:a", "text": "Alpha."}, b'{"source_id":"src:a","text":"Alpha."}',
     "d23eb297bcac927f3ba353e9449abae1f593a18a9a64c8cd59c86838f91bd36f"),
    ({"name": "Café – ü", "k": "a\"b\\c\n"}, '{"k":"a\\"b\\\\c\\n","name":"Café – ü"}'.encode(),
     "75c39b315f699a057cb2b331c502c0f0bf46d8b468448327c8119e8a6b6b49ed"),
    (json.loads('{"score": 1.0, "n": 1, "x": 0.00001, "y": 1e16, "z": 0.1, "t": true, "u": null, '
                '"ctl": "\\u0001\\u007f\\u2028"}'),
     b'{"ctl":"\\u0001\x7f\xe2\x80\xa8","n":1,"score":1.0,"t":true,"u":null,"x":1e-05,"y":1e+16,"z":0.1}',
     "0cbb4e1bc00955b0f2393af7a65aab7aacd03da0ccfe9966769da670f5a5aa8f"),
]


@pytest.mark.parametrize("value,data,sha", SPEC_VECTORS)
def test_spec_vectors(value, data, sha):
    assert native.canonical(value) == data
    assert hashlib.sha256(data).hexdigest() == sha


def test_escape_at_every_position_of_ascii_strings():
    """ASCII strings are copied 8 bytes at a time until one needs an escape: every escaped
    character at every offset of strings of 1..25 characters."""
    for n in range(1, 26):
        for i in range(n):
            for c in "\x00\x08\t\n\x0c\r\x1f\"\\":
                text = "a" * i + c + "~" * (n - i - 1)
                assert native.canonical([text, {text: text}]) == reference([text, {text: text}])
    assert native.canonical("\x7f" * 17 + " /~") == reference("\x7f" * 17 + " /~")


def test_lone_surrogate_gives_the_workbench_error():
    for value in ({"a": "x\ud83d"}, ["\udc00"], {"\ud800": None}):
        assert native.canonical(value) is None
        with pytest.raises(CanonicalisationError) as got:
            canonical_bytes(value)
        with pytest.raises(UnicodeEncodeError) as want:
            reference(value)
        assert str(got.value) == str(want.value)
        assert str(got.value).startswith("'utf-8' codec can't encode character")


class MyDict(dict):
    def items(self):
        return [("swapped", 1)]


class MyStr(str):
    pass


@pytest.mark.parametrize("value", [
    (1, 2), {1: "int key"}, {"a": 1, 2: "b"}, {("t",): 1}, MyDict(a=1), [MyStr("s")], {MyStr("k"): 1},
    [b"bytes"], {"a": {1, 2}}, [True, object()], 1.5j,
])
def test_other_types_decline_and_json_dumps_decides(value):
    """Tuples, non-str keys, subclasses (a dict subclass may override items()), other objects:
    the extension declines and canonical_bytes gives exactly json.dumps' result or exception."""
    assert native.canonical(value) is None
    assert outcome(canonical_bytes, value) == outcome(python_path, value) == outcome(reference, value)


def test_int_beyond_the_str_digit_limit_declines():
    value = [10 ** 5000]
    assert native.canonical(value) is None
    got, want = outcome(canonical_bytes, value), outcome(reference, value)
    assert got == want and got[0] is ValueError


def nested(depth: int, leaf=1):
    value = leaf
    for i in range(depth):
        value = [value] if i % 2 else {"k": value}
    return value


def test_deep_nesting_ends_as_json_dumps_does(monkeypatch):
    """At every depth around the recursion limit canonical_bytes gives what the Python path gives
    (bytes or RecursionError) when called from the same place; well below the limit the
    extension itself writes the bytes."""
    assert native.canonical(nested(600)) == reference(nested(600))
    depths = range(400, 1200)
    with_native = [outcome(canonical_bytes, nested(d)) for d in depths]
    monkeypatch.setattr(canonical, "_native", None)
    without = [outcome(canonical_bytes, nested(d)) for d in depths]
    assert with_native == without
    assert with_native[0][0] == "ok" and with_native[-1][0] is RecursionError


def test_self_containing_value_gives_json_dumps_error():
    loop = [1]
    loop.append(loop)
    cyc = {"a": [{}]}
    cyc["a"][0]["b"] = cyc
    for value in (loop, cyc):
        assert native.canonical(value) is None
        assert outcome(canonical_bytes, value) == outcome(reference, value)
        assert outcome(canonical_bytes, value)[0] is ValueError  # "Circular reference detected"


HASH_QUERIES = {
    "runs": "SELECT invocation_id, envelope_hash, input_hash FROM runs ORDER BY ALL",
    "evidence": "SELECT invocation_id, ord, computed_hash, canonical_error FROM evidence ORDER BY ALL",
    "invocation_index": "SELECT line_no, envelope_hash FROM invocation_index ORDER BY ALL",
    "class_schemas": "SELECT digest, computed_digest FROM class_schemas ORDER BY ALL",
}


def hashes(runs_dir) -> dict:
    con = fresh_con()
    ingest_archive(con, runs_dir, workers=0)
    out = {name: con.execute(sql).fetchall() for name, sql in HASH_QUERIES.items()}
    con.close()
    return out


@pytest.mark.parametrize("runs_dir", [CORPUS_RUNS, EXAMPLE_RUNS], ids=["corpus", "example"])
def test_warehouse_hashes_unchanged(runs_dir, monkeypatch):
    """Every envelope, input, evidence and class-schema hash ingest stores is the same with the
    extension as with the Python path. (ingest's own C path for whole envelopes, when there is
    one, is switched off in both runs so that canonical_bytes computes these hashes.)"""
    monkeypatch.setattr(ingest_parse, "_envelope_native", None, raising=False)
    with_native = hashes(runs_dir)
    monkeypatch.setattr(canonical, "_native", None)
    without = hashes(runs_dir)
    assert with_native == without
    assert sum(1 for row in with_native["runs"] if row[1] is not None and row[2] is not None) >= 90
    assert sum(1 for row in with_native["evidence"] if row[2] is not None) >= 5
    assert sum(1 for row in with_native["invocation_index"] if row[1] is not None) >= 80


def test_groundwork_native_off_switches_it_off():
    code = "from groundwork.core import canonical; print(canonical._native is None)"
    env = dict(os.environ, GROUNDWORK_NATIVE="off")
    off = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    env["GROUNDWORK_NATIVE"] = ""
    on = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert (off.stdout.strip(), on.stdout.strip()) == ("True", "False")

