"""The C fast path for spans.jsonl (ingest/_spans_native.c) against the Python path.

The oracle is the pure-Python parse_spans (the fast path switched off): for every file the fast
path either declines (None) or returns exactly the same rows (values AND types), span format,
cycle-check records and issues. It must also really be taken for ordinary workbench span files.

Skipped when the extension is not built, unless GROUNDWORK_REQUIRE_NATIVE=1 (CI sets it): then
its absence fails.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groundwork.core import native as groundwork_native
from groundwork.ingest import spans
from groundwork.ingest.issues import Issues
from groundwork.core.jsontext import iso_times, may_hold_surrogate, needs_exact_bytes
from groundwork.ingest.parse import parse_run
from groundwork.ingest.scan import FileEntry, RunListing, list_and_read
from groundwork.ingest.tables import to_arrow

from ingest_support import CORPUS_RUNS, EXAMPLE_RUNS, synthetic_runs
from native_support import built

native = built("groundwork.ingest._spans_native")


def typed(rows):
    """Rows with each value's type, so True != 1 and 1.0 != 1 count as differences."""
    return [tuple((type(v).__name__, v) for v in row) for row in rows]


def through_parse_spans(text: str, inv: str = "inv-1", fast_path=None):
    """parse_spans called as parse_run calls it, with ``fast_path`` as its C path (None: off)."""
    data = text.encode("utf-8", "surrogatepass")
    saved, spans._native = spans._native, fast_path
    try:
        issues = Issues()
        rows, fmt, records = spans.parse_spans(text, inv, "runs/x/spans.jsonl", issues, data.endswith((b"\n", b"\r")),
                                               needs_exact_bytes(data), may_hold_surrogate(data))
    finally:
        spans._native = saved
    return typed(rows), fmt, [(r.name, r.span_id, r.parent_id, r.line) for r in records], issues.items


def check(text: str, inv: str = "inv-1") -> bool:
    """Assert the fast path agrees with the Python path on ``text``; True when it was taken."""
    expected = through_parse_spans(text, inv)
    got = native.sdk_rows(text, inv, iso_times)
    assert through_parse_spans(text, inv, native) == expected
    if got is None:
        return False
    rows, fmt, records, issues = expected
    assert typed(got) == rows
    assert issues == []  # an accepted file never has an issue
    assert fmt == ("sdk" if got else None)
    assert native.sdk_rows(text.encode("ascii"), inv, iso_times) == got  # bytes in, same rows
    return True


# ------------------------------------------------------------------------------ real span files


def spans_files(root: Path) -> list[Path]:
    return sorted(root.glob("*/spans.jsonl"))


def test_corpus_and_example_files_agree():
    files = spans_files(CORPUS_RUNS) + spans_files(EXAMPLE_RUNS)
    assert len(files) > 100
    taken = sum(check(f.read_bytes().decode("utf-8", "replace"), f.parent.name) for f in files)
    assert taken > len(files) // 2  # most corpus runs are ordinary; the rest are damaged on purpose


@pytest.fixture(scope="module")
def synth_runs(tmp_path_factory):
    return synthetic_runs(tmp_path_factory.mktemp("native"), 150, seed=11)


def test_synthetic_archive_files_agree_and_take_the_fast_path(synth_runs):
    files = spans_files(synth_runs)
    assert len(files) >= 140
    taken = sum(check(f.read_text(encoding="utf-8"), f.parent.name) for f in files)
    # the only ordinary reason to decline: a hex id with a run of 19+ digits (about 0.4% of files)
    assert taken >= 0.9 * len(files)


def run_both_ways(listing_of):
    """parse_run's rows of every table and issues with the fast path off and on."""
    outputs = []
    for mode in (None, native):
        saved, spans._native = spans._native, mode
        try:
            rowset, issues = parse_run(listing_of(), 7)
        finally:
            spans._native = saved
        outputs.append(({t: typed(r) for t, r in rowset.rows.items()}, issues.items))
    return outputs


def test_parse_run_is_the_same_with_and_without_the_fast_path(synth_runs):
    """Whole runs (rows of every table, issues, lintable verdict, cycle issues) do not change."""
    names = sorted(p.name for p in synth_runs.iterdir() if (p / "spans.jsonl").exists())[:60]
    for name in names:
        off, on = run_both_ways(lambda: list_and_read(str(synth_runs), str(synth_runs), name, False))
        assert off == on, name


# ----------------------------------------------------------------------------- hand-made lines

CTX = {"trace_id": "0x24424e7990c30c4576157a8b2c03007c", "span_id": "0x7e2f79a3ee65b5fd", "trace_state": "[]"}
RESOURCE = {"attributes": {"telemetry.sdk.language": "python", "service.name": "data-director-workbench"},
            "schema_url": ""}


def span(**over) -> dict:
    doc = {"name": "invoke_agent", "context": dict(CTX), "kind": "SpanKind.INTERNAL", "parent_id": None,
           "start_time": "2026-10-01T00:00:00.270869Z", "end_time": "2026-10-01T00:00:00.273825Z",
           "status": {"status_code": "UNSET"},
           "attributes": {"dd.operation": "invoke_agent", "dd.agent_id": "r3.standards-advisor",
                          "dd.grounding_mode": "retrieval", "dd.outcome": "succeeded"},
           "events": [], "links": [], "resource": RESOURCE}
    for key, value in over.items():
        if value is DROP:
            doc.pop(key, None)
        else:
            doc[key] = value
    return doc


DROP = object()


def lines(*docs) -> str:
    return "".join(json.dumps(d) + "\n" for d in docs)


ACCEPTED = {
    "plain": lines(span(), span(name="chat", parent_id="0x7e2f79a3ee65b5fd")),
    "no final newline": lines(span()).rstrip("\n"),
    "blank lines": "\n   \n" + lines(span()) + "\n\n" + lines(span(name="x")) + "  \n",
    "empty file": "",
    "blank only": "\n  \n",
    "extra keys and nested arrays": lines(span(extra={"a": [1, [2, [3, {"b": None}]], "s"], "t": True},
                                               attributes={"dd.operation": "chat", "list": [[1, 2], []], "o": {}})),
    "scalar dd values": lines(span(attributes={"dd.input_tokens": 2746, "dd.output_tokens": -3, "dd.outcome": True,
                                               "dd.model_id": False, "dd.agent_id": None, "dd.grounding_mode": 0})),
    "grounding mode null / true / absent": lines(span(attributes={"dd.grounding_mode": None}),
                                                 span(attributes={"dd.grounding_mode": True}),
                                                 span(attributes={"dd.operation": "x"})),
    "attributes null / absent / empty": lines(span(attributes=None), span(attributes=DROP), span(attributes={})),
    "parent falsy / 0x": lines(span(parent_id=""), span(parent_id=DROP), span(parent_id="0x"), span(parent_id="abc")),
    "status and resource shapes": lines(span(status={"status_code": 2}), span(status={}), span(status=[1]),
                                        span(status={"status_code": None}), span(resource={"attributes": []}),
                                        span(resource={"attributes": {"service.name": 5}}), span(resource=DROP),
                                        span(resource={"attributes": {"service.name": False}})),
    "other time forms": lines(span(start_time="2026-10-01T02:00:00.270869+02:00", end_time="2026-10-01T00:00:01Z"),
                              span(start_time="1969-12-31T23:59:59.999999Z", end_time="9999-12-31T23:59:59.999999Z"),
                              span(start_time="2300-01-01T00:00:00.000001Z", end_time="2300-01-01T00:00:00.000002Z")),
    "compact separators": "".join(json.dumps(span(), separators=(",", ":")) + "\n" for _ in range(2)),
    "printable punctuation": lines(span(name=" !#$%&'()*+,-./:;<=>?@[]^_`{|}~", attributes={"k {": "v ] ,"})),
    "many seconds": lines(*(span(start_time=f"2026-10-01T00:00:{s:02d}.{s:06d}Z") for s in range(20))),
    "nesting depth 64": lines(span(extra=json.loads("[" * 63 + "]" * 63))),
}

DECLINED = {
    "float": lines(span(attributes={"dd.input_tokens": 1.5})),
    "exponent": lines(span()).replace('"extra"', '"x"').replace('"kind"', '"n": 1e3, "kind"'),
    "minus zero": lines(span()).replace('"kind"', '"n": -0, "kind"'),
    "duplicate key": lines(span()).replace('"kind"', '"name": "other", "kind"'),
    "duplicate nested key": lines(span(extra={"a": 1})).replace('"a": 1', '"a": 1, "a": 2'),
    "escape": lines(span(name="a\nb")),
    "unicode escape": lines(span(name="caf\u00e9")),
    "non-ascii": json.dumps(span(name="caf\u00e9"), ensure_ascii=False) + "\n",
    "tab": lines(span()).replace(", ", ",\t", 1),
    "carriage return": lines(span()).replace("\n", "\r\n"),
    "del": lines(span(name="a\x7fb")).replace("\\u007f", "\x7f"),
    "nineteen digits in a string": lines(span(name="1234567890123456789")),
    "nineteen digit int": lines(span(attributes={"dd.input_tokens": 10**18})),
    "nesting depth 65": lines(span(extra=json.loads("[" * 64 + "]" * 64))),
    "resourceSpans": lines(span(resourceSpans=[])),
    "traceId": lines(span(traceId="ab")),
    "trailing garbage": lines(span()).rstrip("\n") + " x\n",
    "two objects": lines(span()).rstrip("\n") + " {}\n",
    "truncated": lines(span())[:-20],
    "not an object": "[1, 2]\n",
    "missing name": lines(span(name=DROP)),
    "name not a string": lines(span(name=5)),
    "context not an object": lines(span(context=[])),
    "span id not a string": lines(span(context={"span_id": 1, "trace_id": "a"})),
    "parent id not a string": lines(span(parent_id=0)),
    "attributes not an object": lines(span(attributes=[])),
    "dd value an array": lines(span(attributes={"dd.operation": ["x"]})),
    "grounding mode an object": lines(span(attributes={"dd.grounding_mode": {}})),
    "status code an object": lines(span(status={"status_code": {}})),
    "naive time": lines(span(start_time="2026-10-01T00:00:00.270869")),
    "bad time": lines(span(end_time="2026-10-01T25:00:00.270869Z")),
    "leading zero": lines(span()).replace('"kind"', '"n": 01, "kind"'),
    "nul byte": lines(span()).replace('"kind"', '"k\x00": 1, "kind"'),
}


@pytest.mark.parametrize("label", sorted(ACCEPTED))
def test_fast_path_takes_ordinary_shapes(label):
    assert check(ACCEPTED[label]), f"{label}: declined"


@pytest.mark.parametrize("label", sorted(DECLINED))
def test_fast_path_declines_what_is_outside_its_grammar(label):
    assert not check(DECLINED[label]), f"{label}: taken"


@pytest.mark.parametrize("label", sorted(ACCEPTED) + sorted(DECLINED))
def test_parse_run_reads_the_raw_bytes_the_same_way(label):
    """parse_run hands the raw bytes to the fast path (no decoding): same rows and issues,
    including the empty-file issue and files with a BOM or invalid UTF-8."""
    text = {**ACCEPTED, **DECLINED}[label]
    for data in (text.encode("utf-8"), b"\xef\xbb\xbf" + text.encode("utf-8"), text.encode("utf-8") + b"\xff\n"):
        def listing():
            run = RunListing("01a22a33-0000-7000-8000-00000000000f")
            run.files["spans.jsonl"] = FileEntry("spans.jsonl", len(data), 0, data, "0" * 64)
            return run

        off, on = run_both_ways(listing)
        assert off == on


def test_known_row_of_a_workbench_line():
    """One row spelled out (independent of both paths): ids without 0x, JSON texts, times."""
    (row,) = native.sdk_rows(lines(span(parent_id="0xabc")), "inv-9", iso_times)
    assert row[:11] == ("inv-9", 0, 1, "sdk", "invoke_agent", '"invoke_agent"', "7e2f79a3ee65b5fd",
                        "24424e7990c30c4576157a8b2c03007c", "abc", 1790812800270869, 1790812800273825)
    assert row[11:21] == ("invoke_agent", "r3.standards-advisor", None, None, None, None, None, "succeeded",
                          "retrieval", None)
    assert row[21:26] == ('"retrieval"', True, "UNSET", "data-director-workbench",
                          '{"dd.operation":"invoke_agent","dd.agent_id":"r3.standards-advisor",'
                          '"dd.grounding_mode":"retrieval","dd.outcome":"succeeded"}')
    assert row[26:28] == (1790812800270869000, 1790812800273825000)
    assert row[28] == 1790812800270869 / 1e6 * 1e9


def test_files_over_4_mib_are_declined():
    one = lines(span())
    limit = 4 * 1024 * 1024
    text = one * (limit // len(one))
    text += " " * (limit - len(text))  # a last line of spaces only: blank
    assert len(native.sdk_rows(text, "inv", iso_times)) == limit // len(one)
    assert native.sdk_rows(text + " ", "inv", iso_times) is None


def test_an_iso_times_error_declines_and_a_memory_error_propagates():
    def broken(value):
        raise ValueError("no")

    def oom(value):
        raise MemoryError

    assert native.sdk_rows(lines(span()), "inv", broken) is None
    assert native.sdk_rows(lines(span()), "inv", lambda v: (1, 2)) is None  # not (int, float)
    with pytest.raises(MemoryError):
        native.sdk_rows(lines(span()), "inv", oom)


def test_switch_off_by_environment(monkeypatch):
    monkeypatch.setenv("GROUNDWORK_NATIVE", "off")
    assert groundwork_native.load("groundwork.ingest._spans_native") is None
    monkeypatch.setenv("GROUNDWORK_NATIVE", "on")
    assert groundwork_native.load("groundwork.ingest._spans_native") is native


# --------------------------------------------------------------------------- property: mutations

HEXA = "0123456789abcdef"
PRINTABLE = "".join(chr(c) for c in range(0x20, 0x7F) if chr(c) not in '"\\')

scalars = st.one_of(st.text(PRINTABLE, max_size=12), st.integers(-10**6, 10**6), st.booleans(), st.none())
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(st.text(PRINTABLE, max_size=6), inner,
                                                                       max_size=3)), max_leaves=8)


@st.composite
def span_docs(draw):
    second = draw(st.integers(0, 3))
    attrs = draw(st.dictionaries(st.sampled_from(spans.OWNED), scalars, max_size=5))
    attrs.update(draw(st.dictionaries(st.sampled_from(["x", "y.z", "list"]), values, max_size=2)))
    doc = span(name=draw(st.text(PRINTABLE, max_size=15)),
               # a run of 19+ digits anywhere takes the Python path, so the ids have a letter in the middle
               context={"trace_id": "0x" + draw(st.text(HEXA, min_size=15, max_size=15)) + "f"
                                    + draw(st.text(HEXA, min_size=16, max_size=16)),
                        "span_id": draw(st.text(HEXA, min_size=16, max_size=16))},
               parent_id=draw(st.one_of(st.none(), st.just(""), st.text(HEXA, max_size=18))),
               start_time=f"2026-10-01T00:00:{second:02d}.{draw(st.integers(0, 999999)):06d}Z",
               end_time=f"2026-10-01T00:00:{second + 1:02d}.{draw(st.integers(0, 999999)):06d}Z",
               attributes=draw(st.one_of(st.none(), st.just(attrs))),
               status={"status_code": draw(scalars)})
    if draw(st.booleans()):
        doc["extra"] = draw(values)
    return doc


MUTATIONS = ["none", "blank lines", "extra key", "nested arrays", "float", "duplicate key", "escape", "non-ascii",
             "tab", "cr", "missing key", "ill-typed key", "deep nesting", "truncate", "huge int", "minus zero",
             "otlp key", "trailing garbage", "empty", "random byte", "delete byte"]
KEEPS_FAST_PATH = {"none", "blank lines", "extra key", "nested arrays"}


def mutate(text: str, kind: str, rnd: random.Random) -> str:
    pos = rnd.randrange(len(text) + 1)
    first, rest = text.split("\n", 1)
    head = first[:-1]  # the first line without its closing brace
    if kind == "blank lines":
        return text[:text.index("\n") + 1] + rnd.choice(["\n", "   \n"]) + text[text.index("\n") + 1:] + "\n"
    if kind == "extra key":
        return head + ', "zz extra": {"k": [1, "v", null]}}\n' + rest
    if kind == "nested arrays":
        return head + ', "zz nested": [[[]], [[1, [true]], {}], -5]}\n' + rest
    if kind == "float":
        return head + ', "zz": ' + rnd.choice(["1.5", "1e3", "2E-1", "0.0"]) + "}\n" + rest
    if kind == "duplicate key":
        return head + ', ' + rnd.choice(['"name": "n"', '"attributes": {}', '"kind": 1']) + "}\n" + rest
    if kind == "escape":
        return text[:pos] + rnd.choice(["\\n", "\\u0041", "\\\\", '\\"']) + text[pos:]
    if kind == "non-ascii":
        return text[:pos] + rnd.choice(["\u00e9", "\u2028", "\x85", "\ufeff"]) + text[pos:]
    if kind == "tab":
        return text[:pos] + "\t" + text[pos:]
    if kind == "cr":
        return text[:pos] + rnd.choice(["\r", "\r\n", "\x0b", "\x1c"]) + text[pos:]
    if kind == "missing key":
        key = rnd.choice(['"name"', '"context"', '"start_time"', '"end_time"', '"span_id"', '"trace_id"'])
        return text.replace(key, '"zz"', 1)
    if kind == "ill-typed key":
        key = rnd.choice(['"name": ', '"start_time": ', '"parent_id": ', '"attributes": ', '"span_id": '])
        return text.replace(key, key + rnd.choice(["7, \"zz\": ", "[], \"zz\": ", "false, \"zz\": "]), 1)
    if kind == "deep nesting":
        depth = rnd.randrange(60, 70)
        return head + ', "zz": ' + "[" * depth + "]" * depth + "}\n" + rest
    if kind == "truncate":
        return text[:pos]
    if kind == "huge int":
        return head + ', "zz": ' + rnd.choice(["1" * 19, "-" + "9" * 25, "9223372036854775808"]) + "}\n" + rest
    if kind == "minus zero":
        return head + ', "zz": -0}\n' + rest
    if kind == "otlp key":
        return head + rnd.choice([', "resourceSpans": []}\n', ', "traceId": "ab"}\n']) + rest
    if kind == "trailing garbage":
        return head + "}" + rnd.choice([" x", ",", "}", " {}", " 1"]) + "\n" + rest
    if kind == "empty":
        return ""
    if kind == "random byte":
        return text[:pos] + chr(rnd.randrange(0x20, 0x7F)) + text[pos + 1:]
    if kind == "delete byte":
        return text[:pos] + text[pos + 1:]
    return text


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs=st.lists(span_docs(), min_size=1, max_size=4), kind=st.sampled_from(MUTATIONS),
       seed=st.integers(0, 2**32 - 1), compact=st.booleans())
def test_mutated_span_files_agree(docs, kind, seed, compact):
    separators = (",", ":") if compact else (", ", ": ")
    text = "".join(json.dumps(d, separators=separators) + "\n" for d in docs)
    mutated = mutate(text, kind, random.Random(seed))
    taken = check(mutated)
    if kind in KEEPS_FAST_PATH:
        assert taken, f"{kind}: declined"


# ------------------------------------------------------------------ constants given by Python


def configure(fields=spans.FIELDS, owned=spans.OWNED, owned_columns=spans.OWNED_COLUMNS,
              grounding_mode=spans.GROUNDING_MODE):
    native.configure(fields, owned, owned_columns, grounding_mode)


@pytest.fixture
def restore_configuration():
    yield
    configure()


@pytest.mark.parametrize("args, message", [
    ({"fields": spans.FIELDS[:-1]}, "the span row has 29 columns; this C path fills 30"),
    ({"fields": spans.FIELDS + ("extra",)}, "the span row has 31 columns"),
    ({"fields": ("nom",) + spans.FIELDS[1:]}, "span column 'nom' is not one this C path fills"),
    ({"fields": spans.FIELDS[:-1] + ("ord",)}, "span column 'ord' is given twice"),
    ({"owned_columns": spans.OWNED_COLUMNS[:-1]}, "10 owned attributes but 9 owned columns"),
    ({"grounding_mode": "dd.mode"}, "grounding_mode 'dd.mode' is not an owned attribute"),
])
def test_configure_refuses_constants_that_do_not_fit(args, message, restore_configuration):
    """A row width or column list out of step with the C file is an error at load, and a refused
    call leaves the configuration as it was (the rows below still come out right)."""
    with pytest.raises(ValueError, match=message):
        configure(**args)
    (row,) = native.sdk_rows(lines(span()), "inv", iso_times)
    assert len(row) == len(spans.FIELDS)
    assert check(lines(span(), span(name="x")))


def test_rows_follow_the_column_order_and_owned_keys_python_gives(restore_configuration):
    """The C path builds its rows in the order of spans.FIELDS and copies the attributes of
    spans.OWNED, as given at load: a change there needs no change in C."""
    text = lines(span(), span(attributes={"dd.model_id": "m-1", "dd.grounding_mode": "none"}, name="child"))
    want = native.sdk_rows(text, "inv", iso_times)
    backwards = spans.FIELDS[::-1]
    configure(fields=backwards)
    assert native.sdk_rows(text, "inv", iso_times) == [row[::-1] for row in want]
    keep = [i for i, key in enumerate(spans.OWNED) if key != "dd.model_id"]
    fewer = tuple(f for f in spans.FIELDS if f != "dd_model_id")
    configure(fields=fewer, owned=tuple(spans.OWNED[i] for i in keep),
              owned_columns=tuple(spans.OWNED_COLUMNS[i] for i in keep))
    dropped = spans.FIELDS.index("dd_model_id")
    assert native.sdk_rows(text, "inv", iso_times) == [row[:dropped] + row[dropped + 1:] for row in want]


def test_a_c_path_out_of_step_with_python_is_not_used():
    """native.load: a configure that refuses the constants gives the Python path and a warning."""
    with pytest.warns(RuntimeWarning, match="does not match this groundwork"):
        got = groundwork_native.load("groundwork.ingest._spans_native",
                                     lambda c: c.configure(spans.FIELDS[:-1], spans.OWNED, spans.OWNED_COLUMNS,
                                                           spans.GROUNDING_MODE))
    assert got is None
    assert spans._native is native  # the module's own configuration is untouched
    assert check(lines(span()))


def test_rows_go_into_the_spans_table_by_column_name(restore_configuration):
    """tables.to_arrow puts each value into its column by name, whatever order the rows use."""
    text = lines(span(), span(name="child", parent_id="0x7e2f79a3ee65b5fd"))
    want = to_arrow("spans", native.sdk_rows(text, "inv", iso_times), spans.FIELDS)
    configure(fields=spans.FIELDS[::-1])
    assert to_arrow("spans", native.sdk_rows(text, "inv", iso_times), spans.FIELDS[::-1]).equals(want)
    assert want.column("name").to_pylist() == ["invoke_agent", "child"]
    with pytest.raises(ValueError, match="spans rows have the columns"):
        to_arrow("spans", native.sdk_rows(text, "inv", iso_times), spans.FIELDS[:-1] + ("end_ns",))
