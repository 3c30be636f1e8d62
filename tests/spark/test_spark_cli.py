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


SIMULATED_INTERRUPT = """
import logging, sys, types
import groundwork.spark.submit as submit
from groundwork import cli

def run(spark, runs, out, **kw):
    # what py4j does when a Ctrl-C (or the CLI's SIGTERM) reaches it mid-call
    try:
        raise KeyboardInterrupt
    except KeyboardInterrupt:
        logging.exception("KeyboardInterrupt while sending command.")
    raise RuntimeError("Answer from Java side is empty")

sys.modules["groundwork.spark.job"] = types.SimpleNamespace(run=run)
submit.check_pyspark = lambda: None
submit.session = lambda master: None
sys.argv = ["groundwork", "spark", "run", sys.argv[1], "--out", sys.argv[2]]
cli.main()
"""


def test_an_interrupt_py4j_takes_is_one_line_not_a_traceback(tmp_path):
    """py4j logs the KeyboardInterrupt of a Ctrl-C or SIGTERM with its traceback and fails the call
    with Py4JNetworkError: that was a traceback and "Spark job failed"."""
    (tmp_path / "runs").mkdir()
    done = subprocess.run([sys.executable, "-c", SIMULATED_INTERRUPT, str(tmp_path / "runs"), str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stderr) == (2, "groundwork: interrupted\n")
