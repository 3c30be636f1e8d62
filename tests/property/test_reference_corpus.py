"""The reference linter and source check reproduce the workbench's own verdicts on every corpus
run, and the unit scenarios of docs/rules.md#upstream-tests — so the reference is a trustworthy oracle for the
property tests that hold the SQL implementation to it."""

from __future__ import annotations

import hashlib
import json

import pytest

from ingest_support import CORPUS
from reference import linter as ref
from reference import sources as refsrc
from reference.canon import content_hash

EXPECTED = [json.loads(line) for line in (CORPUS / "expected.jsonl").read_text(encoding="utf-8").splitlines()
            if line.strip()]


@pytest.fixture(scope="module")
def corpus_copies():
    return refsrc.load_sources(CORPUS / "sources.yaml")


def _ids(item):
    return f"{item['scenario']}:{item['invocation_id'][-6:]}"


def test_corpus_has_every_run():
    folders = {p.name for p in (CORPUS / "runs").iterdir() if p.is_dir()}
    assert len(EXPECTED) == 99
    assert folders == {e["invocation_id"] for e in EXPECTED}


@pytest.mark.parametrize("expected", EXPECTED, ids=_ids)
def test_reference_lint_matches_workbench(expected):
    run = CORPUS / "runs" / expected["invocation_id"]
    report = ref.lint_files(run / "spans.jsonl", run / "envelope.json")
    want = expected["lint"]
    assert report.violations == want["violations"]
    assert report.passed is want["passed"]
    assert report.mode == want["mode"]
    assert (report.retrieval_count, report.chat_count) == (want["retrieval_count"], want["chat_count"])
    assert ref.summary(report) == want["summary"]
    assert ref.summary(report) + "\n" == expected["grounding_txt"]
    assert (run / "grounding.txt").read_text(encoding="utf-8") == expected["grounding_txt"]


@pytest.mark.parametrize("expected", EXPECTED, ids=_ids)
def test_reference_sources_match_workbench(expected, corpus_copies):
    run = CORPUS / "runs" / expected["invocation_id"]
    envelope = json.loads((run / "envelope.json").read_text(encoding="utf-8"))
    report = refsrc.check(envelope, corpus_copies)
    want = expected["sources"]
    assert report.violations == want["violations"]
    assert report.unresolved == want["unresolved"]
    assert report.verified == want["verified"]
    assert report.passed is want["passed"]
    assert refsrc.summary(report) == want["summary"]
    assert refsrc.summary(report) + "\n" == expected["sources_txt"]


def test_withheld_envelopes_relint_differently_from_grounding_txt():
    """docs/rules.md#live-and-stored-verdicts: the stored (withheld) envelope has no
    payload/evidence; span-only rules still fire."""
    withheld = [e for e in EXPECTED if (CORPUS / "runs" / e["invocation_id"] / "envelope.withheld.json").exists()]
    assert len(withheld) == 47
    differs = 0
    for e in withheld:
        run = CORPUS / "runs" / e["invocation_id"]
        stored = json.loads((run / "envelope.withheld.json").read_text(encoding="utf-8"))
        report = ref.lint((run / "spans.jsonl").read_text(encoding="utf-8"), stored)
        span_only = [v for v in e["lint"]["violations"] if v[:2] in ("G1", "R1", "N1")]
        for v in span_only:
            assert v in report.violations
        differs += ref.summary(report) + "\n" != e["grounding_txt"]
        assert refsrc.summary(refsrc.check(stored, refsrc.Copies())) == "sources: 0 verified, 0 unresolved"
    assert differs > 0


# ------------------------------- the workbench's linter tests (docs/rules.md#upstream-tests)

INV = "01a06cdb-985f-7375-9aa2-37be29f0f2a8"
CHILD = "01a06cdb-985f-7375-9aa2-37be29f0f2a9"
H_A, H_B, H_C, H_IN = "a" * 64, "b" * 64, "c" * 64, "1" * 64
T0 = 1_800_000_000


def _iso(us: int) -> str:
    from datetime import datetime, timezone
    return datetime.fromtimestamp(T0 + us / 1_000_000, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def span(name, span_id, parent="root", start=0, end=None, trace="t", **attrs):
    return json.dumps({"name": name, "context": {"trace_id": "0x" + trace, "span_id": "0x" + span_id,
                                                 "trace_state": "[]"},
                       "kind": "SpanKind.INTERNAL", "parent_id": None if parent is None else "0x" + parent,
                       "start_time": _iso(start), "end_time": _iso(start + 5 if end is None else end),
                       "status": {"status_code": "UNSET"}, "attributes": attrs, "events": [], "links": []})


def root(mode, **extra):
    attrs = {"dd.grounding_mode": mode, "dd.input_hash": H_IN, **extra}
    return span("invoke_agent", "root", parent=None, start=0, end=100, **attrs)


def retrieval(sid, h, span_id="r1", start=10):
    return span("retrieval", span_id, start=start, **{"dd.source_id": sid, "dd.content_hash": h})


def chat(start=50, span_id="chat"):
    return span("chat", span_id, start=start)


def envelope(mode, payload=None, evidence=(), status=None, **extra):
    env = {"invocation_id": INV, "grounding_mode": mode,
           "outcome": {"status": status or ("succeeded" if payload else "abstained")},
           "payload": payload,
           "evidence": [{"source_id": s, "content_hash": h} for s, h in evidence]}
    env.update(extra)
    return env


def refs(*pairs):
    return [{"source_id": s, "content_hash": h} for s, h in pairs]


def run_lint(spans, env):
    return ref.lint("\n".join(spans) + "\n", env)


def test_81_payload_without_grounded_on():
    r = run_lint([root("retrieval"), retrieval("S", H_A)],
                 envelope("retrieval", {"schema_class": "Mystery", "items": [{"id": "X"}]}, [("S", H_A)]))
    assert not r.passed
    assert r.violations == [
        "G0: payload 'Mystery' lacks grounded_on; an ungroundable payload is a violation, not a pass",
        "G2: a succeeded retrieval-mode payload rests on nothing",
    ]


def test_81_payload_without_schema_class_and_empty_payload_k3():
    r = run_lint([root("retrieval"), retrieval("S", H_A)],
                 envelope("retrieval", {"grounded_on": refs(("S", H_A))}, [("S", H_A)]))
    assert r.violations == ["G0: payload lacks schema_class"]
    r = run_lint([root("retrieval"), retrieval("S", H_A)], envelope("retrieval", {}, [("S", H_A)], status="succeeded"))
    assert r.violations == [
        "G0: payload lacks schema_class",
        "G0: payload None lacks grounded_on; an ungroundable payload is a violation, not a pass",
        "G2: a succeeded retrieval-mode payload rests on nothing",
    ]


def test_81_envelope_mode_differs_from_root():
    r = run_lint([root("none")], envelope("input_only"))
    assert r.violations == ["G0: envelope declares grounding_mode 'input_only' but the root span carries 'none'"]


def test_81_unknown_and_missing_mode_drop_tree_violations():
    stray = span("chat", "x", parent=None)
    r = run_lint([root("none"), stray], envelope("telepathy"))
    assert r.violations == ["G0: envelope declares no valid grounding_mode ('telepathy')"]
    assert r.mode == "telepathy" and not r.passed
    env = envelope("none")
    del env["grounding_mode"]
    r = run_lint([root("none"), stray], env)
    assert r.mode is None and r.violations == ["G0: envelope declares no valid grounding_mode (None)"]
    assert ref.summary(r) == "grounding: FAILED [unknown mode]\n  - G0: envelope declares no valid grounding_mode (None)"
    for falsy in (0, False, ""):
        r = run_lint([root("none")], envelope(falsy))
        assert r.mode is None
    r = run_lint([root("none")], envelope(["none"]))
    assert r.mode == "['none']" and r.violations == ["G0: envelope declares no valid grounding_mode (['none'])"]


def test_81_exactly_one_root():
    r = run_lint([], envelope("none"))
    assert r.violations == ["G0: expected exactly one invoke_agent span, found 0"]
    assert ref.summary(r) == "grounding: FAILED [none]\n  - G0: expected exactly one invoke_agent span, found 0"
    r = run_lint([root("none"), root("none")], envelope(7))
    assert (r.mode, r.violations) == ("7", ["G0: expected exactly one invoke_agent span, found 2"])


def test_81_malformed_reference():
    r = run_lint([root("retrieval"), retrieval("S", H_A)],
                 envelope("retrieval", {"schema_class": "C", "grounded_on": [{"source_id": "S"}]}, [("S", H_A)]))
    assert r.violations == ["G0: malformed grounding reference {'source_id': 'S'}",
                            "G2: a succeeded retrieval-mode payload rests on nothing"]


def test_81_retrieval_pass_nested_refs():
    payload = {"schema_class": "C", "grounded_on": refs(("S", H_A)), "parts": [{"grounded_on": refs(("T", H_B))}]}
    r = run_lint([root("retrieval"), retrieval("S", H_A), retrieval("T", H_B, "r2"), chat()],
                 envelope("retrieval", payload, [("S", H_A), ("T", H_B)]))
    assert r.passed and (r.retrieval_count, r.chat_count) == (2, 1)
    assert ref.summary(r) == "grounding: passed [retrieval] (2 retrieval, 1 chat spans)"


def test_81_g1():
    r = run_lint([root("retrieval"), chat(start=5), retrieval("S", H_A)], envelope("retrieval"))
    assert r.violations == ["G1: chat span chat started before the first retrieval span ended"]
    r = run_lint([root("retrieval"), chat()], envelope("retrieval"))
    assert r.violations == ["G1: a chat span exists but no retrieval span does"]
    # strict: starting exactly when the earliest retrieval ends is fine (retrieval 10..15)
    r = run_lint([root("retrieval"), retrieval("S", H_A), chat(start=15)], envelope("retrieval"))
    assert r.passed


def test_81_g2_identity_and_hash():
    payload = {"schema_class": "C", "grounded_on": refs(("S", H_A), ("X", H_A))}
    r = run_lint([root("retrieval"), retrieval("S", H_A)], envelope("retrieval", payload, [("S", H_A)]))
    assert r.violations == ["G2: payload rests on 'X' (aaaaaaaaaaaa…) which was not retrieved in this invocation"]
    payload = {"schema_class": "C", "grounded_on": refs(("S", H_B))}
    r = run_lint([root("retrieval"), retrieval("S", H_A)], envelope("retrieval", payload, [("S", H_A)]))
    assert r.violations[0] == "G2: payload rests on 'S' (bbbbbbbbbbbb…) which was not retrieved in this invocation"


def test_81_g2_nothing_g3_g4():
    r = run_lint([root("retrieval"), retrieval("S", H_A)],
                 envelope("retrieval", {"schema_class": "C", "grounded_on": []}, [("S", H_A)]))
    assert r.violations == ["G2: a succeeded retrieval-mode payload rests on nothing"]
    payload = {"schema_class": "C", "grounded_on": refs(("S", H_A))}
    r = run_lint([root("retrieval"), retrieval("S", H_A)], envelope("retrieval", payload, [("S", H_A), ("Z", H_B)]))
    assert r.violations == ["G3: evidence 'Z' hash bbbbbbbbbbbb… not in trace"]
    r = run_lint([root("retrieval"), retrieval("S", H_A)], envelope("retrieval", payload, []))
    assert r.violations == ["G4: payload rests on 'S' (aaaaaaaaaaaa…) absent from evidence"]


@pytest.mark.parametrize("mode", ["retrieval", "input_only", "none", "delegation"])
def test_81_e1_in_every_mode(mode):
    record = {"fairsharing_id": "S", "name": "ISO 8601", "status": "ready"}
    good = content_hash("json-sorted-utf8-v1", record)
    projected = {"fairsharing_id": "S", "doi": None, "name": "ISO 8601", "abbreviation": None,
                 "record_type": None, "status": "ready", "description": None, "subjects": None, "domains": None}

    def lint_with(content, canon="json-sorted-utf8-v1"):
        env = {"invocation_id": INV, "grounding_mode": mode, "outcome": {},
               "evidence": [{"source_id": "S", "canonicalisation": canon, "content_hash": good, "content": content}]}
        return [v for v in run_lint([root(mode)], env).violations if v.startswith("E1")]

    assert lint_with(projected) == []
    assert lint_with(dict(projected, name="ISO 8602")) == [
        f"E1: evidence 'S' content does not hash to its content_hash ({good[:12]}…) under 'json-sorted-utf8-v1'"]
    assert lint_with(["S"]) == ["E1: evidence 'S' content is not an object"]
    assert lint_with(projected, "md5-of-vibes") == [
        "E1: evidence 'S': unknown canonicalisation 'md5-of-vibes'; registered: ['dd-envelope-json-v1', "
        "'dd-input-json-v1', 'dd-json-document-v1', 'json-sorted-utf8-v1']"]
    # K2: the name is str() of the raw value; the mismatch message uses the raw value
    assert lint_with(projected, ["dd-json-document-v1"])[0].startswith(
        "E1: evidence 'S': unknown canonicalisation \"['dd-json-document-v1']\"; registered")
    assert lint_with(projected, None)[0].startswith("E1: evidence 'S': unknown canonicalisation 'None';")


def test_81_e1_does_not_apply_without_content_and_spec_vectors():
    assert content_hash("dd-input-json-v1", {"schema_class": "Message", "message_text": "hello"}) == \
        "edb337c01d552ad81bc71730e9c27ab42a5562873de69e673479f7891ea60886"
    assert content_hash("json-sorted-utf8-v1", {"fairsharing_id": "FAIRsharing.b44s4", "name": "ISO 8601",
                                                "subjects": ["b", "a"]}) == \
        "e5c8f3c01ebf87d9af8f789e68ffb40c39343d398d877589f0c1c3836e79d36a"
    doc = json.loads('{"score": 1.0, "n": 1, "x": 0.00001, "y": 1e16, "z": 0.1, "t": true, "u": null, '
                     '"ctl": "\\u0001\\u007f\\u2028"}')
    assert content_hash("dd-json-document-v1", doc) == "0cbb4e1bc00955b0f2393af7a65aab7aacd03da0ccfe9966769da670f5a5aa8f"
    assert content_hash("dd-json-document-v1", {"name": "Café – ü", "k": "a\"b\\c\n"}) == \
        "75c39b315f699a057cb2b331c502c0f0bf46d8b468448327c8119e8a6b6b49ed"
    payload = {"schema_class": "C", "grounded_on": refs(("S", H_A))}
    r = run_lint([root("retrieval"), retrieval("S", H_A)], envelope("retrieval", payload, [("S", H_A)]))
    assert r.passed


def test_81_input_only_and_none():
    inp = ("input:" + INV, H_IN)
    payload = {"schema_class": "C", "grounded_on": refs(inp)}
    assert run_lint([root("input_only"), chat()], envelope("input_only", payload, [inp])).passed
    r = run_lint([root("input_only"), chat(), retrieval("S", H_A)], envelope("input_only", payload, [inp]))
    assert r.violations == ["R1: 1 retrieval span(s) in an agent that declared none"]
    r = run_lint([root("input_only")], envelope("input_only", {"schema_class": "C", "grounded_on": refs(("S", H_A))},
                                                [("S", H_A)]))
    assert r.violations == [
        f"R2: payload cites 'S' (aaaaaaaaaaaa…); an input-grounded agent may cite only 'input:{INV}' (111111111111…)",
        f"R2: evidence cites 'S' (aaaaaaaaaaaa…); an input-grounded agent may cite only 'input:{INV}' (111111111111…)"]
    r = run_lint([root("input_only")], envelope("input_only", {"schema_class": "C", "grounded_on": refs(("input:" + INV, H_B))}))
    assert [v[:2] for v in r.violations] == ["R2", "R3"]
    assert run_lint([root("none")], envelope("none", payload, [inp])).passed
    r = run_lint([root("none"), chat()], envelope("none", payload, [inp]))
    assert r.violations == ["N1: 1 chat span(s) in an agent that declared no model call"]


def test_81_delegation():
    inp, child = ("input:" + INV, H_IN), ("invocation:" + CHILD, H_C)
    dele = [{"delegated_invocation_id": CHILD, "delegated_agent_id": "x", "delegated_agent_version": "0",
             "delegated_status": "succeeded", "content_hash": H_C}]
    payload = {"schema_class": "Reply", "grounded_on": refs(inp, child)}
    assert run_lint([root("delegation"), chat()], envelope("delegation", payload, [inp, child], delegations=dele)).passed
    bad = ("invocation:" + CHILD[:-1] + "0", H_C)
    r = run_lint([root("delegation")], envelope("delegation", {"schema_class": "Reply", "grounded_on": refs(inp, bad)},
                                                [inp, bad], delegations=dele))
    assert [v[:2] for v in r.violations] == ["D1", "D2"]
    r = run_lint([root("delegation"), retrieval("S", H_A)], envelope("delegation", payload, [inp, child], delegations=dele))
    assert r.violations == ["R1: 1 retrieval span(s) in an agent that declared none"]
    r = run_lint([root("delegation")], envelope("delegation", {"schema_class": "Reply", "grounded_on": refs(child)},
                                                [child], delegations=dele))
    assert r.violations == ["D3: a succeeded delegation envelope does not cite its input in evidence"]
    r = run_lint([root("delegation")], envelope("delegation", {"schema_class": "Reply", "grounded_on": refs(child)},
                                                [inp], delegations=dele))
    assert r.violations == ["G4: payload rests on 'invocation:01a06cdb-985f-7375-9aa2-37be29f0f2a9' (cccccccccccc…) absent from evidence"]
    # C3: delegations as a string: iterated as characters, only the input is citable
    r = run_lint([root("delegation")], envelope("delegation", payload, [inp, child], delegations="abc"))
    assert [v[:2] for v in r.violations] == ["D1", "D2"]


def test_81_summary_names_the_mode():
    r = run_lint([root("none")], envelope("none"))
    assert ref.summary(r).startswith("grounding: passed [none]")


# ------------------------------------------------------------------ section 6.7 / 10 edge cases


def test_tree_checks_foreign_trace_parentless_conductor_keys():
    spans = [root("none"),
             span("chat", "c1", trace="other"),
             span("policy_gate", "p1", parent=None),
             span("chat", "c2", **{"dd.outcome": "x", "dd.grounding_mode": "none"})]
    r = run_lint(spans, envelope("none"))
    assert r.violations == [
        "G0: span 'chat' (c1) is in trace other, not the invocation's trace t",
        "G0: span 'policy_gate' (p1) does not descend from invoke_agent",
        "G0: span 'chat' (c2) sets dd.grounding_mode, dd.outcome, which only the conductor's invoke_agent span may carry",
        "N1: 2 chat span(s) in an agent that declared no model call",  # c1's parent is in the tree
    ]


def test_duplicates_counted_per_copy_and_nested_order():
    # root -> a (twice) -> r ; the child of a duplicated span is reached once per copy
    spans = [root("retrieval"), span("x", "a"), span("x", "a"),
             span("retrieval", "r", parent="a", start=20, **{"dd.source_id": "S", "dd.content_hash": H_A}),
             chat(start=1, span_id="c0")]
    r = run_lint(spans, envelope("retrieval"))
    assert r.retrieval_count == 2 and r.chat_count == 1
    # stack order: root pops -> [a, a, c0]; c0 popped first, then a (its child r), then a again
    spans = [root("retrieval"), span("chat", "c1", start=1), span("x", "n"),
             span("chat", "c2", parent="n", start=2), span("chat", "c3", start=3),
             retrieval("S", H_A, start=30)]
    r = run_lint(spans, envelope("retrieval"))
    assert r.violations == ["G1: chat span c1 started before the first retrieval span ended",
                            "G1: chat span c3 started before the first retrieval span ended",
                            "G1: chat span c2 started before the first retrieval span ended"]


def test_cycles_are_unlintable_only_when_traversed():
    looping = [root("none", ), span("x", "a"), span("x", "b", parent="a"), span("x", "a", parent="b")]
    with pytest.raises(ref.Unlintable, match="cycle"):
        run_lint(looping, envelope("none"))
    with pytest.raises(ref.Unlintable, match="cycle"):
        run_lint(looping, envelope("telepathy"))
    # C4: root whose parent_id names one of its descendants
    rooted = [span("invoke_agent", "root", parent="a", **{"dd.grounding_mode": "none"}), span("x", "a")]
    with pytest.raises(ref.Unlintable):
        run_lint(rooted, envelope("none"))
    # two roots: no traversal, no hang
    r = run_lint(looping + [root("none")], envelope("none"))
    assert r.violations == ["G0: expected exactly one invoke_agent span, found 2"]
    # a cycle not reachable from the root is harmless
    r = run_lint([root("none"), span("x", "p", parent="q"), span("x", "q", parent="p")], envelope("none"))
    assert r.violations == ["G0: span 'x' (p) does not descend from invoke_agent",
                            "G0: span 'x' (q) does not descend from invoke_agent"]


def test_falsy_parent_times_with_offsets_and_line_splitting():
    doc = json.loads(span("policy_gate", "p"))
    doc["parent_id"] = 0
    r = ref.lint(root("none") + "\r\n  \n\x1f\n" + json.dumps(doc) + "\r\n", envelope("none"))
    assert r.violations == ["G0: span 'policy_gate' (p) does not descend from invoke_agent"]
    doc["parent_id"] = 99
    with pytest.raises(ref.Unlintable):
        ref.lint(root("none") + "\n" + json.dumps(doc), envelope("none"))
    # K1: a +05:30 offset is converted to UTC before G1 compares
    c = json.loads(chat())
    c["start_time"] = "2027-01-15T13:30:00.000010+05:30"  # = 08:00:00.000010Z
    rt = json.loads(retrieval("S", H_A))
    rt["end_time"] = "2027-01-15T08:00:00.000010Z"
    text = "\n".join([root("retrieval"), json.dumps(rt), json.dumps(c)])
    assert ref.lint(text, envelope("retrieval")).passed
    c["start_time"] = "2027-01-15T13:30:00.000009+05:30"
    text = "\n".join([root("retrieval"), json.dumps(rt), json.dumps(c)])
    assert ref.lint(text, envelope("retrieval")).violations == [
        "G1: chat span chat started before the first retrieval span ended"]
    c["start_time"] = "2027-01-15T08:00:00.000009"
    with pytest.raises(ref.Unlintable, match="offset"):
        ref.lint("\n".join([root("retrieval"), json.dumps(c)]), envelope("retrieval"))
    # K5: a raw U+2028 splits a line
    raw = json.dumps(json.loads(chat()) | {"name": "ch\u2028at"}, ensure_ascii=False)
    with pytest.raises(ref.Unlintable, match="invalid JSON"):
        ref.lint(root("none") + "\n" + raw, envelope("none"))


def test_crashing_inputs_are_unlintable():
    base = [root("none")]
    for env in ({"grounding_mode": "none", "evidence": ["x"]}, {"grounding_mode": "none", "evidence": "xy"},
                {"grounding_mode": "none", "evidence": {"a": 1}}, {"grounding_mode": "none", "outcome": "ok"},
                ["not", "an", "envelope"]):
        with pytest.raises(ref.Unlintable):
            run_lint(base, env)
    line = json.loads(root("none"))
    del line["context"]["span_id"]
    with pytest.raises(ref.Unlintable, match="span_id"):
        ref.lint(json.dumps(line), envelope("none"))
    with pytest.raises(ref.Unlintable):
        ref.read_envelope_bytes(b"\xef\xbb\xbf{}")
    # C2: falsy non-list evidence is no evidence
    r = run_lint(base, {"invocation_id": INV, "grounding_mode": "none", "outcome": {"status": "succeeded"},
                        "evidence": ""})
    assert r.violations == ["R3: a succeeded input-grounded envelope cites no evidence"]


def test_non_string_attributes_and_reprs():
    spans = [root(5), retrieval(5, True)]
    payload = {"schema_class": "C", "grounded_on": [{"source_id": "5", "content_hash": "True"},
                                                    {"source_id": "it's", "content_hash": 1},
                                                    "x\u2028y\u200f\x85"]}
    r = run_lint(spans, envelope("retrieval", payload, [("5", "True")]))
    assert r.violations == [
        "G0: envelope declares grounding_mode 'retrieval' but the root span carries 5",
        "G0: malformed grounding reference {'source_id': \"it's\", 'content_hash': 1}",
        "G0: malformed grounding reference 'x\\u2028y\\u200f\\x85'",
    ]


# ------------------------- the workbench's source check tests (docs/rules.md#upstream-tests)

SOURCE_A = {"source_id": "src:a", "text": "Alpha."}


@pytest.fixture()
def test_records(tmp_path):
    data = (json.dumps(SOURCE_A) + "\n").encode()
    (tmp_path / "records.jsonl").write_bytes(data)
    cfg = tmp_path / "sources.yaml"
    cfg.write_text("sources:\n  - snapshot_refs: ['test:records']\n    path: records.jsonl\n"
                   f"    id_field: source_id\n    sha256: {hashlib.sha256(data).hexdigest()}\n")
    return cfg


def _ev(doc, ref="test:records", sid=None):
    return {"source_id": sid or doc["source_id"], "snapshot_ref": ref, "hash_algorithm": "sha256",
            "canonicalisation": "dd-json-document-v1", "content_hash": content_hash("dd-json-document-v1", doc),
            "content": doc}


def test_85_pins_and_relative_paths(test_records, tmp_path):
    copies = refsrc.load_sources(test_records)
    assert copies.by_ref["test:records"].records["src:a"] == SOURCE_A
    bad = tmp_path / "bad.yaml"
    bad.write_text(test_records.read_text().replace(hashlib.sha256((json.dumps(SOURCE_A) + "\n").encode()).hexdigest(),
                                                    "'" + "0" * 64 + "'"))
    with pytest.raises(refsrc.ConfigError, match="has sha256 b793a7c4e1a0.*, not the pinned 0{64}$"):
        refsrc.load_sources(bad)


def test_85_config_error_texts(tmp_path):
    cases = {"": "expected a top-level 'sources' list", "sources: 3\n": "expected a top-level 'sources' list",
             "sources:\n  - path: x\n": "each source needs snapshot_refs, path, id_field and sha256",
             "sources: [1]\n": "each source needs snapshot_refs, path, id_field and sha256"}
    for i, (text, message) in enumerate(cases.items()):
        cfg = tmp_path / f"c{i}.yaml"
        cfg.write_text(text)
        with pytest.raises(refsrc.ConfigError) as info:
            refsrc.load_sources(cfg)
        assert str(info.value) == f"{cfg}: {message}"
    missing = tmp_path / "m.yaml"
    missing.write_text("sources:\n  - {snapshot_refs: [a], path: nope.jsonl, id_field: id, sha256: x}\n")
    with pytest.raises(refsrc.ConfigError, match=r"^source file .*nope.jsonl: \[Errno 2\]"):
        refsrc.load_sources(missing)
    (tmp_path / "r.jsonl").write_text('{"id": 1}\n')
    pin = hashlib.sha256(b'{"id": 1}\n').hexdigest()
    norec = tmp_path / "n.yaml"
    norec.write_text(f"sources:\n  - {{snapshot_refs: [a], path: r.jsonl, id_field: id, sha256: {pin}}}\n")
    with pytest.raises(refsrc.ConfigError) as info:
        refsrc.load_sources(norec)
    assert str(info.value) == f"source file {tmp_path / 'r.jsonl'}: a record has no string 'id'"
    (tmp_path / "s.jsonl").write_text('{"id": "x"}\n')
    pin = hashlib.sha256(b'{"id": "x"}\n').hexdigest()
    twice = tmp_path / "t.yaml"
    twice.write_text(f"sources:\n  - {{snapshot_refs: [a], path: s.jsonl, id_field: id, sha256: {pin}}}\n"
                     f"  - {{snapshot_refs: [b, a], path: s.jsonl, id_field: id, sha256: {pin}}}\n")
    with pytest.raises(refsrc.ConfigError) as info:
        refsrc.load_sources(twice)
    assert str(info.value) == f"{twice}: snapshot_ref 'a' is listed twice"


def test_85_verified_unresolved_s1_s2(test_records):
    copies = refsrc.load_sources(test_records)
    r = refsrc.check({"grounding_mode": "retrieval", "evidence": [_ev(SOURCE_A)]}, copies)
    assert (r.passed, r.verified, r.unresolved) == (True, 1, [])
    assert refsrc.summary(r) == "sources: 1 verified, 0 unresolved"
    r = refsrc.check({"grounding_mode": "retrieval", "evidence": [_ev(SOURCE_A, ref="live")]}, copies)
    assert (r.passed, r.verified, r.unresolved) == (True, 0, ["src:a (live)"])
    assert refsrc.summary(r) == "sources: 0 verified, 1 unresolved (no independent copy: src:a (live))"
    r = refsrc.check({"grounding_mode": "retrieval", "evidence": [_ev({"source_id": "src:invented", "text": "x"})]}, copies)
    assert r.violations == ["S1: evidence cites 'src:invented', which 'test:records' does not hold"]
    assert refsrc.summary(r) == ("sources: 0 verified, 0 unresolved; FAILED\n"
                                 "  - S1: evidence cites 'src:invented', which 'test:records' does not hold")
    altered = dict(SOURCE_A, text="Altered.")
    r = refsrc.check({"grounding_mode": "retrieval", "evidence": [_ev(altered)]}, copies)
    good = content_hash("dd-json-document-v1", SOURCE_A)
    bad = content_hash("dd-json-document-v1", altered)
    assert r.violations == [f"S2: evidence 'src:a' hash {bad[:12]}… does not match 'test:records', "
                            f"where the record hashes to {good[:12]}…"]


def test_85_input_and_delegation_evidence(test_records):
    copies = refsrc.load_sources(test_records)
    evidence = [{"source_id": "input:x", "content_hash": H_A}, {"source_id": "invocation:y", "content_hash": H_B}]
    for mode in ("input_only", "none", "delegation"):
        r = refsrc.check({"grounding_mode": mode, "evidence": evidence}, copies)
        assert (r.passed, r.verified, r.unresolved) == (True, 0, [])
    r = refsrc.check({"grounding_mode": "retrieval", "evidence": evidence}, copies)
    assert r.unresolved == ["input:x (None)", "invocation:y (None)"]
    with pytest.raises(refsrc.Uncheckable):
        refsrc.check({"grounding_mode": ["none"], "evidence": []}, copies)  # C5
    r = refsrc.check({"grounding_mode": "none", "evidence": [_ev(SOURCE_A, "test:records") | {"canonicalisation": 3}]}, copies)
    assert r.violations == ["S2: evidence 'src:a': unknown canonicalisation '3'; registered: ['dd-envelope-json-v1', "
                            "'dd-input-json-v1', 'dd-json-document-v1', 'json-sorted-utf8-v1']"]
