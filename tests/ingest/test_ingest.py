"""Ingest of real workbench runs: what the rules read must be exactly what the workbench reads."""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest

from groundwork.ingest import load_single

from ingest_support import (CORPUS_RUNS, EXAMPLE_RUNS, archive, envelope, expected, fresh_con, ingest, issues,
                            rows, run_row, scenario, write_envelope)


@pytest.fixture(scope="module")
def corpus():
    con, result = ingest(CORPUS_RUNS)
    return con, result


def test_every_corpus_run_loads_cleanly(corpus):
    con, result = corpus
    assert (result.folders_seen, result.runs_loaded, result.runs_rejected) == (99, 99, 0)
    assert result.issues_by_kind == {}
    assert result.exit_code == 0
    assert con.execute("SELECT count(*) FROM runs WHERE lintable AND verifiable AND NOT missing").fetchall()[0][0] == 99


def test_run_columns_match_the_corpus_verdict_records(corpus):
    con, _ = corpus
    exp = expected()
    for r in rows(con, "SELECT invocation_id, grounding_mode, outcome_status, recorded_grounding, recorded_sources, "
                       "envelope_invocation_id FROM runs"):
        e = exp[r["invocation_id"]]
        assert r["grounding_mode"] == e["mode"], r
        assert r["outcome_status"] == e["outcome_status"]
        assert r["recorded_grounding"] == e["grounding_txt"]
        assert r["recorded_sources"] == e["sources_txt"]
        assert r["envelope_invocation_id"] == r["invocation_id"]


def test_input_hash_of_request_json_equals_the_conductors_root_span_hash(corpus):
    # docs/rules.md#input-hash: an upstream test asserts hash(request.json input) == the root span's dd.input_hash
    con, _ = corpus
    exp = expected()
    pairs = con.execute("SELECT r.invocation_id, r.input_hash, s.dd_input_hash FROM runs r JOIN spans s "
                        "ON s.invocation_id = r.invocation_id AND s.name = 'invoke_agent'").fetchall()
    conductor = [(inv, a, b) for inv, a, b in pairs if exp[inv]["origin"] != "tampered-copy"
                 and "two-invoke_agent" not in exp[inv]["scenario"] and "wrong-input-hash" not in exp[inv]["scenario"]]
    assert len(conductor) > 70
    assert all(a == b for _, a, b in conductor), [c for c in conductor if c[1] != c[2]]


def test_delegation_content_hash_is_the_childs_stored_envelope_hash(corpus):
    # docs/rules.md#envelope-hash: upstream asserts hash(parsed child envelope.json) == delegations[0].content_hash
    con, _ = corpus
    parent = scenario("pass/delegation/three-children-and-chat")
    got = con.execute("SELECT d.ord, d.content_hash = c.envelope_hash, d.delegated_status = c.outcome_status "
                      "FROM delegations d JOIN runs c ON c.invocation_id = d.delegated_invocation_id "
                      "WHERE d.invocation_id = ? ORDER BY d.ord", [parent]).fetchall()
    assert got == [(0, True, True), (1, True, True), (2, True, True)]


def test_evidence_hash_recomputed_under_its_canonicalisation(corpus):
    con, _ = corpus
    exp = expected()
    ev = rows(con, "SELECT invocation_id, source_id, content_hash, computed_hash, canonical_error, content_type "
                   "FROM evidence WHERE content_type IS NOT NULL")
    assert ev
    for e in ev:
        codes = exp[e["invocation_id"]]["lint"]["codes"]
        if e["content_type"] != "object":
            assert e["computed_hash"] is None and e["canonical_error"] is None
        elif "E1" not in codes:
            assert e["computed_hash"] == e["content_hash"], e
    unknown = scenario("violation/E1/unknown-canonicalisation")
    (err,) = con.execute("SELECT canonical_error FROM evidence WHERE invocation_id = ? AND canonical_error IS NOT NULL",
                         [unknown]).fetchall()[0]
    assert err.startswith("unknown canonicalisation ") and err.endswith(
        "; registered: ['dd-envelope-json-v1', 'dd-input-json-v1', 'dd-json-document-v1', 'json-sorted-utf8-v1']")
    wire = scenario("wire/E1/integer-in-evidence-content-becomes-float-over-a2a")
    assert con.execute("SELECT bool_or(computed_hash <> content_hash) FROM evidence WHERE invocation_id = ?",
                       [wire]).fetchall()[0][0] is True


def test_spans_are_read_as_the_workbench_reads_them(corpus):
    con, _ = corpus
    inv = scenario("pass/retrieval/two-sources-and-chat")
    lines = [json.loads(x) for x in (CORPUS_RUNS / inv / "spans.jsonl").read_text().splitlines()]
    got = rows(con, "SELECT * FROM spans WHERE invocation_id = ? ORDER BY ord", [inv])
    assert [g["line_no"] for g in got] == list(range(1, len(lines) + 1))
    for g, line in zip(got, lines):
        assert g["name"] == line["name"]
        assert g["span_id"] == line["context"]["span_id"][2:] and not g["span_id"].startswith("0x")
        assert g["trace_id"] == line["context"]["trace_id"][2:]
        assert g["parent_id"] == (line["parent_id"][2:] if line["parent_id"] else None)
        assert g["start_time"].isoformat(timespec="microseconds") + "Z" == line["start_time"]
        assert g["end_time"].isoformat(timespec="microseconds") + "Z" == line["end_time"]
        assert g["dd_operation"] == line["attributes"].get("dd.operation")
        assert json.loads(g["attributes"]) == line["attributes"]
        assert g["source_format"] == "sdk"
    retrievals = [g for g in got if g["name"] == "retrieval"]
    assert len(retrievals) == expected()[inv]["lint"]["retrieval_count"]


def test_payload_refs_cover_nested_malformed_and_non_list_values(corpus):
    con, _ = corpus
    nested = scenario("tampered/G2/nested-grounded_on-not-retrieved")
    refs = con.execute("SELECT ord, path, kind FROM payload_refs WHERE invocation_id = ? ORDER BY ord", [nested]).fetchall()
    assert any("." in p[len("$."):] or "[" in p for _, p, _ in refs)
    assert [o for o, _, _ in refs] == list(range(len(refs)))
    malformed = scenario("tampered/G0/malformed-grounded_on-entry")
    got = con.execute("SELECT path, kind, value_json FROM payload_refs WHERE invocation_id = ? AND kind <> 'ref'",
                      [malformed]).fetchall()
    assert got == [("$.grounded_on[1]", "malformed", '{"source_id": "src:a"}')]
    not_list = scenario("tampered/G0/grounded_on-not-a-list")
    got = con.execute("SELECT path, kind FROM payload_refs WHERE invocation_id = ?", [not_list]).fetchall()
    assert got == [("$.grounded_on", "not_list")]


def test_run_files_account_for_every_file(corpus):
    con, _ = corpus
    on_disk = sorted((p.parent.name, p.name, hashlib.sha256(p.read_bytes()).hexdigest())
                     for p in CORPUS_RUNS.glob("*/*") if p.is_file())
    got = sorted(con.execute("SELECT invocation_id, file_name, sha256 FROM run_files").fetchall())
    assert got == on_disk


def test_index_lines_and_hashes(corpus):
    con, _ = corpus
    lines = [x for x in (CORPUS_RUNS / "invocations.jsonl").read_text().splitlines() if x.strip()]
    got = con.execute("SELECT line_no, invocation_id, envelope_hash FROM invocation_index ORDER BY line_no").fetchall()
    assert [g[1] for g in got] == [json.loads(x)["invocation_id"] for x in lines]
    # the index holds the stored documents: for runs not withheld they equal envelope.json
    same = con.execute("SELECT count(*) FROM invocation_index i JOIN runs r USING (invocation_id) "
                       "WHERE i.envelope_hash = r.envelope_hash").fetchall()[0][0]
    assert same == sum(1 for e in expected().values() if not e["withheld_by_conductor"] and e["origin"] != "tampered-copy")


def test_example_archive_in_real_store_form(tmp_path):
    runs = tmp_path / "runs"
    shutil.copytree(EXAMPLE_RUNS, runs)
    con, result = ingest(runs)
    assert (result.runs_loaded, result.runs_rejected, result.issues_by_kind) == (99, 0, {})
    exp = expected()
    withheld = [inv for inv, e in exp.items() if e["withheld_by_conductor"]]
    assert withheld
    for inv in withheld:
        r = run_row(con, inv)
        assert r["withheld"] is (exp[inv]["stored_problem_type"] ==
                                 "https://w3id.org/data-director/problems/grounding-violation")
        assert r["outcome_status"] == "failed" and r["evidence_count"] == 0
        assert r["payload_type"] is None
        assert r["recorded_grounding"] == exp[inv]["grounding_txt"]
    # in a real store the index line and envelope.json are the same document (docs/rules.md#run-folder)
    mismatched = con.execute("SELECT count(*) FROM invocation_index i JOIN runs r USING (invocation_id) "
                             "WHERE i.envelope_hash <> r.envelope_hash").fetchall()[0][0]
    assert mismatched == 0
    unindexed = {i for (i,) in con.execute("SELECT invocation_id FROM runs WHERE invocation_id NOT IN "
                                           "(SELECT invocation_id FROM invocation_index)").fetchall()}
    assert unindexed == {inv for inv, e in exp.items() if e["origin"] == "tampered-copy"}


def test_str_forms_and_raw_json_of_odd_values(tmp_path):
    runs, (inv,) = archive(tmp_path, "pass/retrieval/one-source")
    env = envelope(runs / inv)
    env["grounding_mode"] = 0
    env["evidence"] = [
        {"source_id": 5, "content_hash": None, "canonicalisation": ["dd-json-document-v1"], "content": {"a": 1}},
        {"source_id": True, "canonicalisation": "dd-json-document-v1", "content": [1]},
        {"source_id": 1.0, "content_hash": "x", "snapshot_ref": None},
    ]
    env["delegations"] = "abc"
    write_envelope(runs / inv, env)
    con, _ = ingest(runs)
    r = run_row(con, inv)
    assert (r["grounding_mode"], r["grounding_mode_json"], r["grounding_mode_truthy"]) == ("0", "0", False)
    assert (r["evidence_count"], r["delegation_count"], r["lintable"], r["verifiable"]) == (3, 0, True, True)
    got = con.execute("SELECT source_id, source_id_json, content_hash, canonicalisation, canonicalisation_json, "
                      "snapshot_ref, content_type, computed_hash, canonical_error FROM evidence "
                      "WHERE invocation_id = ? ORDER BY ord", [inv]).fetchall()
    assert got == [
        ("5", "5", "None", "['dd-json-document-v1']", '["dd-json-document-v1"]', "None", "object", None,
         "unknown canonicalisation \"['dd-json-document-v1']\"; registered: ['dd-envelope-json-v1', "
         "'dd-input-json-v1', 'dd-json-document-v1', 'json-sorted-utf8-v1']"),
        ("True", "true", "None", "dd-json-document-v1", '"dd-json-document-v1"', "None", "array", None, None),
        ("1.0", "1.0", "x", "None", "null", "None", None, None, None),
    ]
    assert con.execute("SELECT count(*) FROM delegations").fetchall()[0][0] == 0


def test_spec_test_vectors_as_evidence_content(tmp_path):
    # docs/rules.md#test-vectors: hashes computed by the spec authors, including float/int forms (K4)
    runs, (inv,) = archive(tmp_path, "pass/retrieval/one-source")
    text = (runs / inv / "envelope.json").read_text()
    env = json.loads(text)
    env["evidence"] = [
        {"source_id": "a", "canonicalisation": "dd-json-document-v1", "content_hash": "x",
         "content": {"source_id": "src:a", "text": "Alpha."}},
        {"source_id": "b", "canonicalisation": "json-sorted-utf8-v1", "content_hash": "x",
         "content": {"fairsharing_id": "FAIRsharing.b44s4", "name": "ISO 8601", "subjects": ["b", "a"]}},
        {"source_id": "c", "canonicalisation": "dd-json-document-v1", "content_hash": "x", "content": "VECTOR"},
    ]
    body = json.dumps(env, indent=2).replace(
        '"VECTOR"', '{"score": 1.0, "n": 1, "x": 0.00001, "y": 1e16, "z": 0.1, "t": true, "u": null, '
                    '"ctl": "\\u0001\\u007f\\u2028"}')
    (runs / inv / "envelope.json").write_text(body)
    con, _ = ingest(runs)
    got = [h for (h,) in con.execute("SELECT computed_hash FROM evidence WHERE invocation_id = ? ORDER BY ord", [inv]).fetchall()]
    assert got == ["d23eb297bcac927f3ba353e9449abae1f593a18a9a64c8cd59c86838f91bd36f",
                   "e5c8f3c01ebf87d9af8f789e68ffb40c39343d398d877589f0c1c3836e79d36a",
                   "0cbb4e1bc00955b0f2393af7a65aab7aacd03da0ccfe9966769da670f5a5aa8f"]


def test_numbers_are_hashed_as_python_parses_them(tmp_path):
    # K4: -0 -> 0, 0.5E1 -> 5.0, 1E+16 -> 1e+16, 30-digit integers and 2^63 kept exactly
    runs, (inv,) = archive(tmp_path, "pass/retrieval/one-source")
    env = envelope(runs / inv)
    env["evidence"] = [{"source_id": "n", "canonicalisation": "dd-json-document-v1", "content_hash": "x", "content": "N"}]
    source = '{"a": -0, "b": -0.0, "c": 0.5E1, "d": 1E+16, "e": 123456789012345678901234567890, "f": 9223372036854775808, "g": 2024.0, "h": 1E-5}'
    (runs / inv / "envelope.json").write_text(json.dumps(env, indent=2).replace('"N"', source))
    con, _ = ingest(runs)
    (computed, content) = con.execute("SELECT computed_hash, content_json FROM evidence WHERE invocation_id = ?", [inv]).fetchall()[0]
    python = json.dumps(json.loads(source), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert python == '{"a":0,"b":-0.0,"c":5.0,"d":1e+16,"e":123456789012345678901234567890,"f":9223372036854775808,"g":2024.0,"h":1e-05}'
    assert computed == hashlib.sha256(python.encode()).hexdigest()


def test_load_single_pair_from_anywhere(tmp_path):
    inv = scenario("pass/none/record")
    spans = tmp_path / "a.jsonl"
    env = tmp_path / "b.json"
    shutil.copy(CORPUS_RUNS / inv / "spans.jsonl", spans)
    shutil.copy(CORPUS_RUNS / inv / "envelope.json", env)
    con = fresh_con()
    key = load_single(con, spans, env)
    assert key == inv
    r = run_row(con, inv)
    n_spans = len(spans.read_text().splitlines())
    assert (r["lintable"], r["span_count"], r["recorded_grounding"], r["input_hash"]) == (True, n_spans, None, None)
    assert issues(con) == []
    # loading again replaces, never duplicates
    load_single(con, spans, env)
    assert con.execute("SELECT count(*) FROM spans").fetchall()[0][0] == n_spans
    # a broken pair is loaded as unlintable, with the given paths in the issues
    spans.write_text('{"name": "invoke_agent"')  # cut off: no final newline
    key = load_single(con, spans, env)
    assert run_row(con, key)["lintable"] is False
    assert issues(con, key) == [("truncated", str(spans), 1, "unlintable")]


def test_class_schemas_are_loaded_with_their_recomputed_digest(tmp_path):
    runs, _ = archive(tmp_path, "pass/retrieval/one-source")
    (runs / "schemas").mkdir()
    schema = {"title": "Greeting", "type": "object", "properties": {"greeting_text": {"type": "string"}}}
    digest = hashlib.sha256(json.dumps(schema, sort_keys=True, separators=(",", ":"),
                                       ensure_ascii=False).encode()).hexdigest()
    (runs / "schemas" / f"{digest}.json").write_text(json.dumps(schema, indent=2))
    wrong = "0" * 64
    (runs / "schemas" / f"{wrong}.json").write_text(json.dumps(schema, indent=2))
    (runs / "schemas" / "README").write_text("not a schema")
    con, _ = ingest(runs)
    got = con.execute("SELECT digest, computed_digest = digest FROM class_schemas ORDER BY digest").fetchall()
    assert got == sorted([(digest, True), (wrong, False)])
    assert issues(con) == [("unexpected-entry", "schemas/README", None, "none")]
    assert json.loads(con.execute("SELECT schema_json FROM class_schemas WHERE digest = ?", [digest]).fetchall()[0][0]) == schema
