"""A bounded load on `groundwork serve`, on loopback only: ``requests`` GETs from ``concurrency``
client threads, spread over the pages a user opens (the runs list, filtered and sorted, a run page,
a rule page, the rule list, an ad-hoc query and a saved one).

    .venv/bin/python benchmarks/serve_load.py [--warehouse warehouse.duckdb.example] [--requests 200] [--concurrency 8]

``measure(warehouse, ...)`` (for benchmarks/bench.py) starts `groundwork serve --port 0` as its own
process, waits for its address line, sends the requests (each thread its own keep-alive
connection, http.client), then stops it with SIGTERM. Reports the errors (any status other than
200, or a failed connection), p50 / p95 / max latency in milliseconds, requests per second, and
the server's CPU seconds (user + system, from /proc) over the load and per request. The load is
bounded in count; each request in time (``timeout``).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import quote, urlsplit

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_WAREHOUSE = ROOT / "warehouse.duckdb.example"


def paths(run_id: str) -> list[str]:
    """The mix of pages: one of each per round."""
    return [
        "/",
        "/?status=failed&sort=agent_id&desc=0",
        "/?agent=fake.none&code=G0&page=1",
        f"/runs/{quote(run_id, safe='')}/",
        "/rules/G1",
        "/rules",
        "/sql?q=" + quote("SELECT agent_id, count(*) AS runs FROM run_summary GROUP BY 1 ORDER BY 2 DESC"),
        "/sql?saved=agent_violation_rate&format=json",
    ]


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def _first_run(warehouse: Path) -> str:
    import duckdb
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        row = con.execute("SELECT invocation_id FROM run_summary WHERE lint_status <> 'passed' "
                          "ORDER BY invocation_id LIMIT 1").fetchone() or \
            con.execute("SELECT invocation_id FROM runs ORDER BY 1 LIMIT 1").fetchone()
        return row[0]
    finally:
        con.close()


def load(base: str, mix: list[str], requests: int, concurrency: int, timeout: float = 60.0) -> dict:
    """Send ``requests`` GETs (``mix`` in turn) from ``concurrency`` threads to ``base`` (loopback)."""
    parts = urlsplit(base)
    assert parts.hostname in ("127.0.0.1", "localhost", "::1"), "the load goes to loopback only"
    latencies: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    counter = iter(range(requests))

    def client():
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
        try:
            while True:
                with lock:
                    i = next(counter, None)
                if i is None:
                    return
                path = mix[i % len(mix)]
                started = time.perf_counter()
                try:
                    conn.request("GET", path)
                    response = conn.getresponse()
                    response.read()
                    ok = response.status == 200
                    problem = None if ok else f"{path}: status {response.status}"
                except (OSError, http.client.HTTPException) as exc:
                    problem = f"{path}: {type(exc).__name__}: {exc}"
                    conn.close()
                    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
                elapsed = time.perf_counter() - started
                with lock:
                    latencies.append(elapsed)
                    if problem:
                        errors.append(problem)
        finally:
            conn.close()

    started = time.perf_counter()
    threads = [threading.Thread(target=client) for _ in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - started
    ms = [x * 1000 for x in latencies]
    return {"requests": len(latencies), "concurrency": concurrency, "errors": len(errors), "error_examples": errors[:5],
            "wall_seconds": round(wall, 3), "requests_per_second": round(len(latencies) / wall, 1) if wall else None,
            "latency_ms": {"p50": round(statistics.median(ms), 1), "p95": round(_percentile(ms, 0.95), 1),
                           "max": round(max(ms), 1)}}


def measure(warehouse: str | Path = DEFAULT_WAREHOUSE, *, requests: int = 200, concurrency: int = 8,
            groundwork: list[str] | None = None) -> dict:
    """Start `groundwork serve --port 0` on ``warehouse``, put the bounded load on it, stop it."""
    warehouse = Path(warehouse)
    command = groundwork or [sys.executable, "-c", "from groundwork.cli import main; main()"]
    proc = subprocess.Popen([*command, "serve", "--warehouse", str(warehouse), "--host", "127.0.0.1", "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        m = re.search(r"(http://127\.0\.0\.1:\d+/)", line)
        if not m:
            raise RuntimeError(f"groundwork serve did not start: {line!r} {proc.stderr.read()[-2000:]}")
        base = m.group(1).rstrip("/")
        mix = paths(_first_run(warehouse))
        load(base, mix, len(mix), 1)                     # warm-up: one of each page
        cpu0 = _cpu_seconds(proc.pid)
        result = load(base, mix, requests, concurrency)
        cpu = _cpu_seconds(proc.pid) - cpu0
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
    result.update(warehouse=str(warehouse), server_cpu_seconds=round(cpu, 3),
                  server_cpu_ms_per_request=round(1000 * cpu / max(1, result["requests"]), 2),
                  pages=mix, load_average=os.getloadavg(), exit_status=proc.returncode)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--warehouse", default=str(DEFAULT_WAREHOUSE))
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    print(json.dumps(measure(args.warehouse, requests=args.requests, concurrency=args.concurrency), indent=2))


if __name__ == "__main__":
    main()
