"""A path groundwork cannot keep (not valid UTF-8, or holding a NUL), given as an argument, in
a settings file or in the environment, is one line and exit 2 before any work: nothing created.
(The warehouse stores paths as UTF-8 text; DuckDB refused them deep inside the job.)"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ingest_support import CORPUS_RUNS

ROOT = Path(__file__).resolve().parents[2]
GW = [sys.executable.encode(), b"-m", b"groundwork.cli"]


def gw(cwd: Path, *args: bytes, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(GW + list(args), cwd=cwd, capture_output=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})


@pytest.fixture
def place(tmp_path) -> Path:
    bad = os.fsencode(tmp_path) + b"/nu\xffdir"
    os.makedirs(bad + b"/runs")
    run = sorted(p for p in CORPUS_RUNS.iterdir() if p.is_dir())[0]
    shutil.copytree(run, os.fsdecode(bad + b"/runs/" + os.fsencode(run.name)))
    return tmp_path


@pytest.mark.parametrize("command", ["nightly", "ingest", "watch"])
def test_a_runs_dir_that_is_not_utf8_is_one_line(place, command):
    args = [command.encode(), b"nu\xffdir/runs", b"-w", b"w.duckdb"] + ([b"--out", b"rep"] if command == "nightly" else [])
    done = gw(place, *args)
    assert done.returncode == 2 and done.stdout == b""
    assert done.stderr == (b"groundwork: error: RUNS_DIR nu\\xffdir/runs is not valid UTF-8 (groundwork keeps paths "
                           b"as UTF-8 text); rename it or give it through a symlink whose path is\n")
    assert sorted(os.listdir(place)) == [b"nu\xffdir".decode("utf-8", "surrogateescape")]


def test_a_warehouse_path_that_is_not_utf8_still_gives_the_json_document(place):
    done = gw(place, b"nightly", os.fsencode(CORPUS_RUNS), b"-w", b"a\xffb.duckdb", b"--out", b"rep", b"--json")
    assert done.returncode == 2
    doc = json.loads(done.stdout)
    assert doc["exit_status"] == 2 and "is not valid UTF-8" in doc["exit_reason"]
    assert done.stderr.count(b"\n") == 1 and b"internal error" not in done.stderr
    assert not (place / "rep").exists()


def test_a_warehouse_path_with_a_nul_in_the_settings_file_is_one_line(tmp_path):
    (tmp_path / "groundwork.toml").write_text('warehouse = "a\\u0000b"\n', encoding="utf-8")
    done = gw(tmp_path, b"sql", b"SELECT 1")
    assert (done.returncode, done.stdout) == (2, b"")
    assert done.stderr == b"groundwork: error: warehouse a\\x00b holds a NUL character, which no file name can\n"
