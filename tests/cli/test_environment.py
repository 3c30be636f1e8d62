"""A setting given in the environment that groundwork cannot use is one line and exit 2 before
any work (nothing created), never ignored in silence nor an error deep inside the job."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ingest_support import CORPUS_RUNS

ROOT = Path(__file__).resolve().parents[2]


def gw(cwd: Path, env: dict, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "groundwork.cli", *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT), **env})


@pytest.mark.parametrize("value", ["1KB", "abc", "-5MB"])
@pytest.mark.parametrize("variable, command", [("GROUNDWORK_INGEST_MEMORY", "nightly"), ("GROUNDWORK_INGEST_MEMORY", "ingest"),
                                               ("GROUNDWORK_INGEST_MEMORY", "watch"), ("GROUNDWORK_MEMORY", "nightly"),
                                               ("GROUNDWORK_MEMORY", "watch")])
def test_a_memory_setting_that_is_no_usable_size_is_one_line(tmp_path, variable, command, value):
    args = [command, CORPUS_RUNS, "-w", "w.duckdb"] + (["--out", "rep"] if command == "nightly" else [])
    done = gw(tmp_path, {variable: value}, *args)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"groundwork: error: {variable}={value} is not a memory size of 16MB or more (e.g. 128MB, 1GB)\n"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("value", ["abc", "-1", "inf", "nan"])
def test_a_lock_wait_that_is_no_number_of_seconds_is_one_line(tmp_path, value):
    done = gw(tmp_path, {"GROUNDWORK_LOCK_WAIT": value}, "sql", "-w", ROOT / "warehouse.duckdb.example", "SELECT 1")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"groundwork: error: GROUNDWORK_LOCK_WAIT={value} is not a number of seconds (0 or more)\n"


def test_good_values_are_taken(tmp_path):
    done = gw(tmp_path, {"GROUNDWORK_INGEST_MEMORY": "64MB", "GROUNDWORK_LOCK_WAIT": "2.5"},
              "ingest", CORPUS_RUNS, "-w", "w.duckdb", "-q")
    assert done.returncode in (0, 1), done.stderr
    assert (tmp_path / "w.duckdb").exists()


@pytest.mark.parametrize("command", ["lint", "verify"])
def test_a_job_memory_that_is_no_usable_size_leaves_the_warehouse_alone(tmp_path, command):
    wh = tmp_path / "w.duckdb"
    wh.write_bytes((ROOT / "warehouse.duckdb.example").read_bytes())
    before = wh.read_bytes()
    extra = ["--sources", ROOT / "examples" / "archive" / "sources.yaml"] if command == "verify" else []
    done = gw(tmp_path, {"GROUNDWORK_MEMORY": "10"}, command, "-w", wh, *extra)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == "groundwork: error: GROUNDWORK_MEMORY=10 is not a memory size of 16MB or more (e.g. 128MB, 1GB)\n"
    assert wh.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["w.duckdb"]


def test_16mb_the_least_size_the_message_names_is_taken(tmp_path):
    """README: GROUNDWORK_MEMORY and GROUNDWORK_INGEST_MEMORY take "a size of 16MB or more". 16MB
    is DuckDB's 16,000,000 bytes, under 16 MiB: it was refused with "is not a memory size of 16MB
    or more"."""
    done = gw(tmp_path, {"GROUNDWORK_INGEST_MEMORY": "16MB"}, "ingest", CORPUS_RUNS, "-w", "w.duckdb", "-q")
    assert done.returncode in (0, 1), done.stderr
    wh = tmp_path / "example.duckdb"
    wh.write_bytes((ROOT / "warehouse.duckdb.example").read_bytes())
    done = gw(tmp_path, {"GROUNDWORK_MEMORY": "16MB"}, "verify", "-w", wh,
              "--sources", ROOT / "examples" / "archive" / "sources.yaml")
    assert done.returncode in (0, 1), done.stderr


@pytest.mark.parametrize("command", ["lint", "nightly"])
def test_a_job_out_of_duckdbs_memory_is_one_line_naming_the_setting(tmp_path, command):
    """A job DuckDB cannot do under GROUNDWORK_MEMORY (here the least size taken, 16MB) cannot be
    done: one line naming the setting that gives it more, exit 2 (README: "a job that cannot be
    done is one line on stderr and exit status 2"); not an "internal error" quoting DuckDB's advice
    to `SET memory_limit`, a setting the user does not hold."""
    if command == "lint":
        wh = tmp_path / "w.duckdb"
        wh.write_bytes((ROOT / "warehouse.duckdb.example").read_bytes())
        args = ["lint", "-w", wh, "--all"]
    else:
        args = ["nightly", ROOT / "examples" / "archive" / "runs", "-w", "w.duckdb", "--out", "rep", "-q"]
    done = gw(tmp_path, {"GROUNDWORK_MEMORY": "16MB", "GROUNDWORK_INGEST_MEMORY": "16MB"}, *args)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("groundwork: error: DuckDB ran out of memory ("), done.stderr
    assert "GROUNDWORK_MEMORY" in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert "internal error" not in done.stderr and "SET memory_limit" not in done.stderr
