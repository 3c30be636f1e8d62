"""`groundwork verify`: the source check (S1/S2/unresolved) against the workbench's own verdicts.

Expected texts come from the corpus (expected.jsonl `sources`/`sources_txt`, written by the
workbench) and from the docs/rules.md#upstream-tests scenarios; none is computed by groundwork.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import groundwork.ingest as ingest
from groundwork.checks.verify import verify_warehouse
from groundwork.core.warehouse import connect
from cli_support import run_cli

CORPUS = Path(__file__).parent.parent / "fixtures" / "corpus"
SOURCES = CORPUS / "sources.yaml"
EXPECTED = {d["invocation_id"]: d for d in map(json.loads, (CORPUS / "expected.jsonl").read_text("utf-8").splitlines())}
RECORD_A = {"source_id": "src:a", "text": "Alpha."}
HASH_A = "d23eb297bcac927f3ba353e9449abae1f593a18a9a64c8cd59c86838f91bd36f"  # docs/rules.md#test-vectors



@pytest.fixture(scope="module")
def corpus_warehouse(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("wh") / "corpus.duckdb"
    con = connect(path)
    ingest.ingest_archive(con, CORPUS / "runs", workers=0)
    con.close()
    return path


@pytest.fixture()
def warehouse_copy(corpus_warehouse, tmp_path) -> Path:
    path = tmp_path / "w.duckdb"
    shutil.copy(corpus_warehouse, path)
    return path


# ------------------------------------------------------------------------------------------
# Corpus fidelity
# ------------------------------------------------------------------------------------------

def test_every_corpus_run_matches_the_workbench_verdict(warehouse_copy):
    con = connect(warehouse_copy)
    result = verify_warehouse(con, SOURCES)
    got = {r.invocation_id: r for r in result.runs}
    assert set(got) == set(EXPECTED)
    for inv, exp in EXPECTED.items():
        r, s = got[inv], exp["sources"]
        assert r.text == exp["sources_txt"], exp["scenario"]
        assert (r.passed, r.verified, r.unresolved, r.violations) == \
            (s["passed"], s["verified"], s["unresolved"], s["violations"]), exp["scenario"]
        assert r.codes == s["codes"], exp["scenario"]


@pytest.mark.parametrize("reuse", [False, True])
def test_verdicts_go_to_the_append_only_history(warehouse_copy, reuse):
    """Every pass records every run's verdict, also when it reuses them (nothing changed: the
    second pass judges no run itself)."""
    con = connect(warehouse_copy)
    first = verify_warehouse(con, SOURCES, reuse=reuse)
    second = verify_warehouse(con, SOURCES, reuse=reuse)
    assert second.lint_id == first.lint_id + 1
    assert (len(second.fresh), second.reused) == ((0, len(EXPECTED)) if reuse else (len(EXPECTED), 0))
    assert [(r.invocation_id, r.text, r.codes, r.unresolved) for r in second.runs] == \
           [(r.invocation_id, r.text, r.codes, r.unresolved) for r in first.runs]
    assert second.totals_line().split(":", 1)[1] == first.totals_line().split(":", 1)[1]
    kinds = con.execute("SELECT lint_id, kind, runs_checked, runs_failed, sources_path FROM lints ORDER BY lint_id").fetchall()
    failed = sum(1 for e in EXPECTED.values() if not e["sources"]["passed"])
    assert kinds[-2:] == [(first.lint_id, "verify", len(EXPECTED), failed, str(SOURCES.resolve())),
                          (second.lint_id, "verify", len(EXPECTED), failed, str(SOURCES.resolve()))]
    for lint_id in (first.lint_id, second.lint_id):
        verdicts = {inv: (status, passed, verified, n, summary) for inv, status, passed, verified, n, summary in
                    con.execute("SELECT invocation_id, status, passed, verified, unresolved_count, summary "
                                "FROM verify_verdicts WHERE lint_id = ?", [lint_id]).fetchall()}
        assert verdicts == {inv: ("passed" if e["sources"]["passed"] else "failed", e["sources"]["passed"],
                                  e["sources"]["verified"], len(e["sources"]["unresolved"]), e["sources"]["summary"])
                            for inv, e in EXPECTED.items()}
        violations = con.execute("SELECT invocation_id, seq, code, message FROM lint_violations "
                                 "WHERE lint_id = ? ORDER BY invocation_id, seq", [lint_id]).fetchall()
        assert violations == sorted((inv, i, m[:2], m) for inv, e in EXPECTED.items()
                                    for i, m in enumerate(e["sources"]["violations"]))
        unresolved = con.execute("SELECT invocation_id, seq, item FROM verify_unresolved "
                                 "WHERE lint_id = ? ORDER BY invocation_id, seq", [lint_id]).fetchall()
        assert unresolved == sorted((inv, i, u) for inv, e in EXPECTED.items()
                                    for i, u in enumerate(e["sources"]["unresolved"]))


def test_a_reverify_judges_again_only_reloaded_runs_or_all_under_another_configuration(warehouse_copy, tmp_path):
    con = connect(warehouse_copy)
    verify_warehouse(con, SOURCES, reuse=True)
    reloaded = sorted(EXPECTED)[1]
    con.execute("UPDATE runs SET ingest_id = ingest_id + 1000 WHERE invocation_id = ?", [reloaded])  # as a reload does
    again = verify_warehouse(con, SOURCES, reuse=True)
    assert [r.invocation_id for r in again.fresh] == [reloaded] and again.reused == len(EXPECTED) - 1
    # The same sources.yaml bytes elsewhere are another configuration: nothing is reused.
    shutil.copy(SOURCES, tmp_path / "sources.yaml")
    shutil.copytree(CORPUS / "snapshots", tmp_path / "snapshots")
    moved = verify_warehouse(con, tmp_path / "sources.yaml", reuse=True)
    assert moved.reused == 0 and len(moved.fresh) == len(EXPECTED)
    for result in (again, moved):
        assert {r.invocation_id: r.text for r in result.runs} == {i: e["sources_txt"] for i, e in EXPECTED.items()}


def test_a_reverify_after_many_passes_over_a_few_runs_reuses_every_verdict(warehouse_copy):
    """The watch checks a few runs per pass; a nightly after any number of such passes still
    judges no unchanged run again (each run's latest verdict counts, whatever pass made it)."""
    con = connect(warehouse_copy)
    full = verify_warehouse(con, SOURCES, reuse=True)
    ids = sorted(EXPECTED)
    for i in range(5):
        verify_warehouse(con, SOURCES, runs=ids[2 * i:2 * i + 2])
    again = verify_warehouse(con, SOURCES, reuse=True)
    assert again.fresh == [] and again.reused == len(EXPECTED)
    assert {r.invocation_id: r.text for r in again.runs} == {i: e["sources_txt"] for i, e in EXPECTED.items()}
    flags = con.execute("SELECT all_runs FROM lints WHERE kind = 'verify' AND lint_id >= ? ORDER BY lint_id",
                        [full.lint_id]).fetchall()
    assert flags == [(True,)] + [(False,)] * 5 + [(True,)]


def test_only_the_runs_asked_for(warehouse_copy):
    con = connect(warehouse_copy)
    some = sorted(EXPECTED)[:3]
    result = verify_warehouse(con, SOURCES, runs=some, record=False)
    assert [r.invocation_id for r in result.runs] == some
    assert [r.text for r in result.runs] == [EXPECTED[i]["sources_txt"] for i in some]
    assert con.execute("SELECT count(*) FROM lints WHERE kind = 'verify'").fetchone()[0] == 0


# ------------------------------------------------------------------------------------------
# CLI over the warehouse
# ------------------------------------------------------------------------------------------

def test_cli_jsonl_one_object_per_run_and_exit_1(warehouse_copy, monkeypatch, capsys):
    code, out, err = run_cli(monkeypatch, capsys, "verify", "--warehouse", str(warehouse_copy),
                             "--sources", str(SOURCES), "--format", "jsonl")
    assert code == 1  # the corpus has S1/S2 failures
    objs = [json.loads(line) for line in out.splitlines()]
    assert len(objs) == len(EXPECTED)
    for o in objs:
        s = EXPECTED[o["invocation_id"]]["sources"]
        assert {k: o[k] for k in ("passed", "verified", "unresolved", "violations")} == \
            {k: s[k] for k in ("passed", "verified", "unresolved", "violations")}


def test_cli_out_writes_the_exact_sources_txt(warehouse_copy, monkeypatch, capsys, tmp_path):
    out_dir = tmp_path / "out"
    code, out, _ = run_cli(monkeypatch, capsys, "verify", "-w", str(warehouse_copy), "--sources", str(SOURCES),
                           "--out", str(out_dir))
    assert code == 1
    for inv in EXPECTED:
        assert (out_dir / inv / "sources.txt").read_bytes() == (CORPUS / "runs" / inv / "sources.txt").read_bytes()
    failing = [inv for inv, e in EXPECTED.items() if not e["sources"]["passed"]]
    for inv in failing:
        assert f"run {inv}: failed\n{EXPECTED[inv]['sources_txt']}\n" in out
    assert out.count("\nrun ") + out.startswith("run ") == len(failing)  # passing runs are not listed
    assert out.splitlines()[-1].startswith(f"groundwork verify (lint 1): {len(EXPECTED)} runs, "
                                           f"{len(EXPECTED) - len(failing)} passed, {len(failing)} failed, 0 unverifiable;")


def test_cli_junit(warehouse_copy, monkeypatch, capsys):
    code, out, _ = run_cli(monkeypatch, capsys, "verify", "-w", str(warehouse_copy), "--sources", str(SOURCES),
                           "--format", "junit", "--no-record")
    assert code == 1
    suite = ET.fromstring(out).find("testsuite")
    cases = suite.findall("testcase")
    assert len(cases) == len(EXPECTED)
    failed = {c.get("name") for c in cases if c.find("failure") is not None}
    assert failed == {inv for inv, e in EXPECTED.items() if not e["sources"]["passed"]}


def test_cli_missing_warehouse_is_exit_2(tmp_path, monkeypatch, capsys):
    code, out, err = run_cli(monkeypatch, capsys, "verify", "-w", str(tmp_path / "none.duckdb"), "--sources", str(SOURCES))
    assert code == 2 and out == "" and err.count("\n") == 1 and "does not exist" in err


def test_sources_default_from_dd_sources_config(warehouse_copy, monkeypatch, capsys):
    monkeypatch.setenv("DD_SOURCES_CONFIG", str(SOURCES))
    code, out, _ = run_cli(monkeypatch, capsys, "verify", "-w", str(warehouse_copy), "-f", "jsonl", "--no-record")
    assert code == 1 and len(out.splitlines()) == len(EXPECTED)


# ------------------------------------------------------------------------------------------
# Drop-in: groundwork verify ENVELOPE --sources FILE
# ------------------------------------------------------------------------------------------

DROP_IN = [inv for inv, e in EXPECTED.items() if e["scenario"].startswith("sources/") or "S1" in e["scenario"]] + \
          [inv for inv, e in EXPECTED.items() if e["scenario"] in (
              "pass/input_only/review", "pass/delegation/one-child", "tampered/G0/missing-grounding-mode",
              "tampered/G0/unknown-grounding-mode", "pass/retrieval/two-sources-and-chat")]


@pytest.mark.parametrize("inv", DROP_IN, ids=[EXPECTED[i]["scenario"] for i in DROP_IN])
def test_drop_in_prints_the_workbench_summary(inv, monkeypatch, capsys):
    code, out, err = run_cli(monkeypatch, capsys, "verify", str(CORPUS / "runs" / inv / "envelope.json"),
                             "--sources", str(SOURCES))
    assert out == EXPECTED[inv]["sources_txt"]
    assert code == (0 if EXPECTED[inv]["sources"]["passed"] else 1)
    assert err == ""


def test_drop_in_on_a_stored_withheld_envelope(monkeypatch, capsys):
    inv = next(i for i, e in EXPECTED.items() if e["scenario"] == "sources/S1/invented-record")
    code, out, _ = run_cli(monkeypatch, capsys, "verify", str(CORPUS / "runs" / inv / "envelope.withheld.json"),
                           "--sources", str(SOURCES))
    assert (code, out) == (0, "sources: 0 verified, 0 unresolved\n")  # docs/rules.md#command-line: evidence is empty


# ------------------------------------------------------------------------------------------
# docs/rules.md#upstream-tests scenarios (test_sources.py upstream), through the drop-in
# ------------------------------------------------------------------------------------------

@pytest.fixture()
def records_config(tmp_path) -> Path:
    data = json.dumps(RECORD_A).encode() + b"\n"
    (tmp_path / "records.jsonl").write_bytes(data)
    cfg = tmp_path / "sources.yaml"
    cfg.write_text(f"sources:\n  - snapshot_refs: ['test:records']\n    path: records.jsonl\n"
                   f"    id_field: source_id\n    sha256: {hashlib.sha256(data).hexdigest()}\n", encoding="utf-8")
    return cfg


def evidence(source_id, content_hash, ref="test:records", canon="dd-json-document-v1", content=None) -> dict:
    item = {"source_id": source_id, "content_hash": content_hash, "canonicalisation": canon}
    if ref is not None:
        item["snapshot_ref"] = ref
    if content is not None:
        item["content"] = content
    return item


def drop_in(tmp_path, monkeypatch, capsys, cfg, envelope) -> tuple[int, str, str]:
    path = tmp_path / "envelope.json"
    path.write_text(json.dumps(envelope), encoding="utf-8")
    return run_cli(monkeypatch, capsys, "verify", str(path), "--sources", str(cfg))


def test_8_5_verified(tmp_path, monkeypatch, capsys, records_config):
    env = {"grounding_mode": "retrieval", "evidence": [evidence("src:a", HASH_A, content=RECORD_A)]}
    assert drop_in(tmp_path, monkeypatch, capsys, records_config, env) == (0, "sources: 1 verified, 0 unresolved\n", "")


def test_8_5_unresolved_live(tmp_path, monkeypatch, capsys, records_config):
    env = {"grounding_mode": "retrieval", "evidence": [evidence("src:a", HASH_A, ref="live")]}
    assert drop_in(tmp_path, monkeypatch, capsys, records_config, env) == \
        (0, "sources: 0 verified, 1 unresolved (no independent copy: src:a (live))\n", "")


def test_8_5_s1_invented(tmp_path, monkeypatch, capsys, records_config):
    doc = {"source_id": "src:invented", "text": "Made up."}
    h = hashlib.sha256(b'{"source_id":"src:invented","text":"Made up."}').hexdigest()
    env = {"grounding_mode": "retrieval", "evidence": [evidence("src:invented", h, content=doc)]}
    assert drop_in(tmp_path, monkeypatch, capsys, records_config, env) == (
        1, "sources: 0 verified, 0 unresolved; FAILED\n"
           "  - S1: evidence cites 'src:invented', which 'test:records' does not hold\n", "")


def test_8_5_s2_altered_and_rehashed(tmp_path, monkeypatch, capsys, records_config):
    doc = {"source_id": "src:a", "text": "Altered."}
    h = hashlib.sha256(b'{"source_id":"src:a","text":"Altered."}').hexdigest()
    env = {"grounding_mode": "retrieval", "evidence": [evidence("src:a", h, content=doc)]}
    assert drop_in(tmp_path, monkeypatch, capsys, records_config, env) == (
        1, "sources: 0 verified, 0 unresolved; FAILED\n"
           f"  - S2: evidence 'src:a' hash {h[:12]}\u2026 does not match 'test:records', "
           f"where the record hashes to {HASH_A[:12]}\u2026\n", "")


@pytest.mark.parametrize("mode, expected", [
    ("input_only", "sources: 0 verified, 0 unresolved\n"),
    ("none", "sources: 0 verified, 0 unresolved\n"),
    ("delegation", "sources: 0 verified, 0 unresolved\n"),
    ("retrieval", "sources: 0 verified, 2 unresolved (no independent copy: input:x (None), invocation:y (None))\n"),
])
def test_8_5_input_and_delegation_evidence(tmp_path, monkeypatch, capsys, records_config, mode, expected):
    env = {"grounding_mode": mode, "evidence": [evidence("input:x", "1" * 64, ref=None, canon="dd-input-json-v1"),
                                                evidence("invocation:y", "c" * 64, ref=None,
                                                         canon="dd-envelope-json-v1")]}
    assert drop_in(tmp_path, monkeypatch, capsys, records_config, env) == (0, expected, "")


def test_unknown_canonicalisation_uses_str_then_repr(tmp_path, monkeypatch, capsys, records_config):
    env = {"grounding_mode": "retrieval", "evidence": [evidence("src:a", HASH_A, canon=["dd-json-document-v1"])]}
    code, out, _ = drop_in(tmp_path, monkeypatch, capsys, records_config, env)
    assert code == 1
    assert out == ("sources: 0 verified, 0 unresolved; FAILED\n"
                   "  - S2: evidence 'src:a': unknown canonicalisation \"['dd-json-document-v1']\"; registered: "
                   "['dd-envelope-json-v1', 'dd-input-json-v1', 'dd-json-document-v1', 'json-sorted-utf8-v1']\n")


def test_unknown_canonicalisation_with_a_lone_surrogate_prints_its_escape(tmp_path, monkeypatch, capsys, records_config):
    # repr() of the name, as E1 prints it: the workbench writes '\ud800', not U+FFFD (the str()
    # column's stand-in for a lone surrogate). Drop-in and a warehouse pass alike.
    path = tmp_path / "envelope.json"
    text = json.dumps({"grounding_mode": "retrieval", "evidence": [evidence("src:a", HASH_A, canon="@@")]})
    path.write_text(text.replace('"@@"', '"\\ud800"'), encoding="utf-8")
    expected = ("sources: 0 verified, 0 unresolved; FAILED\n"
                "  - S2: evidence 'src:a': unknown canonicalisation '\\ud800'; registered: "
                "['dd-envelope-json-v1', 'dd-input-json-v1', 'dd-json-document-v1', 'json-sorted-utf8-v1']\n")
    assert run_cli(monkeypatch, capsys, "verify", str(path), "--sources", str(records_config)) == (1, expected, "")
    runs = tmp_path / "runs"
    shutil.copytree(CORPUS / "runs" / next(iter(EXPECTED)), runs / "r-surrogate")
    (runs / "r-surrogate" / "envelope.json").write_text(text.replace('"@@"', '"\\ud800"'), encoding="utf-8")
    con = connect(tmp_path / "w.duckdb")
    ingest.ingest_archive(con, runs, workers=0)
    [r] = verify_warehouse(con, records_config).runs
    con.close()
    assert r.text == expected


def test_falsy_non_list_evidence_counts_as_none(tmp_path, monkeypatch, capsys, records_config):
    env = {"grounding_mode": "input_only", "evidence": ""}  # docs/rules.md#evidence-pairs
    assert drop_in(tmp_path, monkeypatch, capsys, records_config, env) == (0, "sources: 0 verified, 0 unresolved\n", "")


@pytest.mark.parametrize("mode", [["retrieval"], {"m": "retrieval"}])
def test_list_or_object_mode_is_never_passed(tmp_path, monkeypatch, capsys, records_config, mode):
    env = {"grounding_mode": mode, "evidence": []}  # docs/rules.md#unverifiable-runs: the workbench crashes
    code, out, err = drop_in(tmp_path, monkeypatch, capsys, records_config, env)
    assert code == 2 and out == ""
    assert err.startswith("groundwork: error: ") and err.count("\n") == 1 and "Traceback" not in err


def test_unverifiable_run_in_a_warehouse_fails_the_pass(tmp_path, records_config, monkeypatch, capsys):
    runs = tmp_path / "runs"
    shutil.copytree(CORPUS / "runs" / next(iter(EXPECTED)), runs / "r-list-mode")
    env_path = runs / "r-list-mode" / "envelope.json"
    env = json.loads(env_path.read_text("utf-8"))
    env["grounding_mode"] = ["retrieval"]
    env_path.write_text(json.dumps(env), encoding="utf-8")
    wh = tmp_path / "w.duckdb"
    con = connect(wh)
    ingest.ingest_archive(con, runs, workers=0)
    result = verify_warehouse(con, records_config)
    con.close()
    [r] = result.runs
    assert r.status == "unverifiable" and not r.passed and r.text is None and r.reason
    code, out, _ = run_cli(monkeypatch, capsys, "verify", "-w", str(wh), "--sources", str(records_config), "-f", "jsonl")
    assert code == 1
    assert json.loads(out)["passed"] is False and json.loads(out)["status"] == "unverifiable"


def test_s1_prints_the_raw_snapshot_ref(tmp_path, monkeypatch, capsys):
    """An absent ref looks up the copy listed as 'None' (docs/rules.md#s0) but S1 prints the
    raw value: None and 5 unquoted, the string '5' quoted."""
    data = json.dumps(RECORD_A).encode() + b"\n"
    (tmp_path / "records.jsonl").write_bytes(data)
    cfg = tmp_path / "sources.yaml"
    cfg.write_text(f"sources:\n  - snapshot_refs: ['None', 5]\n    path: records.jsonl\n"
                   f"    id_field: source_id\n    sha256: {hashlib.sha256(data).hexdigest()}\n", encoding="utf-8")
    env = {"grounding_mode": "retrieval", "evidence": [evidence("src:x", "1" * 64, ref=None),
                                                       evidence("src:y", "1" * 64, ref=5),
                                                       evidence("src:z", "1" * 64, ref="5"),
                                                       evidence("src:a", HASH_A, ref=None)]}
    assert drop_in(tmp_path, monkeypatch, capsys, cfg, env) == (
        1, "sources: 1 verified, 0 unresolved; FAILED\n"
           "  - S1: evidence cites 'src:x', which None does not hold\n"
           "  - S1: evidence cites 'src:y', which 5 does not hold\n"
           "  - S1: evidence cites 'src:z', which '5' does not hold\n", "")


@pytest.mark.parametrize("text, fragment", [
    (None, "cannot read envelope file {path}: no such file"),
    ('{"grounding_mode": "retrieval", "evidence": [', "the source check cannot run on this envelope"),
    ('{"grounding_mode": "retrieval", "evidence": [5]}', "the source check cannot run on this envelope"),
])
def test_drop_in_unusable_envelope_is_one_line_exit_2(tmp_path, monkeypatch, capsys, records_config, text, fragment):
    path = tmp_path / "envelope.json"
    if text is not None:
        path.write_text(text, encoding="utf-8")
    code, out, err = run_cli(monkeypatch, capsys, "verify", str(path), "--sources", str(records_config))
    assert code == 2 and out == ""
    assert err.startswith("groundwork: error: ") and fragment.format(path=path) in err
    assert err.count("\n") == 1 and "Traceback" not in err
