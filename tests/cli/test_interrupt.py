"""A Ctrl-C ends any command with one line, `groundwork: interrupted`, and exit code 2 (the job
was not done; a SIGTERM likewise, naming it): never a traceback, whether the SIGINT lands in
Python, in a DuckDB query (whose client raises its own error for it) or, as a terminal sends it
to the whole process group, in the ingest's parser processes while they start or wait for work.
The next nightly then runs."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from groundwork.synth import generate

ROOT = Path(__file__).resolve().parents[2]
GW = [sys.executable, "-m", "groundwork.cli"]


def start(args: list) -> subprocess.Popen:
    """`groundwork ARGS` in a process group of its own, as a shell runs a foreground job."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.Popen(GW + [str(a) for a in args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)


def children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"   # state, after (comm)
    except OSError:
        return False


# (signal, the line it ends a command with): Ctrl-C at a terminal sends SIGINT to the process
# group, systemd stopping a unit SIGTERM to every process of it
STOPS = [(signal.SIGINT, "groundwork: interrupted\n"), (signal.SIGTERM, "groundwork: interrupted (SIGTERM)\n")]


def ctrl_c(proc: subprocess.Popen, sig: int = signal.SIGINT) -> tuple[int, str]:
    """``sig`` to the group (SIGINT: what Ctrl-C at a terminal does); (exit code, stderr)."""
    try:
        os.killpg(proc.pid, sig)
        _, err = proc.communicate(timeout=120)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return proc.returncode, err


@pytest.mark.parametrize("sig, line", STOPS)
def test_ctrl_c_in_a_query_is_one_line(tmp_path, sig, line):
    wh = tmp_path / "w.duckdb"
    shutil.copyfile(ROOT / "warehouse.duckdb.example", wh)
    # ~50 s of work: still running when the signal comes
    proc = start(["sql", "-w", wh, "SELECT sum(hash(a.range * b.range)) FROM range(100000) a, range(100000) b"])
    time.sleep(3)
    assert proc.poll() is None
    assert ctrl_c(proc, sig) == (2, line)


@pytest.fixture(scope="module")
def archive(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("interrupt")
    generate(base / "a", 260, seed=5, violation_rate=0.3, workers=1)  # over ingest.load.SMALL: parser processes
    return base / "a" / "runs"


@pytest.mark.parametrize("delay, sig, line", [(0.0, *STOPS[0]), (0.5, *STOPS[0]), (0.5, *STOPS[1])])
def test_ctrl_c_while_the_parser_processes_start_or_work(archive, tmp_path, delay, sig, line):
    wh, out = tmp_path / "w.duckdb", tmp_path / "out"
    proc = start(["nightly", archive, "-w", wh, "--out", out, "-q"])
    deadline = time.monotonic() + 120
    while not children(proc.pid):   # the first parser process is starting (importing)
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.005)
    time.sleep(delay)
    workers = children(proc.pid)
    rc, err = ctrl_c(proc, sig)
    if rc == 1 and "interrupted" not in err:
        pytest.skip("the nightly finished before the signal came")  # a very fast machine
    assert (rc, err) == (2, line)
    deadline = time.monotonic() + 30   # the parser processes end with the main one
    while [w for w in workers if alive(w)]:
        assert time.monotonic() < deadline, [w for w in workers if alive(w)]
        time.sleep(0.1)
    spill = tmp_path / "w.duckdb.tmp"   # DuckDB's spill files go with the warehouse's connection
    assert not spill.exists() or list(spill.iterdir()) == []
    again = subprocess.run(GW + ["nightly", str(archive), "-w", str(wh), "--out", str(out), "-q"],
                           env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True, timeout=300)
    assert again.returncode in (0, 1), again.stderr
    con = duckdb.connect(str(wh), read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM runs WHERE NOT missing").fetchall() == [(260,)]
    finally:
        con.close()

