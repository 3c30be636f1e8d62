"""Hand-picked hostile runs that random generation reaches only rarely, checked SQL vs reference
in one archive: ingest once, lint once, verify once. Each case names the docs/rules.md point it pins."""

from __future__ import annotations

import json

import groundwork.ingest as ingest
from groundwork.checks import lint, verify
from groundwork.core.warehouse import connect
from property_support import disagreements, reference_lint, reference_verify, sql_lint_verdicts, sql_verify_verdicts
from reference import sources as refsrc
from strategies import RunFiles, dump_envelope, span_line, uuid7, write_archive, write_sources

TRACE = "0x" + "a" * 32


def sp(name, sid, parent, attrs=None, trace=TRACE, start=1, end=2):
    def t(us):
        return f"2026-01-01T00:00:00.{us:06d}Z"
    return span_line(name, trace, sid, parent, t(start), t(end), attrs or {})


def root(mode="retrieval", **attrs):
    return sp("invoke_agent", "0xroot", None, {"dd.grounding_mode": mode, "dd.input_hash": "h", **attrs}, start=0, end=100)


def retrieval(sid, parent="0xroot", s="a", h="b", start=10, end=20):
    return sp("retrieval", sid, parent, {"dd.source_id": s, "dd.content_hash": h}, start=start, end=end)


def chat(sid, parent="0xroot", start=50):
    return sp("chat", sid, parent, start=start, end=start + 1)


def env(mode="retrieval", **fields):
    return {"invocation_id": "inv", "grounding_mode": mode, "outcome": {"status": "succeeded"}, **fields}


CASES = {
    "6.2 step 2: non-descendance is by span id": ([root(), chat("0xc"), chat("0xc", parent=None)], env()),
    "6.2 step 2: the root's id on a parentless span": ([root(), sp("x", "0xroot", None)], env()),
    "6.7: children of duplicated spans once per copy, nested": (
        [root(), sp("x", "0xa", "0xroot"), sp("x", "0xa", "0xroot"), sp("y", "0xb", "0xa"), sp("y", "0xb", "0xa"),
         retrieval("0xr", "0xb"), chat("0xc0", start=5)], env()),
    "6.1 stack order and 6.3 G1 minimum end over nested retrievals": (
        [root(), sp("p", "0xp", "0xroot"), retrieval("0xr1", "0xp", end=30), chat("0xc1", start=25),
         retrieval("0xr2", end=24), chat("0xc2", "0xp", start=24)], env()),
    "C4: a copy of a span under itself hangs": ([root(), sp("x", "0xroot", "0xroot")], env()),
    "C4: unreachable cycle is harmless": ([root(), sp("x", "0xp", "0xq"), sp("x", "0xq", "0xp")], env("none")),
    "4.2 projection of mixed list items, non-string content_hash": (
        [root()], env(evidence=[{"source_id": 5, "canonicalisation": "json-sorted-utf8-v1", "content_hash": 5,
                                 "content": {"subjects": [{"b": 1}, {"a": "'"}, 2.0, None, True, "z"], "x": 1}}])),
    "6.2 step 7: falsy non-object content": (
        [root()], env(evidence=[{"source_id": "S", "content": False}, {"source_id": "T", "content": 0},
                                {"source_id": "U", "content": ""}, {"source_id": None, "content": []}])),
    "6.6: odd references": ([root()], env(payload={"schema_class": "C", "grounded_on": [
        {"source_id": "S", "content_hash": -0.0}, {"source_id": 10 ** 30, "content_hash": 1e16},
        {"a": {"b": "it's \"q\""}}, [1, [2]], None, True, "x\u2028\u200f\x85"]})),
    "6.5: grounded_on object, nested null, list payload": (
        [root()], env(payload=[{"grounded_on": {"source_id": "S"}}, {"k": {"grounded_on": None}}])),
    "6.2 step 4: non-string root mode": ([root(["retrieval"])], env()),
    "6.7: non-string invocation_id and input hash": (
        [root("none", **{"dd.input_hash": 1.5})], env("none", invocation_id=5,
                                                      evidence=[{"source_id": "input:5", "content_hash": "1.5"}])),
    "C3: delegation entries that are not objects are ignored": (
        [root("delegation")], env("delegation", delegations=[{"delegated_invocation_id": 5, "content_hash": 7}, "x", 3],
                                  evidence=[{"source_id": "invocation:5", "content_hash": "7"},
                                            {"source_id": "input:inv", "content_hash": "h"}])),
    "6.2 step 2: non-string span names": (
        [root(), sp(5, "0xn1", None), sp(None, "0xn2", None), sp(["chat"], "0xn3", None)], env()),
    "6.7: missing retrieval attributes match the string None": (
        [root(), retrieval("0xr", s=None, h=None)],
        env(payload={"schema_class": "C", "grounded_on": [{"source_id": "None", "content_hash": "None"}]},
            evidence=[{"source_id": "None"}])),
    "4.1 / K4: numbers in content": (
        [root()], env(evidence=[{"source_id": "S", "canonicalisation": "dd-json-document-v1", "content_hash": "x",
                                 "content": {"n": 10 ** 30, "f": 1.0, "z": -0.0, "e": 1e-7, "u": "\u2028é"}}])),
    "2.2: ids are case-sensitive": ([root(), sp("chat", "0xC1", "0xROOT")], env()),
    "K1: -00:00 and +23:59 offsets": (
        [root(), span_line("chat", TRACE, "0xc", "0xroot", "2026-01-01T00:00:00.000001-00:00",
                           "2026-01-01T00:00:00.000001+23:59", {})], env()),
    "K3: empty payload object": ([root()], env(payload={})),
    "C2: empty-object evidence": ([root("none")], env("none", evidence={})),
}
RAW = {  # (spans bytes, envelope bytes)
    "BOM in envelope.json": (json.dumps(root("none")).encode() + b"\n", b"\xef\xbb\xbf{}"),
    "envelope is a list": (json.dumps(root("none")).encode() + b"\n", b"[]"),
    "NaN mode": (json.dumps(root("none")).encode() + b"\n", b'{"grounding_mode": NaN}'),
    "repeated mode key (last wins)": (json.dumps(root("none")).encode() + b"\n",
                                      b'{"grounding_mode": "none", "grounding_mode": "retrieval"}'),
    "K5: vertical tab splits a line": (json.dumps(root()).encode() + b"\x0b" + json.dumps(chat("0xc")).encode(),
                                       b'{"grounding_mode": "retrieval"}'),
    "K5: \\x1c ends a line, \\x1f is blank": (json.dumps(root()).encode() + b"\x1c\x1f\n", b'{"grounding_mode": "retrieval"}'),
    "span line is null": (b"null\n", b'{"grounding_mode": "retrieval"}'),
    "empty spans file": (b"", b'{"grounding_mode": "none"}'),
}


def build_runs() -> list[RunFiles]:
    runs = []
    for i, (spans, envelope) in enumerate(CASES.values()):
        runs.append(RunFiles(uuid7(i), {"spans.jsonl": "".join(json.dumps(s) + "\n" for s in spans).encode(),
                                        "envelope.json": dump_envelope(envelope), "request.json": None}))
    for j, (spans, envelope) in enumerate(RAW.values(), start=len(runs)):
        runs.append(RunFiles(uuid7(j), {"spans.jsonl": spans, "envelope.json": envelope, "request.json": None}))
    return runs


def test_hand_picked_edges_agree_with_reference(tmp_path):
    runs = build_runs()
    names = dict(zip((r.name for r in runs), list(CASES) + list(RAW)))
    sources_yaml = write_sources(tmp_path / "sources", str_refs=True)
    copies = refsrc.load_sources(sources_yaml)
    con = connect(":memory:")
    try:
        ingest.ingest_archive(con, write_archive(runs, tmp_path / "runs"))
        linted = sql_lint_verdicts(con, lint.lint_warehouse(con).lint_id)
        verified = sql_verify_verdicts(verify.verify_warehouse(con, sources_yaml))
    finally:
        con.close()
    problems = disagreements(runs, {r.name: reference_lint(r) for r in runs}, linted)
    problems += disagreements(runs, {r.name: reference_verify(r, copies) for r in runs}, verified)
    assert not problems, "\n".join(f"[{names[p.split()[1]]}] {p[:1500]}" for p in problems)
