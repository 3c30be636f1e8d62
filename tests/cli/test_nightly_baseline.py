"""A nightly becomes the baseline of the next one only once it has finished every step: one killed
after it recorded its verdicts (while keeping the derived relations) is not, so the rerun
reports the same new failures and exits 1."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb

from cli_support import run_cli
from groundwork.jobs.nightly import CRASH_ENV
from ingest_support import CORPUS_RUNS, PASS_RETRIEVAL, archive, scenario

ROOT = Path(__file__).resolve().parents[2]
FAILING = "violation/G1/chat-before-retrieval"
NEW_FAILING = "violation/G1/two-chats-before-retrieval"


def args(runs: Path, w: Path, out: Path) -> list[str]:
    return ["nightly", str(runs), "-w", str(w), "--out", str(out)]


def new_failing(out: Path) -> list[str]:
    doc = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    return sorted(r["invocation_id"] for r in doc["since_previous_nightly"]["new"])


def test_a_nightly_killed_while_keeping_the_derived_relations_is_not_the_baseline(tmp_path, monkeypatch, capsys):
    runs, _ = archive(tmp_path, PASS_RETRIEVAL, FAILING)
    w, out = tmp_path / "w.duckdb", tmp_path / "reports"
    code, _, err = run_cli(monkeypatch, capsys, *args(runs, w, out))
    assert code == 1, err  # the first nightly: the failing run is new

    added = scenario(NEW_FAILING)
    shutil.copytree(CORPUS_RUNS / added, runs / added)
    env = dict(os.environ, **{CRASH_ENV: "keep-derived"})
    killed = subprocess.run([sys.executable, "-m", "groundwork.cli", *args(runs, w, out)], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=300)
    assert killed.returncode == -9, killed.stderr
    con = duckdb.connect(str(w), read_only=True)
    row = con.execute("SELECT lint_id IS NOT NULL, new_failing, exit_status FROM nightlies WHERE nightly_id = 2").fetchall()
    recorded_new = sorted(r[0] for r in con.execute(
        "SELECT invocation_id FROM nightly_changes WHERE nightly_id = 2 AND change = 'new'").fetchall())
    con.close()
    assert row == [(True, 1, None)]  # its verdicts and counts were recorded; it never finished
    assert recorded_new == [added]

    code, stdout, err = run_cli(monkeypatch, capsys, *args(runs, w, out))
    assert code == 1, err
    assert "since the previous nightly: 1 new failing, 0 resolved, 1 still failing" in stdout
    assert new_failing(out) == recorded_new
    code, stdout, err = run_cli(monkeypatch, capsys, *args(runs, w, out))
    assert code == 0 and "0 new failing" in stdout  # this one finished: it is the baseline now
