"""The synthetic fleet: byte-exact workbench format, determinism, and verdicts equal to its truth.

The ground truth (OUT/truth.jsonl) is written by the generator from the defects it injected; the
last tests hold groundwork's own pipeline (ingest -> lint -> verify, through the CLI) to it.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from groundwork.core.canonical import content_hash
from groundwork.synth import generate

RUNS, SEED, RATE = 300, 11, 0.5
UUID7 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
SPAN_KEYS = ["name", "context", "kind", "parent_id", "start_time", "end_time", "status", "attributes",
             "events", "links", "resource"]
ENVELOPE_ORDER = ["invocation_id", "agent_id", "agent_version", "completed_at", "grounding_mode",
                  "policy_bundle_ref", "policy_digest", "acting_for", "contract_version", "input_schema",
                  "outcome", "payload", "payload_schema", "evidence", "telemetry", "requires_human_review",
                  "problem", "conversation_id", "parent_invocation_id", "delegations"]
RULES = ["G0", "E1", "G1", "G2", "G3", "G4", "R1", "R2", "R3", "N1", "D1", "D2", "D3"]


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
            and p.name != "synth.json"}


@pytest.fixture(scope="module")
def archive(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("synth") / "fleet"
    res = generate(out, RUNS, seed=SEED, violation_rate=RATE, workers=2)
    assert res.runs == RUNS
    return out


@pytest.fixture(scope="module")
def truth(archive) -> list[dict]:
    return [json.loads(line) for line in (archive / "truth.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def by_id(truth) -> dict[str, dict]:
    return {t["invocation_id"]: t for t in truth}


def test_exact_run_count_and_truth_beside_the_runs(archive, truth):
    folders = [p for p in (archive / "runs").iterdir() if p.is_dir() and p.name != "schemas"]
    assert len(folders) == RUNS == len(truth)
    assert {p.name for p in folders} == {t["invocation_id"] for t in truth}
    for p in folders:   # the truth is never inside a run folder
        assert sorted(x.name for x in p.iterdir()) == ["envelope.json", "grounding.txt", "request.json",
                                                       "sources.txt", "spans.jsonl"]


def test_same_seed_same_bytes_whatever_the_worker_count(archive, tmp_path):
    again = tmp_path / "again"
    generate(again, RUNS, seed=SEED, violation_rate=RATE, workers=1)
    assert _tree(again) == _tree(archive)
    other = tmp_path / "other"
    generate(other, RUNS, seed=SEED + 1, violation_rate=RATE, workers=1)
    assert (other / "truth.jsonl").read_bytes() != (archive / "truth.jsonl").read_bytes()


def test_existing_directory_is_refused(archive):
    from groundwork.core.errors import GroundworkError

    with pytest.raises(GroundworkError, match="not empty"):
        generate(archive, 10)


@pytest.mark.parametrize("args, words", [
    (["afile", "--runs", "5"], "is not a directory"),
    (["afile/x", "--runs", "3"], "cannot write the archive to afile/x"),
    (["big", "--runs", "99999999999999999999"], "--runs must be between 1 and 10,000,000"),
    (["big", "--records", "99999999999"], "--records must be between 10 and 1,000,000"),
    (["big", "--workers", "-3"], "--workers must be between 1 and 64"),
])
def test_an_archive_that_cannot_be_written_is_one_line_before_any_work(tmp_path, monkeypatch, args, words):
    # OUT a file, or below one, was an internal error; a count of 10^20 runs grew without bound
    import subprocess
    import sys

    (tmp_path / "afile").write_text("")
    done = subprocess.run([sys.executable, "-m", "groundwork.cli", "synth", *args], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert (done.returncode, done.stdout) == (2, "") and words in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


def test_files_are_serialised_exactly_as_the_workbench_writes_them(archive, truth):
    for t in truth:
        d = archive / "runs" / t["invocation_id"]
        for name in ("envelope.json", "request.json"):
            raw = d.joinpath(name).read_bytes()
            doc = json.loads(raw)
            assert raw == json.dumps(doc, indent=2).encode("ascii"), (d, name)   # no trailing newline
        env = json.loads(d.joinpath("envelope.json").read_bytes())
        keys = [k for k in env if k in ENVELOPE_ORDER]
        assert keys == sorted(keys, key=ENVELOPE_ORDER.index)
        for line in d.joinpath("spans.jsonl").read_text(encoding="ascii").splitlines():
            span = json.loads(line)
            assert line == json.dumps(span)
            if t["lint"]["status"] != "unlintable":
                assert list(span) == SPAN_KEYS
        assert d.joinpath("grounding.txt").read_text(encoding="utf-8") == t["grounding_txt"]
        assert d.joinpath("sources.txt").read_text(encoding="utf-8") == t["sources_txt"]
        assert UUID7.match(t["invocation_id"])


def test_index_is_compact_in_store_order_children_first(archive, by_id):
    lines = (archive / "runs" / "invocations.jsonl").read_text(encoding="ascii").splitlines()
    seen: set[str] = set()
    parents_after_children = 0
    for line in lines:
        doc = json.loads(line)
        assert line == json.dumps(doc, separators=(",", ":"))
        iid = doc.get("invocation_id")
        folder = archive / "runs" / str(iid)
        t = by_id.get(iid)
        if t is not None and t["origin"] != "tampered-copy":
            assert json.loads(folder.joinpath("envelope.json").read_bytes()) == doc
        for dl in doc.get("delegations") or []:
            if isinstance(dl, dict):
                assert dl["delegated_invocation_id"] in seen      # the child was stored first
                parents_after_children += 1
        if iid:
            seen.add(iid)
    assert parents_after_children > 0


def test_hashes_agree_across_files(archive, truth, by_id):
    checked = {"input": 0, "child": 0}
    for t in truth:
        d = archive / "runs" / t["invocation_id"]
        req = json.loads(d.joinpath("request.json").read_bytes())
        env = json.loads(d.joinpath("envelope.json").read_bytes())
        roots = [json.loads(x) for x in d.joinpath("spans.jsonl").read_text().splitlines()]
        roots = [s for s in roots if s.get("name") == "invoke_agent"]
        if t["origin"] != "tampered-copy" and len(roots) == 1:
            assert roots[0]["attributes"]["dd.input_hash"] == content_hash("dd-input-json-v1", req["input"])
            assert roots[0]["context"]["trace_id"] == "0x" + env["telemetry"]["trace_id"]
            checked["input"] += 1
        for dl in env.get("delegations") or []:
            if not isinstance(dl, dict):
                continue
            child = archive / "runs" / dl["delegated_invocation_id"] / "envelope.json"
            if "GW4" in t["findings"] and not child.exists():
                continue
            cdoc = json.loads(child.read_bytes())
            assert cdoc["parent_invocation_id"] == t["invocation_id"]
            same = content_hash("dd-envelope-json-v1", cdoc) == dl["content_hash"]
            assert same == ("GW3" not in t["findings"])
            checked["child"] += 1
        for key in ("input_schema", "payload_schema"):
            if key in env:
                schema = archive / "runs" / "schemas" / f"{env[key]}.json"
                assert content_hash("dd-json-document-v1", json.loads(schema.read_bytes())) == env[key]
    assert checked["input"] > RUNS // 2 and checked["child"] > 0


def test_sources_yaml_pins_the_snapshot_bytes(archive):
    cfg = yaml.safe_load((archive / "sources.yaml").read_text())
    assert len(cfg["sources"]) == 2
    for entry in cfg["sources"]:
        data = (archive / entry["path"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == entry["sha256"]


def test_withheld_runs_are_stored_as_the_conductor_stores_them(archive, truth):
    withheld = [t for t in truth if t["withheld"]]
    assert withheld
    for t in withheld:
        env = json.loads((archive / "runs" / t["invocation_id"] / "envelope.json").read_bytes())
        assert env["outcome"]["status"] == "failed"
        assert env["outcome"]["statement"].startswith("Output withheld: it failed the ")
        assert env["evidence"] == [] and "payload" not in env and "payload_schema" not in env
        assert env["problem"]["type"].endswith("/grounding-violation")
        assert env["problem"]["detail"].startswith("Nothing ungrounded leaves the system. Violations: ")
        # the recorded verdict is on the envelope as returned: it failed
        assert "FAILED" in t["grounding_txt"] or "FAILED" in t["sources_txt"]
    # some withheld runs re-lint clean from the stored files, some keep span-only violations
    assert any(t["lint"]["passed"] for t in withheld)
    assert any(not t["recorded_matches_relint"] for t in withheld)


def test_every_rule_mode_and_variant_is_covered(truth):
    recorded = {line.split("  - ")[1].split(":")[0] for t in truth for line in t["grounding_txt"].splitlines()
                if line.startswith("  - ")}
    assert set(RULES) <= recorded
    stored = {c for t in truth for c in t["lint"]["codes"]}
    assert set(RULES) - {"D3"} <= stored
    assert {"S1", "S2"} <= {c for t in truth for c in t["sources"]["codes"]}
    assert {"retrieval", "input_only", "none", "delegation"} <= {t["mode"] for t in truth if t["lint"]["passed"]}
    assert {"GW1", "GW2", "GW3", "GW4"} <= {f for t in truth for f in t["findings"]}
    assert {"unlintable"} <= {t["lint"]["status"] for t in truth}
    assert {"unverifiable"} <= {t["sources"]["status"] for t in truth}
    assert any("unresolved" in t["sources_txt"] and "(no independent copy: " in t["sources_txt"] for t in truth)
    statuses = {t["stored_outcome_status"] for t in truth}
    assert {"succeeded", "failed", "abstained", "referred"} <= statuses


# ---------------------------------------------------------------------------------------------
# groundwork's verdicts on the archive equal the generator's truth (independent of any linter)
# ---------------------------------------------------------------------------------------------

def _cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "groundwork.cli", *args], capture_output=True, text=True,
                          timeout=600)


@pytest.fixture(scope="module")
def pipeline(archive, tmp_path_factory):
    wh = str(tmp_path_factory.mktemp("wh") / "w.duckdb")
    ing = _cli("ingest", str(archive / "runs"), "-w", wh, "-q")
    assert ing.returncode in (0, 1), ing.stderr
    lint = _cli("lint", "-w", wh, "-f", "jsonl")
    verify = _cli("verify", "-w", wh, "-s", str(archive / "sources.yaml"), "-f", "jsonl")
    assert lint.returncode == 1 and verify.returncode == 1, (lint.stderr, verify.stderr)
    return ({json.loads(x)["invocation_id"]: json.loads(x) for x in lint.stdout.splitlines()},
            {json.loads(x)["invocation_id"]: json.loads(x) for x in verify.stdout.splitlines()})


def test_lint_verdicts_equal_the_truth(pipeline, truth):
    lint, _ = pipeline
    assert set(lint) == {t["invocation_id"] for t in truth}
    for t in truth:
        got, exp = lint[t["invocation_id"]], t["lint"]
        codes = {f.split(":", 1)[0] for f in got["findings"]}
        assert got["status"] == exp["status"], (t["scenario"], got)
        if exp["status"] == "unlintable":
            if "GW1" in t["findings"]:
                assert "GW1" in codes or "cycle" in got["reason"], (t["scenario"], got)
            continue
        assert got["violations"] == exp["violations"], t["scenario"]
        assert (got["mode"], got["retrieval_count"], got["chat_count"]) == \
            (exp["mode"], exp["retrieval_count"], exp["chat_count"]), t["scenario"]
        assert codes == set(t["findings"]), (t["scenario"], got["findings"])


def test_verify_verdicts_equal_the_truth(pipeline, truth):
    _, verify = pipeline
    for t in truth:
        got, exp = verify[t["invocation_id"]], t["sources"]
        assert got["status"] == exp["status"], (t["scenario"], got)
        if exp["status"] != "unverifiable":
            assert (got["verified"], got["unresolved"], got["violations"]) == \
                (exp["verified"], exp["unresolved"], exp["violations"]), t["scenario"]


def test_cli_writes_an_archive_and_refuses_bad_input_with_one_line(tmp_path):
    out = tmp_path / "a"
    ok = _cli("synth", str(out), "--runs", "20", "--seed", "3", "--violation-rate", "0.3")
    assert ok.returncode == 0, ok.stderr
    assert "synth: 20 runs" in ok.stdout
    assert len((out / "truth.jsonl").read_text().splitlines()) == 20
    for args, text in ((["synth", str(out), "--runs", "5"], "exists and is not empty"),
                       (["synth", str(tmp_path / "b"), "--runs", "5", "--violation-rate", "1.5"], "violation-rate"),
                       (["synth", str(tmp_path / "c"), "--runs", "0"], "--runs")):
        bad = _cli(*args)
        assert bad.returncode == 2
        assert bad.stderr.count("\n") == 1 and text in bad.stderr and "Traceback" not in bad.stderr
