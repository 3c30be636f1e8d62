"""Runs/s of `groundwork spark run` per Spark master against the local DuckDB path, on one archive.

    python benchmarks/spark_bench.py ARCHIVE [--masters local[1] local[2]]

``measure(archive)`` is what benchmarks/bench.py calls: for each master, a fresh OUT and a cold
pass (ingest + every rule + texts, the job of `groundwork spark run ARCHIVE/runs --out OUT
--sources ARCHIVE/sources.yaml`), in its own process (a Spark session's master is fixed for the
process); and the local path on the same archive: `groundwork ingest` + `lint` + `verify` into a
fresh warehouse file. Wall seconds, runs/s, and the pass's phases.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_CHILD = r"""
import json, sys, time
from groundwork.spark.session import session
from groundwork.spark.job import run
master, runs, out, sources = sys.argv[1:5]
t0 = time.perf_counter()
spark = session(master, local_dir=out + "-warehouse")
start = time.perf_counter() - t0
result = run(spark, runs, out, sources=sources or None)
print(json.dumps({"runs": result.runs, "session_start": start, **result.seconds}))
"""


def _spark(master: str, archive: Path, work: Path) -> dict:
    out = work / f"out-{master.replace('[', '').replace(']', '')}"
    shutil.rmtree(out, ignore_errors=True)
    sources = archive / "sources.yaml"
    t = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _CHILD, master, str(archive / "runs"), str(out),
                           str(sources) if sources.is_file() else ""], capture_output=True, text=True,
                          env=dict(os.environ, TZ="UTC"))
    wall = time.perf_counter() - t
    if done.returncode != 0:
        raise RuntimeError(f"spark pass on {master} failed: {done.stderr[-2000:]}")
    phases = json.loads(done.stdout.strip().splitlines()[-1])
    shutil.rmtree(out, ignore_errors=True)
    return {"wall": wall, "runs_per_s": phases["runs"] / wall, "phases": phases}


def _local(archive: Path, work: Path) -> dict:
    warehouse = work / "local.duckdb"
    warehouse.unlink(missing_ok=True)
    exe = [str(Path(sys.executable).with_name("groundwork"))]
    steps = [exe + ["ingest", str(archive / "runs"), "--warehouse", str(warehouse)],
             exe + ["lint", "--warehouse", str(warehouse)]]
    if (archive / "sources.yaml").is_file():
        steps.append(exe + ["verify", "--warehouse", str(warehouse), "--sources", str(archive / "sources.yaml")])
    t = time.perf_counter()
    for step in steps:
        done = subprocess.run(step, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if done.returncode not in (0, 1):
            raise RuntimeError(f"{' '.join(step)} failed: {done.stderr[-2000:]}")
    wall = time.perf_counter() - t
    warehouse.unlink(missing_ok=True)
    runs = sum(1 for p in (archive / "runs").iterdir() if p.is_dir() and p.name != "schemas")
    return {"wall": wall, "runs_per_s": runs / wall}


def measure(archive, masters=("local[1]", "local[2]")) -> dict:
    """{"runs": N, "local": {...}, "spark": {master: {...}}}: wall seconds and runs/s of each path."""
    archive = Path(archive)
    work = Path(tempfile.mkdtemp(prefix="spark-bench-"))
    try:
        runs = sum(1 for p in (archive / "runs").iterdir() if p.is_dir() and p.name != "schemas")
        result = {"runs": runs, "local": _local(archive, work), "spark": {}}
        for master in masters:
            result["spark"][master] = _spark(master, archive, work)
        return result
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("archive", help="a `groundwork synth` folder (runs/, sources.yaml)")
    p.add_argument("--masters", nargs="+", default=["local[1]", "local[2]"])
    args = p.parse_args(argv)
    print(json.dumps(measure(args.archive, tuple(args.masters)), indent=2))


if __name__ == "__main__":
    main()
