"""--json prints exactly one JSON document on stdout (counts, exit reason, what was written), the
job that cannot be done included; the nightly tells each phase on stderr unless --quiet, hands
--workers to its ingest, and its summary names the ingest issues with a command that works
when pasted."""

from __future__ import annotations

import json
import shlex

import pytest

from cli_support import run_cli
from ingest_support import PASS_RETRIEVAL, archive

FAILING = "violation/G1/chat-before-retrieval"


@pytest.fixture
def runs(tmp_path):
    runs, _ = archive(tmp_path, PASS_RETRIEVAL, FAILING)
    return runs


def one_json(stdout: str) -> dict:
    doc = json.loads(stdout)  # the whole of stdout: one document and nothing else
    assert isinstance(doc, dict)
    return doc


def test_ingest_lint_verify_json(monkeypatch, capsys, tmp_path, runs):
    w = str(tmp_path / "w.duckdb")
    code, out, err = run_cli(monkeypatch, capsys, "ingest", str(runs), "-w", w, "--json")
    doc = one_json(out)
    assert code == 0 and doc["exit_status"] == 0 and doc["exit_reason"] == "clean"
    assert (doc["folders_seen"], doc["runs_loaded"], doc["issues_total"], doc["warehouse"]) == (2, 2, 0, w)

    code, out, err = run_cli(monkeypatch, capsys, "lint", "-w", w, "--json", "--out", str(tmp_path / "texts"))
    doc = one_json(out)
    assert code == 1 and doc["exit_status"] == 1
    assert (doc["runs"], doc["passed"], doc["failed"], doc["unlintable"]) == (2, 1, 1, 0)
    assert doc["exit_reason"] == "1 runs failed, 0 unlintable"
    assert doc["written"] == {"grounding_txt_dir": str(tmp_path / "texts"), "grounding_txt_files": 2}
    assert len(list((tmp_path / "texts").glob("*/grounding.txt"))) == 2
    assert err == ""  # the totals line is in the document, not on stderr

    sources = tmp_path / "sources.yaml"
    sources.write_text("sources: []\n", encoding="utf-8")
    code, out, err = run_cli(monkeypatch, capsys, "verify", "-w", w, "--sources", str(sources), "--json")
    doc = one_json(out)
    assert code == doc["exit_status"] and doc["runs"] == 2
    assert doc["passed"] + doc["failed"] + doc["unverifiable"] == 2


@pytest.mark.parametrize("args", [["ingest", "nope"], ["lint", "-w", "nope.duckdb"],
                                  ["verify", "-w", "nope.duckdb", "-s", "nope.yaml"], ["nightly", "nope"]])
def test_json_of_a_job_that_cannot_be_done(monkeypatch, capsys, tmp_path, args):
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(monkeypatch, capsys, *args, "--json")
    doc = one_json(out)
    assert code == 2 and doc["exit_status"] == 2 and doc["command"] == args[0]
    assert err == f"groundwork: error: {doc['exit_reason']}\n"


@pytest.mark.parametrize("args", [["ingest", "nope"], ["lint"], ["verify", "-s", "nope.yaml"], ["nightly", "nope"]])
def test_json_of_a_bad_settings_file(monkeypatch, capsys, tmp_path, args):
    # README: an unknown key or severity is one line on stderr and exit 2; with --json the
    # document of a job that cannot be done is printed too, as for any other refusal.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.toml").write_text('[severity]\nGW2 = "fatal"\n', encoding="utf-8")
    code, out, err = run_cli(monkeypatch, capsys, *args, "--json", "--config", str(tmp_path / "bad.toml"))
    doc = one_json(out)
    assert code == 2 and doc["exit_status"] == 2 and doc["command"] == args[0]
    assert "severity.GW2 = 'fatal'" in doc["exit_reason"]
    assert err == f"groundwork: error: {doc['exit_reason']}\n"


@pytest.mark.parametrize("args", [["lint", "--json", "--format", "jsonl"], ["verify", "--json", "--format", "junit", "-s", "x"]])
def test_json_and_format_together_are_refused(monkeypatch, capsys, args):
    code, out, err = run_cli(monkeypatch, capsys, *args)
    assert code == 2 and out == "" and "give --json or --format, not both" in err


def test_nightly_json_is_the_only_stdout_and_names_what_was_written(monkeypatch, capsys, tmp_path, runs):
    out_dir = tmp_path / "reports"
    code, out, err = run_cli(monkeypatch, capsys, "nightly", str(runs), "-w", str(tmp_path / "w.duckdb"),
                             "--out", str(out_dir), "--json")
    doc = one_json(out)
    assert code == 1 and doc["exit_status"] == 1
    assert doc["exit_reason"] == "1 runs fail a check they did not fail at the previous nightly"
    assert (doc["runs_linted"], doc["runs_failing"], doc["new_failing"], doc["has_baseline"]) == (2, 1, 1, False)
    assert doc["ingest"]["runs_loaded"] == 2
    assert doc["severities"] == {"GW1": "error", "GW2": "error", "GW3": "error", "GW4": "warn"}
    for key in ("fleet_html", "summary_md", "summary_json", "junit_xml", "metrics", "violations_jsonl"):
        assert (out_dir / doc["written"][key]).is_file(), key
    assert "nightly: lint" in err  # progress stays on stderr


def test_nightly_says_each_phase_on_stderr_unless_quiet(monkeypatch, capsys, tmp_path, runs):
    sources = tmp_path / "sources.yaml"
    sources.write_text("sources: []\n", encoding="utf-8")
    args = ["nightly", str(runs), "-w", str(tmp_path / "w.duckdb"), "--out", str(tmp_path / "r"), "-s", str(sources)]
    code, out, err = run_cli(monkeypatch, capsys, *args)
    phases = [line.split(" (")[0] for line in err.splitlines()]
    assert phases == ["nightly: ingest", "nightly: lint", "nightly: verify", "nightly: compare with the previous nightly",
                      "nightly: reports", "nightly: keep the derived relations"], err
    code, out, err = run_cli(monkeypatch, capsys, *args, "--quiet")
    assert err == "" and "nightly #2" in out


def test_nightly_hands_workers_to_the_ingest(monkeypatch, capsys, tmp_path, runs):
    import groundwork.jobs.nightly as nightly

    seen = []
    real = nightly.ingest_archive

    def spy(*a, **kw):
        seen.append(kw.get("workers"))
        return real(*a, **kw)

    monkeypatch.setattr(nightly, "ingest_archive", spy)
    code, _, err = run_cli(monkeypatch, capsys, "nightly", str(runs), "-w", str(tmp_path / "w.duckdb"),
                           "--out", str(tmp_path / "r"), "--workers", "0", "-q")
    assert code == 1 and seen == [0], err
    code, _, err = run_cli(monkeypatch, capsys, "nightly", str(runs), "--workers", "-1")
    assert code == 2 and "greater than or equal to 0" in err


def test_nightly_summary_names_the_ingest_issues_with_a_command_that_pastes(monkeypatch, capsys, tmp_path, runs):
    inv = sorted(p.name for p in runs.iterdir() if p.is_dir())[0]
    (runs / inv / "request.json").write_bytes(b"\xef\xbb\xbf" + (runs / inv / "request.json").read_bytes())  # a BOM
    w = tmp_path / "my warehouse.duckdb"  # a space: the hint quotes it
    code, out, err = run_cli(monkeypatch, capsys, "nightly", str(runs), "-w", str(w), "--out", str(tmp_path / "r"), "-q")
    lines = out.splitlines()
    issue = next(line for line in lines if line.startswith("ingest: 1 issue"))
    assert "bom 1" in issue
    hint = next(line for line in lines if line.startswith("ingest: details: "))[len("ingest: details: "):]
    argv = shlex.split(hint)
    assert argv[0] == "groundwork"
    code, out, err = run_cli(monkeypatch, capsys, *argv[1:])
    assert code == 0 and "bom" in out and inv in out, err
