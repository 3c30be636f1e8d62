"""The C fast path for envelope.json / request.json (ingest/_envelope_native.c) against the Python path.

The oracle is the pure-Python path of parse_run (ingest/envelope.py over orjson / json.loads, the
canonical-bytes C path switched off too): for every document the fast path either declines (None)
or returns exactly the same runs columns, payload_refs / evidence / delegations rows (values AND
types) -- and then the Python path records no issue for the document. It must also really be
taken for ordinary envelopes, and for documents with escapes, floats, odd shapes.

Skipped when the extension is not built, unless GROUNDWORK_REQUIRE_NATIVE=1 (CI sets it): then
its absence fails (native_support.built).
"""

from __future__ import annotations

import copy
import json
import random
from collections import Counter
from hashlib import sha256

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groundwork.core import canonical
from groundwork.ingest import envelope as E
from groundwork.ingest import parse as P
from groundwork.ingest.envelope import delegation_rows, envelope_columns, evidence_rows, payload_rows, request_columns
from groundwork.ingest.issues import Issues
from groundwork.core.jsontext import iso_to_us_opt
from groundwork.ingest.scan import FileEntry, list_and_read

from ingest_support import CORPUS_RUNS, EXAMPLE_RUNS, synthetic_runs
from native_support import built

native = built("groundwork.ingest._envelope_native")


def typed(row):
    """A row with each value's type, so True != 1 and 1.0 != 1 count as differences."""
    return tuple((type(v).__name__, v) for v in row)


class _PurePython:
    """Both C paths off: envelope rows and canonical bytes from Python only."""

    def __enter__(self):
        self.saved = P._envelope_native, canonical._native
        P._envelope_native = canonical._native = None

    def __exit__(self, *exc):
        P._envelope_native, canonical._native = self.saved


def python_envelope(data: bytes, inv: str, folder_check: bool = True):
    """What parse_run computes for envelope.json in Python: (columns, rows...) or None, issues."""
    issues = Issues()
    with _PurePython():
        present, env, fast = P._load_json_file(FileEntry("envelope.json", data=data), "r/envelope.json",
                                               issues, True, True)
        if not present:
            return None, issues.items
        cols = envelope_columns(env, inv, "r/envelope.json", issues, inv if folder_check else None, fast)
        rows = payload_rows(env, inv, fast), evidence_rows(env, inv, fast), delegation_rows(env, inv)
    return (cols, *rows), issues.items


def check_envelope(data: bytes, inv: str = "inv-1", folder_check: bool = True) -> bool:
    """Assert the fast path agrees with the Python path on ``data``; True when it was taken."""
    got = native.envelope(data, inv, folder_check, iso_to_us_opt, sha256)
    if got is None:
        return False
    expected, items = python_envelope(data, inv, folder_check)
    assert items == [], "accepted although the Python path records issues"
    cols, prow, erow, drow = expected
    assert tuple(cols) == P.ENVELOPE_COLUMNS
    assert typed(got[0]) == typed(cols.values())
    for want, have in zip((prow, erow, drow), got[1:]):
        assert [typed(r) for r in have] == [typed(r) for r in want]
    return True


def check_request(data: bytes) -> bool:
    got = native.request(data, iso_to_us_opt, sha256)
    if got is None:
        return False
    issues = Issues()
    with _PurePython():
        present, req, fast = P._load_json_file(FileEntry("request.json", data=data), "r/request.json",
                                               issues, False, False)
        assert present
        cols = request_columns(req, "r/request.json", issues, fast)
    assert issues.items == []
    assert typed(got) == typed((cols["request_json"], cols["input_hash"], cols["issued_at"]))
    return True


# ------------------------------------------------------------------------- archives on disk

def run_files(root, name):
    return sorted(p for p in root.glob(f"*/{name}"))


def test_corpus_and_example_archive_documents_agree():
    envs = run_files(CORPUS_RUNS, "envelope.json") + run_files(EXAMPLE_RUNS, "envelope.json")
    reqs = run_files(CORPUS_RUNS, "request.json") + run_files(EXAMPLE_RUNS, "request.json")
    assert len(envs) > 150 and len(reqs) > 150
    taken = sum(check_envelope(f.read_bytes(), f.parent.name) for f in envs)
    assert sum(check_envelope(f.read_bytes(), "another-folder", False) for f in envs) >= taken
    assert taken > len(envs) // 2   # the damaged ones decline
    assert sum(check_request(f.read_bytes()) for f in reqs) > len(reqs) // 2


@pytest.fixture(scope="module")
def synth_runs(tmp_path_factory):
    return synthetic_runs(tmp_path_factory.mktemp("envnative"), 150, seed=12)


def test_synthetic_archive_documents_agree_and_take_the_fast_path(synth_runs):
    envs = run_files(synth_runs, "envelope.json")
    assert len(envs) >= 140
    taken = sum(check_envelope(f.read_bytes(), f.parent.name) for f in envs)
    # ordinary reasons to decline: a 64-hex hash with a run of 19+ digits, a violation on purpose
    assert taken >= 0.8 * len(envs)
    reqs = run_files(synth_runs, "request.json")
    assert sum(check_request(f.read_bytes()) for f in reqs) >= 0.8 * len(reqs)


def test_parse_run_is_the_same_with_and_without_the_fast_path(synth_runs):
    """Whole runs (rows of every table, issues, verdicts) do not change."""
    names = sorted(p.name for p in synth_runs.iterdir() if (p / "envelope.json").exists())[:60]
    for name in names:
        outputs = []
        for mode in (None, native):
            saved, P._envelope_native = P._envelope_native, mode
            try:
                rowset, issues = P.parse_run(list_and_read(str(synth_runs), str(synth_runs), name, False), 7)
            finally:
                P._envelope_native = saved
            outputs.append(({t: [typed(r) for r in rows] for t, rows in rowset.rows.items()}, issues.items))
        assert outputs[0] == outputs[1], name


# ----------------------------------------------------------------------------- hand-made documents

HASH = "33cc13777e7d0c01d8e44b3954cdb0bc79a39d9ed4c1995aac1ef017a418ae96"
RECORD = {"fairsharing_id": "FAIRsharing.d7dorn", "doi": "10.25504/FAIRsharing.d7dorn", "name": "Urban Vocabulary",
          "abbreviation": "UV328", "record_type": "model_and_format", "status": "ready",
          "description": "A model for donn\u00e9es \U0001F600 data.", "subjects": ["Life Science", "Agri"],
          "domains": []}


def base() -> dict:
    ref = {"source_id": "FAIRsharing.d7dorn", "content_hash": HASH}
    return {
        "invocation_id": "inv-1", "agent_id": "r3.standards-advisor", "agent_version": "0.2.0",
        "completed_at": "2026-10-01T00:00:00.273771Z", "grounding_mode": "retrieval",
        "outcome": {"status": "succeeded", "statement": "1 recommendation."},
        "payload": {"grounded_on": [ref], "schema_class": "Recommendations",
                    "items": [{"grounded_on": [ref], "kind": "format", "score": 0.62}]},
        "evidence": [
            {"source_id": "FAIRsharing.d7dorn", "source_uri": "https://fairsharing.org/1328",
             "retrieved_at": "2026-10-01T00:00:00.272957Z", "snapshot_ref": "snapshot:2026-09-04",
             "hash_algorithm": "sha256", "canonicalisation": "json-sorted-utf8-v1", "content_hash": HASH,
             "content": dict(RECORD)},
            {"source_id": "doc-1", "canonicalisation": "dd-json-document-v1", "content_hash": HASH,
             "content": {"b": [1, 2.5, None], "a": {"z": True, "y": "x"}}},
        ],
        "delegations": [{"delegated_invocation_id": "inv-2", "content_hash": HASH, "delegated_status": "succeeded"},
                        "not an object"],
        "telemetry": {"trace_id": "24424e7990c30c4576157a8b2c03007c"},
    }


def encode(doc, style: int = 0) -> bytes:
    if style == 0:
        return json.dumps(doc, indent=2).encode()
    if style == 1:
        return json.dumps(doc, separators=(",", ":")).encode()
    return json.dumps(doc, ensure_ascii=False).encode()   # raw UTF-8: declined (not ASCII)


def with_(path, value):
    doc = base()
    *parents, last = path
    node = doc
    for k in parents:
        node = node[k]
    if value is DROP:
        del node[last]
    else:
        node[last] = value
    return encode(doc)


DROP = object()

ACCEPTED = {
    "base": encode(base()),
    "compact": encode(base(), 1),
    "escapes": with_(["payload", "items", 0, "kind"], 'q"b\\s/\b\f\n\r\t\x01\x1f\x7f\u00e9\u20ac\U0001F600'),
    "escaped keys and odd paths": with_(["payload", "x y", ], {"grounded_on": 5, "k\n": {"grounded_on": [[1], {}]},
                                                             "\u00e9": [{"grounded_on": None}], "": [[{"grounded_on": {}}]]}),
    "floats": with_(["payload", "f"], [0.0, -0.0, 1.5, 123456789.125, 0.0001, -2.75, 1e15, 0.1 + 0.2]),
    "ints": with_(["payload", "i"], [0, -1, 123456789012345678, -123456789012345678]),
    "scalar fields": encode({**base(), "agent_id": 5, "agent_version": True, "grounding_mode": 0,
                             "conversation_id": 1.5, "parent_invocation_id": None, "problem": {"type": None}}),
    "withheld": encode({**base(), "problem": {"type": "https://w3id.org/data-director/problems/grounding-violation"},
                        "outcome": {"status": "failed"}}),
    "falsy shapes": encode({**base(), "outcome": None, "evidence": {}, "delegations": "", "telemetry": [],
                            "grounding_mode": "", "payload": []}),
    "delegations a string / object": encode({**base(), "delegations": "abc", "evidence": 0}),
    "delegations object": encode({**base(), "delegations": {"a": 1}, "evidence": False}),
    "evidence shapes": with_(["evidence"], [{}, {"content": None}, {"content": [1]}, {"content": "s", "canonicalisation": 7},
                                            {"content": {}, "canonicalisation": "dd-input-json-v1", "snapshot_ref": 3},
                                            {"content": {"name": 1, "subjects": [3, True, None, 1.5, "b", "a"]},
                                             "canonicalisation": "json-sorted-utf8-v1"}]),
    "no payload": with_(["payload"], DROP),
    "payload scalar": with_(["payload"], "text"),
    "deep payload": with_(["payload", "deep"], json.loads('[{"grounded_on": 1, "a": ' * 20 + "0" + "}]" * 20)),
    "nothing but an id": json.dumps({"invocation_id": "inv-1"}).encode(),
}

DECLINED = {
    "not ASCII": encode(base(), 2),
    "name mismatch": with_(["invocation_id"], "inv-2"),
    "id not a string": with_(["invocation_id"], 1),
    "grounding_mode a list": with_(["grounding_mode"], ["retrieval"]),
    "outcome a string": with_(["outcome"], "succeeded"),
    "evidence element not an object": with_(["evidence", 1], "x"),
    "evidence a string": with_(["evidence"], "x"),
    "delegations a number": with_(["delegations"], 3),
    "unknown canonicalisation": with_(["evidence", 1, "canonicalisation"], "sha-what"),
    "canonicalisation not a string": with_(["evidence", 1, "canonicalisation"], None),
    "projected list of lists": with_(["evidence", 0, "content", "subjects"], [["a"]]),
    "vstr of an object": with_(["agent_id"], {"a": 1}),
    "19-digit run": with_(["payload", "n"], 1234567890123456789),
    "19 digits in a string": with_(["agent_id"], "x1234567890123456789"),
    "exponent": encode(base()).replace(b'"score": 0.62', b'"score": 6.2e-1'),
    "tiny float": with_(["payload", "f"], 0.00001),
    "huge float": with_(["payload", "f"], 1e16),
    "NaN": with_(["payload", "f"], float("nan")),
    "Infinity": with_(["payload", "f"], float("-inf")),
    "duplicate key": encode(base()).replace(b'"agent_version": "0.2.0"', b'"agent_version": "0.2.0", "agent_id": "x"'),
    "duplicate nested key": encode(base()).replace(b'"kind": "format"', b'"kind": "format", "kind": "format"'),
    "lone surrogate": encode(base()).replace(b'"format"', b'"\\ud800"'),
    "lone low surrogate": encode(base()).replace(b'"format"', b'"\\udc00x"'),
    "truncated": encode(base())[:-3],
    "trailing data": encode(base()) + b" {}",
    "two documents": encode(base()) + encode(base()),
    "not an object": b"[1, 2]",
    "empty": b"",
    "whitespace": b" \n",
    "BOM": b"\xef\xbb\xbf" + encode(base()),
    "raw control in a string": encode(base()).replace(b'"format"', b'"for\tmat"'),
    "bad escape": encode(base()).replace(b'"format"', b'"\\x41"'),
    "too deep": with_(["payload", "deep"], json.loads("[" * 70 + "]" * 70)),
    "leading zero": encode(base()).replace(b'"score": 0.62', b'"score": 00.62'),
    "bare minus": encode(base()).replace(b'"score": 0.62', b'"score": -'),
    "single quotes": encode(base()).replace(b'"format"', b"'format'"),
}


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_accepted_documents_equal_the_python_path(name):
    assert check_envelope(ACCEPTED[name]), f"{name}: declined"


@pytest.mark.parametrize("name", sorted(DECLINED))
def test_declined_documents(name):
    assert native.envelope(DECLINED[name], "inv-1", True, iso_to_us_opt, sha256) is None
    assert check_envelope(DECLINED[name]) is False


def test_folder_check_off_accepts_any_scalar_id():
    for value in ("inv-2", 1, None, True, 2.5):
        assert check_envelope(with_(["invocation_id"], value), "inv-1", folder_check=False)


TIMES = ["2024-02-29T23:59:59.999999Z", "2023-02-29T00:00:00.000000Z", "0001-01-01T00:00:00.000000Z",
         "9999-12-31T23:59:59.999999Z", "0000-01-01T00:00:00.000000Z", "2026-13-01T00:00:00.000000Z",
         "2026-00-01T00:00:00.000000Z", "2026-10-00T00:00:00.000000Z", "2026-10-01T24:00:00.000000Z",
         "2026-10-01T00:60:00.000000Z", "2026-10-01T00:00:60.000000Z", "2026-10-01 00:00:00.000000Z",
         "2026-10-01T00:00:00.00000aZ", "2026-10-01T00:00:00Z", "2026-10-01T02:00:00.000000+02:00",
         "1900-02-29T00:00:00.000000Z", "2000-02-29T00:00:00.000000Z", "2026-04-31T00:00:00.000000Z",
         "1969-12-31T23:59:59.999999Z", "x" * 27, "2026-10-01T00:00:00.123456z", "2026-1-01T00:00:00.1234567Z",
         "+026-10-01T00:00:00.000000Z", "2026-10-01T00:00:00.000000\\u005a"]


@pytest.mark.parametrize("value", TIMES)
def test_completed_at_forms(value):
    """The workbench's own time form is read in C; every other string goes to iso_to_us_opt."""
    data = encode(base()).replace(b'"2026-10-01T00:00:00.273771Z"', json.dumps(value).encode().replace(b"\\\\", b"\\"))
    assert check_envelope(data)


def test_requests():
    req = {"invocation_id": "inv-1", "issued_at": "2026-10-01T00:00:00.270469Z",
           "input": {"title": "Caf\u00e9 \"x\"", "keywords": [], "n": [1, -0.5, None, True], "b": {"a": 1}}}
    assert check_request(json.dumps(req, indent=2).encode())
    assert check_request(json.dumps({**req, "issued_at": 5, "input": [3, "x"]}).encode())
    assert check_request(json.dumps({"input": None}).encode())
    for bad in ({"no input": 1}, [req], {**req, "input": {"x": float("nan")}}):
        assert native.request(json.dumps(bad).encode(), iso_to_us_opt, sha256) is None


# ------------------------------------------------------------------------- mutations

FIELDS = [["invocation_id"], ["agent_id"], ["agent_version"], ["completed_at"], ["grounding_mode"], ["outcome"],
          ["outcome", "status"], ["problem"], ["payload"], ["payload", "schema_class"], ["payload", "grounded_on"],
          ["payload", "grounded_on", 0], ["payload", "items", 0, "grounded_on"], ["payload", "items", 0, "score"],
          ["evidence"], ["evidence", 0], ["evidence", 0, "content"], ["evidence", 1, "content"],
          ["evidence", 0, "canonicalisation"], ["evidence", 1, "canonicalisation"], ["evidence", 0, "source_id"],
          ["evidence", 0, "snapshot_ref"], ["evidence", 0, "content", "subjects"], ["evidence", 0, "content", "name"],
          ["delegations"], ["delegations", 0], ["delegations", 0, "delegated_status"], ["telemetry"],
          ["telemetry", "trace_id"], ["conversation_id"], ["parent_invocation_id"]]

SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-10**20, 10**20),
    st.floats(allow_nan=True, allow_infinity=True), st.floats(-1e6, 1e6).map(lambda x: round(x, 3)),
    st.text(max_size=8), st.text(st.characters(max_codepoint=0x7f), max_size=8),
    st.sampled_from(["", "inv-1", "succeeded", "retrieval", *canonical.REGISTERED, "grounded_on",
                     "2026-10-01T00:00:00.1Z", "https://w3id.org/data-director/problems/grounding-violation"]),
)
KEYS = st.one_of(st.sampled_from(["grounded_on", "source_id", "content_hash", "status", "type", "a", "k\n", "x y"]),
                 st.text(max_size=4))
VALUES = st.recursive(SCALARS, lambda c: st.one_of(st.lists(c, max_size=4), st.dictionaries(KEYS, c, max_size=4)),
                      max_leaves=12)


def mutate(doc, path, value):
    node = doc
    for k in path[:-1]:
        if isinstance(node, dict) and k in node or isinstance(node, list) and isinstance(k, int) and k < len(node):
            node = node[k]
        else:
            return
    last = path[-1]
    if isinstance(node, dict) or (isinstance(node, list) and isinstance(last, int) and last < len(node)):
        if value is DROP and isinstance(node, dict):
            node.pop(last, None)
        elif value is not DROP:
            node[last] = value


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(FIELDS), st.one_of(VALUES, st.just(DROP))), min_size=1, max_size=3),
       st.integers(0, 2), st.booleans())
def test_mutated_envelopes_are_declined_or_equal(mutations, style, folder_check):
    doc = base()
    for path, value in mutations:
        mutate(doc, path, value if value is DROP else copy.deepcopy(value))
    check_envelope(encode(doc, style), "inv-1", folder_check)


def test_seeded_mutations_are_often_accepted():
    """Mutations of every kind: most must be accepted (so equality really is exercised)."""
    rng = random.Random(5)
    values = [None, True, False, 0, -0.0, 1.25, 7, "", "x", "a\"b\\c\u00e9\U0001F600", [], {}, [1, "a"],
              {"grounded_on": [{"source_id": "s", "content_hash": "h"}, 3]}, {"type": "t", "status": "succeeded"},
              "json-sorted-utf8-v1", "dd-json-document-v1", [[]], {"k\n": {"grounded_on": "x"}}]
    taken, tried = Counter(), Counter()
    for _ in range(1500):
        doc = base()
        kinds = []
        for _ in range(rng.randint(1, 3)):
            path = rng.choice(FIELDS)
            value = DROP if rng.random() < 0.15 else copy.deepcopy(rng.choice(values))
            mutate(doc, path, value)
            kinds.append(path[0])
        data = encode(doc, rng.choice((0, 1)))
        raw = rng.random()
        if raw < 0.05:
            data = data[:rng.randrange(len(data))]
        elif raw < 0.1:
            i = rng.randrange(len(data))
            data = data[:i] + bytes([rng.randrange(256)]) + data[i + 1:]
        ok = check_envelope(data, "inv-1", rng.random() < 0.8)
        for k in kinds:
            tried[k] += 1
            taken[k] += ok
    assert sum(taken.values()) > 0.4 * sum(tried.values())
    for kind in ("agent_id", "payload", "evidence", "delegations", "outcome", "telemetry"):
        assert taken[kind] > 20, (kind, taken, tried)


# ------------------------------------------------------------------ constants given by Python


def configure(**over):
    args = {"run_columns": E.ENVELOPE_COLUMNS, "payload": E.PAYLOAD_FIELDS, "evidence": E.EVIDENCE_FIELDS,
            "delegations": E.DELEGATION_FIELDS, "registered": canonical.REGISTERED, "projected": canonical.PROJECTED,
            "projection": canonical.FAIRSHARING_FIELDS, "withheld": E.WITHHELD_TYPE, **over}
    native.configure(*args.values())


@pytest.fixture
def restore_configuration():
    yield
    configure()


@pytest.mark.parametrize("over, message", [
    ({"run_columns": E.ENVELOPE_COLUMNS[:-1]}, "the runs row has 21 columns; this C path fills 22"),
    ({"evidence": E.EVIDENCE_FIELDS + ("x",)}, "the evidence row has 19 columns"),
    ({"payload": ("invocation_id", "ord", "path", "kind", "source_id", "content_hash", "value")},
     "payload_refs column 'value' is not one this C path fills"),
    ({"delegations": E.DELEGATION_FIELDS[:-1] + ("ord",)}, "delegations column 'ord' is given twice"),
    ({"projected": "json-sorted-utf8-v2"}, "the projected canonicalisation 'json-sorted-utf8-v2' is not registered"),
    ({"projection": ("doi", "name", "doi")}, "a projection field is given twice"),
])
def test_configure_refuses_constants_that_do_not_fit(over, message, restore_configuration):
    with pytest.raises(ValueError, match=message):
        configure(**over)
    assert check_envelope(ACCEPTED["base"])  # the configuration in force is untouched


def test_rows_follow_the_constants_python_gives(restore_configuration):
    """Column orders, registered names, the projection's fields and the withheld problem type
    all come from Python at load: changed there, the C path follows."""
    data = ACCEPTED["base"]
    cols, pay, ev, dl = native.envelope(data, "inv-1", True, iso_to_us_opt, sha256)
    configure(run_columns=E.ENVELOPE_COLUMNS[::-1], payload=E.PAYLOAD_FIELDS[::-1],
              evidence=E.EVIDENCE_FIELDS[::-1], delegations=E.DELEGATION_FIELDS[::-1])
    got = native.envelope(data, "inv-1", True, iso_to_us_opt, sha256)
    assert got == (cols[::-1], [r[::-1] for r in pay], [r[::-1] for r in ev], [r[::-1] for r in dl])
    # the projection: fields in any order hash alike (the canonical form sorts them); fewer fields
    # hash as canonical.project_fairsharing would with fewer
    computed = E.EVIDENCE_FIELDS.index("computed_hash")
    configure(projection=canonical.FAIRSHARING_FIELDS[::-1])
    assert native.envelope(data, "inv-1", True, iso_to_us_opt, sha256)[2][0][computed] == ev[0][computed]
    configure(projection=("name", "doi"))
    record = base()["evidence"][0]["content"]
    want = canonical.sha256_hex(canonical.canonical_bytes({"name": record.get("name"), "doi": record.get("doi")}))
    assert native.envelope(data, "inv-1", True, iso_to_us_opt, sha256)[2][0][computed] == want
    configure(registered=canonical.REGISTERED[1:])  # dd-envelope-json-v1 no longer registered: declined
    assert native.envelope(with_(["evidence", 1, "canonicalisation"], "dd-envelope-json-v1"), "inv-1", True,
                           iso_to_us_opt, sha256) is None
    withheld = ACCEPTED["withheld"]
    assert native.envelope(withheld, "inv-1", True, iso_to_us_opt, sha256)[0][E.ENVELOPE_COLUMNS.index("withheld")] is True
    configure(withheld="https://example.org/other")
    assert native.envelope(withheld, "inv-1", True, iso_to_us_opt, sha256)[0][E.ENVELOPE_COLUMNS.index("withheld")] is False
