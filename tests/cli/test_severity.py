"""No silent findings: a groundwork finding of severity error (the default for GW2) fails the
nightly like a violation — exit 1, groundwork_runs_changed{change="new"} — while the run's
workbench verdict stays passed; set to warn in groundwork.toml it is listed and fails nothing;
set to off it leaves the reports and metrics, and its rows stay in the warehouse."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import duckdb
import pytest

from cli_support import run_cli
from ingest_support import PASS_RETRIEVAL, archive

FAILING = "violation/G1/chat-before-retrieval"


def metric(out: Path, series: str) -> int | None:
    text = (out / "metrics" / "groundwork.prom").read_text(encoding="utf-8")
    m = re.search(rf"^{re.escape(series)} (\d+)$", text, re.M)
    return int(m.group(1)) if m else None


def duplicate_a_span_line(runs: Path, inv: str) -> None:
    """Append a copy of the run's first span line (its policy_gate span: a leaf no rule counts)."""
    spans = runs / inv / "spans.jsonl"
    lines = spans.read_text(encoding="utf-8").splitlines(keepends=True)
    assert '"name": "policy_gate"' in lines[0]
    spans.write_text("".join(lines) + lines[0], encoding="utf-8")


@pytest.fixture
def second_night(tmp_path, monkeypatch, capsys):
    """Run a first nightly over a passing and a failing run, then give the passing run a duplicate
    span line; returns a function running the second nightly (with a groundwork.toml when given)."""
    runs, (passing, _) = archive(tmp_path, PASS_RETRIEVAL, FAILING)
    w, out = tmp_path / "w.duckdb", tmp_path / "reports"
    code, _, err = run_cli(monkeypatch, capsys, "nightly", str(runs), "-w", str(w), "--out", str(out), "-q")
    assert code == 1, err  # the first night: the failing run is new
    assert metric(out, 'groundwork_runs_changed{change="new"}') == 1
    duplicate_a_span_line(runs, passing)

    def run(toml: str | None = None):
        extra = []
        if toml is not None:
            cfg = tmp_path / "groundwork.toml"
            cfg.write_text(toml, encoding="utf-8")
            extra = ["--config", str(cfg)]
        code, stdout, err = run_cli(monkeypatch, capsys, "nightly", str(runs), "-w", str(w), "--out", str(out),
                                    "--full-scan", "-q", *extra)
        return code, stdout, err

    return run, passing, w, out


def verdict_and_codes(w: Path, inv: str):
    con = duckdb.connect(str(w), read_only=True)
    try:
        status = con.execute("SELECT status FROM latest_lint WHERE invocation_id = ?", [inv]).fetchall()
        codes = con.execute("SELECT code FROM lint_violations WHERE invocation_id = ? AND lint_id = "
                            "(SELECT max(lint_id) FROM lints WHERE kind = 'lint')", [inv]).fetchall()
    finally:
        con.close()
    return status, codes


def test_a_new_error_finding_fails_the_nightly_and_counts_as_new(second_night):
    run, passing, w, out = second_night
    code, stdout, err = run()
    assert code == 1, (stdout, err)
    assert verdict_and_codes(w, passing) == ([("passed",)], [("GW2",)])  # the workbench's verdict is unchanged
    assert "since the previous nightly: 1 new failing, 0 resolved, 1 still failing" in stdout
    assert metric(out, 'groundwork_runs_changed{change="new"}') == 1
    assert metric(out, 'groundwork_runs_failing') == 2
    doc = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert [r["invocation_id"] for r in doc["since_previous_nightly"]["new"]] == [passing]
    assert (out / "runs" / passing / "index.html").is_file()  # the new failing run has its page
    # A third night over the same archive: nothing new.
    code, stdout, err = run()
    assert code == 0 and "0 new failing, 0 resolved, 2 still failing" in stdout, stdout


def test_a_warn_finding_is_listed_and_fails_nothing(second_night, monkeypatch, capsys):
    run, passing, w, out = second_night
    code, stdout, err = run('[severity]\nGW2 = "warn"\n')
    assert code == 0, (stdout, err)
    assert "since the previous nightly: 0 new failing, 0 resolved, 1 still failing" in stdout
    assert "warning: GW2 in 1 run (1 finding; severity warn: fails nothing)" in stdout
    assert metric(out, 'groundwork_runs_changed{change="new"}') == 0
    assert 'rule="GW2"' in (out / "metrics" / "groundwork.prom").read_text(encoding="utf-8")  # still counted
    # the fleet report lists it, linked to the run's page (written though the run passes)
    fleet = (out / "fleet.html").read_text(encoding="utf-8")
    warned = fleet.split('id="warnings-table"', 1)[1].split("</table>", 1)[0]
    assert 'href="rules.html#GW2"' in warned and f'<a href="runs/{passing}/index.html">{passing}</a>' in warned
    page = (out / "runs" / passing / "index.html").read_text(encoding="utf-8")
    assert "GW2" in page and "span id" in page
    hint = next(line for line in stdout.splitlines() if line.startswith("  list them: "))[len("  list them: "):]
    argv = shlex.split(hint)
    assert argv[0] == "groundwork"
    code, listed, err = run_cli(monkeypatch, capsys, *argv[1:], "--format", "csv")
    assert code == 0 and passing in listed and "GW2: 2 span records share span id" in listed, err


def test_the_page_of_a_passing_run_with_a_warn_finding_links_only_files_written(second_night):
    """A passing run's texts are written only when they differ from the archive's: its page (made
    for its warn finding) linked grounding.txt and sources.txt all the same, to nothing."""
    run, passing, w, out = second_night
    code, stdout, err = run('[severity]\nGW2 = "warn"\n')
    assert code == 0, (stdout, err)
    folder = out / "runs" / passing
    page = (folder / "index.html").read_text(encoding="utf-8")
    links = [h for h in re.findall(r'href="([^"#]+)"', page) if not h.startswith(("../", "data:"))]
    assert links == [h for h in links if (folder / h).exists()]
    assert not (folder / "grounding.txt").exists() and "Today's grounding.txt" in page   # shown on the page itself


def test_an_off_finding_leaves_the_reports_but_not_the_warehouse(second_night):
    run, passing, w, out = second_night
    code, stdout, err = run('[severity]\nGW2 = "off"\n')
    assert code == 0, (stdout, err)
    assert "warning" not in stdout
    assert metric(out, 'groundwork_runs_changed{change="new"}') == 0
    assert "GW2" not in (out / "metrics" / "groundwork.prom").read_text(encoding="utf-8")
    assert "GW2" not in (out / "violations.jsonl").read_text(encoding="utf-8")
    assert verdict_and_codes(w, passing) == ([("passed",)], [("GW2",)])  # the rows stay


@pytest.mark.parametrize("toml, message", [
    ('[severity]\nG1 = "warn"\n', "severity.G1: G1 is a workbench rule, always an error"),
    ('[severity]\nGW9 = "warn"\n', "severity.GW9: no such finding code"),
    ('[severity]\nGW2 = "fatal"\n', "severity.GW2 = 'fatal': must be one of error, warn, off"),
])
def test_a_bad_severity_is_one_line_and_exit_2_before_the_ingest(tmp_path, monkeypatch, capsys, toml, message):
    runs, _ = archive(tmp_path, PASS_RETRIEVAL)
    cfg = tmp_path / "groundwork.toml"
    cfg.write_text(toml, encoding="utf-8")
    w = tmp_path / "w.duckdb"
    code, stdout, err = run_cli(monkeypatch, capsys, "nightly", str(runs), "-w", str(w), "--out",
                                str(tmp_path / "out"), "--config", str(cfg))
    assert code == 2 and stdout == ""
    assert err.startswith(f"groundwork: error: {cfg}: {message}") and len(err.splitlines()) == 1, err
    assert not w.exists()  # refused before the warehouse was made
