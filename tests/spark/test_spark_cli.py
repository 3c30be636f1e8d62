"""`groundwork spark run` refuses inputs it cannot use in one line (exit 2), before Spark starts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def _groundwork(*args):
    exe = Path(sys.executable).with_name("groundwork")
    return subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=120)


def test_a_missing_archive_is_one_line_and_exit_2(tmp_path):
    done = _groundwork("spark", "run", str(tmp_path / "nope"), "--out", str(tmp_path / "out"))
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [f"groundwork: error: {tmp_path / 'nope'} is not a directory "
                                               "(expected the run store's runs/ folder)"]


def test_a_missing_sources_file_is_one_line_and_exit_2(tmp_path):
    (tmp_path / "runs").mkdir()
    done = _groundwork("spark", "run", str(tmp_path / "runs"), "--out", str(tmp_path / "out"),
                       "--sources", str(tmp_path / "sources.yaml"))
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "sources file" in done.stderr
