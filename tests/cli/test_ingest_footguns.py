"""Mistakes a new user makes with ingest and nightly: the run store's root given instead of its
runs/ folder ("did you mean ROOT/runs?"), a folder that does not exist (nothing created), and
the issue hint printed after an ingest, which must work when pasted into a shell."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cli_support import run_cli
from ingest_support import EXAMPLE, PASS_NONE, PASS_RETRIEVAL, archive


@pytest.fixture
def store(tmp_path) -> Path:
    """A run store's root as the workbench leaves it: runs/, snapshots/, sources.yaml."""
    root = tmp_path / "store"
    runs, _ = archive(root, PASS_RETRIEVAL, PASS_NONE)
    shutil.copytree(EXAMPLE / "snapshots", root / "snapshots")
    shutil.copy(EXAMPLE / "sources.yaml", root / "sources.yaml")
    return root


def job(name: str, runs: Path, w: Path, out: Path) -> list[str]:
    return ["ingest", str(runs), "-w", str(w)] if name == "ingest" else ["nightly", str(runs), "-w", str(w), "--out", str(out)]


@pytest.mark.parametrize("name", ["ingest", "nightly"])
def test_the_store_root_instead_of_its_runs_folder_is_refused_with_the_folder_meant(store, tmp_path, monkeypatch,
                                                                                    capsys, name):
    work = tmp_path / "work"
    work.mkdir()
    code, out, err = run_cli(monkeypatch, capsys, *job(name, store, work / "w.duckdb", work / "reports"))
    assert code == 2
    assert err == f"groundwork: error: {store} is a run store's root, not its runs/ folder: did you mean {store / 'runs'}?\n"
    assert list(work.iterdir()) == []


def test_a_runs_folder_holding_a_stray_runs_folder_is_still_ingested(store, tmp_path, monkeypatch, capsys):
    (store / "runs" / "runs").mkdir()
    code, out, err = run_cli(monkeypatch, capsys, "ingest", str(store / "runs"), "-w", str(tmp_path / "w.duckdb"))
    assert code == 1, err  # the stray folder is kept as a run without files (unlintable), beside the two runs
    assert "3 folders seen = 3 loaded" in err


@pytest.mark.parametrize("name", ["ingest", "nightly"])
def test_a_job_that_cannot_start_creates_nothing(tmp_path, monkeypatch, capsys, name):
    code, out, err = run_cli(monkeypatch, capsys, *job(name, tmp_path / "nonexistent", tmp_path / "e.duckdb",
                                                       tmp_path / "new" / "reports"))
    assert code == 2
    assert err == f"groundwork: error: {tmp_path / 'nonexistent'} does not exist (expected the run store's runs/ folder)\n"
    assert list(tmp_path.iterdir()) == []


def test_a_nightly_refused_by_its_warehouse_removes_the_report_folders_it_made(store, tmp_path, monkeypatch, capsys):
    w = tmp_path / "not-a-warehouse.duckdb"
    w.write_text("notes\n")
    code, out, err = run_cli(monkeypatch, capsys, "nightly", str(store / "runs"), "-w", str(w),
                             "--out", str(tmp_path / "a" / "b" / "reports"))
    assert code == 2 and "is not a groundwork warehouse" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["not-a-warehouse.duckdb", "store"]


def test_the_issue_hint_after_an_ingest_works_as_pasted(store, tmp_path, monkeypatch, capsys):
    (store / "runs" / "notes.txt").write_text("not a run\n")  # an unexpected entry: one ingest issue
    folder = tmp_path / "my warehouses"
    folder.mkdir()
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(monkeypatch, capsys, "ingest", str(store / "runs"), "-w", "my warehouses/w.duckdb")
    assert code == 1
    hint = [line for line in err.splitlines() if line.startswith("ingest: details: ")]
    assert hint == ["ingest: details: groundwork sql \"SELECT * FROM ingest_issues\" --warehouse 'my warehouses/w.duckdb'"]
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    pasted = subprocess.run(["sh", "-c", hint[0].removeprefix("ingest: details: ")], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=120)
    assert pasted.returncode == 0, pasted.stderr
    assert "notes.txt" in pasted.stdout and "(1 row)" in pasted.stdout
