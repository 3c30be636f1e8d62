"""The fast JSON path equals Python's json.loads exactly (docs/rules.md#numbers), and no input
bytes whatsoever make the run parser raise (no traceback for any input)."""

from __future__ import annotations

import json
import math

from hypothesis import example, given
from hypothesis import strategies as st

from groundwork.core.jsontext import loads
from groundwork.ingest.load import _insert
from groundwork.ingest.tables import RUN_TABLES
from ingest_support import fresh_con
from groundwork.ingest.parse import parse_run
from groundwork.ingest.scan import FileEntry, RunListing


def same(a, b) -> bool:
    """Equal values *and* types, floats compared by repr (so -0.0 != 0.0, nan == nan), key order kept."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return repr(a) == repr(b) or (math.isnan(a) and math.isnan(b))
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return a == b


def outcome(fn, text):
    try:
        return ("ok", fn(text))
    except RecursionError:
        return ("error", "RecursionError")
    except ValueError as exc:
        return ("error", str(exc))


def check(text: str) -> None:
    mine, ref = outcome(loads, text), outcome(json.loads, text)
    assert mine[0] == ref[0], (text, mine, ref)
    if mine[0] == "ok":
        assert same(mine[1], ref[1]), (text, mine, ref)
    else:
        assert mine[1] == ref[1]  # the very error text the workbench would print


numbers = st.one_of(
    st.integers(min_value=-(2**200), max_value=2**200),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([2**63, 2**63 - 1, -(2**63), -(2**63) - 1, 2**64, 2**64 - 1, 10**18, 10**19]),
)
strings = st.text(alphabet=st.characters(blacklist_categories=()), max_size=12)
keys = st.sampled_from(["a", "b", "grounded_on", "source_id", "é", "\ud800", ""]) | strings
json_values = st.recursive(
    st.none() | st.booleans() | numbers | strings,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4),
    max_leaves=20,
)
number_tokens = st.from_regex(r"\A-?(0|[1-9][0-9]{0,40})(\.[0-9]{1,25})?([eE][+-]?[0-9]{1,3})?\Z", fullmatch=True)


@given(json_values, st.booleans(), st.sampled_from([None, 2]))
@example({"a": 1, "a": 2}, True, None)  # noqa: F601 - duplicate keys are written below as text too
def test_loads_equals_json_loads_on_serialised_values(value, ascii_only, indent):
    check(json.dumps(value, ensure_ascii=ascii_only, indent=indent))


@given(number_tokens)
@example("-0")
@example("1E5")
@example("123456789012345678901234567890")
@example("9223372036854775808")
@example("1e400")
@example("0.5E1")
def test_loads_equals_json_loads_on_number_tokens(token):
    check(token)
    check('{"n": ' + token + ', "m": [' + token + "]}")


@given(st.text(alphabet='{}[]":,0123456789-+.eE \\ntruefalsnNIaiy\ud800ud8', max_size=30))
@example('{"a": 1, "a": 2, "b": 3, "a": 4}')
@example('"\\ud800"')
@example('"\\udc00\\ud800"')
@example("NaN")
@example("[-Infinity, Infinity]")
@example('{"a": 1,}')
@example(" \n")
def test_loads_equals_json_loads_on_arbitrary_text(text):
    check(text)


def _listing(spans: bytes, envelope: bytes, request: bytes | None) -> RunListing:
    listing = RunListing("01a22a33-0000-7000-8000-00000000000f")
    for name, data in (("spans.jsonl", spans), ("envelope.json", envelope), ("request.json", request)):
        if data is not None:
            listing.files[name] = FileEntry(name, len(data), 0, data, "0" * 64)
    return listing


span_line = st.fixed_dictionaries({
    "name": st.sampled_from(["invoke_agent", "retrieval", "chat"]) | json_values,
    "context": st.fixed_dictionaries({"trace_id": st.just("0xab") | json_values, "span_id": st.sampled_from(["0x1", "0x2", "0x3"]) | json_values}),
    "parent_id": st.sampled_from([None, "0x1", "0x2", "0x3", 0, 99]),
    "start_time": st.sampled_from(["2026-01-01T00:00:00.000001Z", "2026-01-01T00:00:00", "x"]) | json_values,
    "end_time": st.just("2026-01-01T00:00:01+05:30"),
    "attributes": st.dictionaries(st.sampled_from(["dd.grounding_mode", "dd.source_id", "other"]), json_values) | json_values,
})


_CON = []


def _con():
    if not _CON:
        _CON.append(fresh_con())
    return _CON[0]


@given(st.lists(span_line, max_size=5), json_values, st.binary(max_size=40), st.binary(max_size=40))
def test_parse_run_never_raises_and_its_rows_always_load(spans, env, junk_spans, junk_env):
    for s_bytes, e_bytes in (("".join(json.dumps(x) + "\n" for x in spans).encode("utf-8", "surrogatepass"),
                              json.dumps({"evidence": env, "payload": env, "outcome": env, "grounding_mode": env,
                                          "delegations": env}).encode("utf-8", "surrogatepass")),
                             (junk_spans, junk_env),
                             (b"\xef\xbb\xbf" + junk_spans, json.dumps(env).encode("utf-8", "surrogatepass"))):
        rows, issues = parse_run(_listing(s_bytes, e_bytes, junk_env))
        (run,) = rows.rows["runs"]
        assert run[0] == "01a22a33-0000-7000-8000-00000000000f"
        # a run that is not lintable always says why
        lintable, reason = run[4], run[5]
        assert lintable == (reason is None)
        con = _con()  # every row is storable: no lone surrogate in VARCHAR, valid JSON in JSON columns
        con.execute("BEGIN")
        for table in RUN_TABLES:
            _insert(con, table, rows.arrow(table))
        con.execute("ROLLBACK")


@given(json_values)
@example({"a": [1, 2.5, None, float("nan"), {"b": "\x7f\u2028\ud800é"}], "c": 2**70})
@example(None)
def test_raw_json_columns_are_exactly_json_dumps(value):
    """The *_json columns hold exactly Python's json.dumps text (repr_json parses it back)."""
    from groundwork.core.jsontext import dumps
    assert dumps(value) == json.dumps(value)
