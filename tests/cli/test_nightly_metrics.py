"""The metrics textfile says when the latest successful nightly finished
(groundwork_nightly_last_success_timestamp_seconds): a nightly that dies after rendering its
reports but before it finishes (killed while keeping the derived relations) must not write it,
so an alert on the timestamp's age fires; the previous success's file stays as it was."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from cli_support import run_cli
from groundwork.jobs.nightly import CRASH_ENV
from ingest_support import CORPUS_RUNS, PASS_RETRIEVAL, archive, scenario

ROOT = Path(__file__).resolve().parents[2]
FAILING = "violation/G1/chat-before-retrieval"
LAST_SUCCESS = re.compile(r"^groundwork_nightly_last_success_timestamp_seconds (\S+)$", re.M)


def _nightly_killed_at_keep_derived(runs: Path, w: Path, out: Path) -> None:
    env = dict(os.environ, **{CRASH_ENV: "keep-derived"})
    killed = subprocess.run([sys.executable, "-m", "groundwork.cli", "nightly", str(runs), "-w", str(w), "--out", str(out)],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert killed.returncode == -9, killed.stderr
    assert (out / "fleet.html").is_file() and (out / "summary.json").is_file()  # it got past its reports


def test_a_nightly_killed_before_it_finished_claims_no_success(tmp_path, monkeypatch, capsys):
    runs, _ = archive(tmp_path, PASS_RETRIEVAL)
    w, out = tmp_path / "w.duckdb", tmp_path / "reports"
    metrics = out / "metrics" / "groundwork.prom"

    _nightly_killed_at_keep_derived(runs, w, out)
    assert not metrics.exists()  # no nightly has succeeded yet

    before = time.time()
    code, _, err = run_cli(monkeypatch, capsys, "nightly", str(runs), "-w", str(w), "--out", str(out))
    assert code == 0, err
    succeeded = metrics.read_bytes()
    (stamp,) = LAST_SUCCESS.findall(succeeded.decode())
    assert before <= float(stamp) <= time.time()

    added = scenario(FAILING)
    shutil.copytree(CORPUS_RUNS / added, runs / added)
    _nightly_killed_at_keep_derived(runs, w, out)
    assert metrics.read_bytes() == succeeded  # still the last success's: timestamp and counts
