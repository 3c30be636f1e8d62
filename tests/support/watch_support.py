"""Helpers for the watch tests: land corpus runs in the workbench's writing order, run
`groundwork watch` as a real process, read verdicts from the warehouse."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from groundwork.core.warehouse import connect

from ingest_support import CORPUS, CORPUS_RUNS, expected

ROOT = Path(__file__).resolve().parent.parent.parent
SOURCES = CORPUS / "sources.yaml"
# The writing order of docs/rules.md#run-folder, after the folder is made.
BEFORE_INDEX = ("envelope.json", "request.json")
AFTER_INDEX = ("spans.jsonl", "grounding.txt", "sources.txt")


def index_lines() -> dict[str, str]:
    """The corpus index lines by invocation id."""
    out = {}
    for line in (CORPUS_RUNS / "invocations.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            out[json.loads(line)["invocation_id"]] = line
    return out


def corpus_ids() -> list[str]:
    """Corpus runs in index order (a delegated child before its parent)."""
    return list(index_lines())


class Lander:
    """Writes corpus runs into ``runs`` as the workbench's store does, step by step."""

    def __init__(self, runs: Path):
        self.runs = runs
        self.lines = index_lines()
        runs.mkdir(parents=True, exist_ok=True)

    def start(self, inv: str, upto: str | None = None) -> Path:
        """Make the folder and write its files in order up to and including ``upto`` (the index
        line is the step named "index"); every file when ``upto`` is None."""
        folder = self.runs / inv
        folder.mkdir()
        for step in (*BEFORE_INDEX, "index", *AFTER_INDEX):
            self.write(inv, step)
            if step == upto:
                break
        return folder

    def write(self, inv: str, step: str, data: bytes | None = None) -> None:
        if step == "index":
            with open(self.runs / "invocations.jsonl", "a", encoding="utf-8") as fh:
                fh.write(self.lines[inv] + "\n")
            return
        src = CORPUS_RUNS / inv / step
        if src.exists():
            (self.runs / inv / step).write_bytes(src.read_bytes() if data is None else data)

    def finish(self, inv: str, after: str) -> None:
        """Write the steps after ``after``."""
        steps = (*BEFORE_INDEX, "index", *AFTER_INDEX)
        for step in steps[steps.index(after) + 1:]:
            self.write(inv, step)

    def land(self, inv: str) -> float:
        """The whole run; returns time.time() when its folder is complete."""
        self.start(inv)
        return time.time()


def copy_run(inv: str, runs: Path) -> None:
    shutil.copytree(CORPUS_RUNS / inv, runs / inv, ignore=shutil.ignore_patterns("envelope.withheld.json"))


class WatchProcess:
    """`groundwork watch` as a real process (its own session, so signals reach it alone)."""

    def __init__(self, runs: Path, warehouse: Path, *extra: str, sources: bool = True, metrics: Path | None = None):
        self.metrics = metrics or warehouse.with_suffix(".prom")
        args = [sys.executable, "-m", "groundwork.cli", "watch", str(runs), "--warehouse", str(warehouse),
                "--metrics", str(self.metrics), *extra]
        if sources:
            args += ["--sources", str(SOURCES)]
        if self.metrics.exists():
            self.metrics.unlink()
        env = dict(os.environ, PYTHONPATH=str(ROOT), GROUNDWORK_LOCK_WAIT="20")
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                     start_new_session=True)

    def wait_started(self, timeout: float = 30) -> None:
        """Until the watch has written its metrics file (done once it watches)."""
        deadline = time.monotonic() + timeout
        while not self.metrics.exists():
            if self.proc.poll() is not None:
                raise AssertionError(f"watch exited {self.proc.returncode}: {self.proc.stderr.read()}")
            if time.monotonic() > deadline:
                raise AssertionError("watch did not start")
            time.sleep(0.05)

    def stop(self, sig=signal.SIGTERM, timeout: float = 30) -> tuple[int, str, str]:
        self.proc.send_signal(sig)
        try:
            out, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, err = self.proc.communicate()
        return self.proc.returncode, out, err

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()


def verdicts(warehouse: Path, ids=None) -> dict[str, dict]:
    """latest_lint / latest_verify of the warehouse, by run (opened read-only, waiting for a lock)."""
    if not warehouse.exists():
        return {}
    con = connect(warehouse, read_only=True, wait=20)
    try:
        rows = con.execute(
            "SELECT r.invocation_id, l.status, l.summary, v.status, v.summary, l.ingest_id, r.ingest_id "
            "FROM runs r LEFT JOIN latest_lint l USING (invocation_id) LEFT JOIN latest_verify v USING (invocation_id) "
            "WHERE l.invocation_id IS NOT NULL").fetchall()
    finally:
        con.close()
    out = {r[0]: {"lint": r[1], "grounding": r[2], "sources_status": r[3], "sources": r[4],
                  "linted_ingest": r[5], "ingest": r[6]} for r in rows}
    return out if ids is None else {k: v for k, v in out.items() if k in ids}


def wait_for_verdicts(warehouse: Path, ids, timeout: float = 30, sources: bool = True) -> dict[str, dict]:
    """Poll until every run of ``ids`` has its verdicts (both checks with ``sources``)."""
    ids = set(ids)
    deadline = time.monotonic() + timeout
    while True:
        got = verdicts(warehouse, ids)
        if set(got) == ids and all(v["sources_status"] for v in got.values()) or not sources and set(got) == ids:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"no verdict for {sorted(ids - set(got))} after {timeout} s")
        time.sleep(0.1)


def expected_verdict(inv: str) -> dict:
    doc = expected()[inv]
    return {"lint": "passed" if doc["lint"]["passed"] else "failed", "grounding": doc["grounding_txt"][:-1],
            "sources_status": "passed" if doc["sources"]["passed"] else "failed", "sources": doc["sources_txt"][:-1]}
