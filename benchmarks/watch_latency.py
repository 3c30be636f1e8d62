"""Watch latency: run folder complete -> its verdicts committed to the warehouse.

    .venv/bin/python benchmarks/watch_latency.py [--runs 50] [--rate 5] [--base 1000] [--workdir DIR]

``measure(...)`` (for benchmarks/bench.py) writes a synthetic archive (`groundwork synth`),
ingests, lints and verifies ``base`` of its runs, then, for each mode (file events, and polling
every ``poll`` seconds), runs a watch (groundwork.jobs.watch.Watch, with the source check) while
a separate process lands ``runs`` more runs at a steady ``rate`` per second, each written in the
workbench's order (envelope.json, request.json, the index line, spans.jsonl, grounding.txt,
sources.txt). A run's latency is the time from its sources.txt being closed (the lander's clock)
to the watch having committed its lint and verify verdicts and closed the warehouse (the
watch's clock; one machine, one wall clock). Reports median, p95 and max latency, the batches,
the watch's CPU time per run and its memory (RSS) before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

LANDER = r"""
import json, os, sys, time
src, dst, rate, out = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
lines = json.loads(sys.stdin.read())
time.sleep(float(sys.argv[5]))
done = {}
start = time.monotonic()
for i, (inv, line) in enumerate(lines):
    wait = start + i / rate - time.monotonic()
    if wait > 0:
        time.sleep(wait)
    folder = os.path.join(dst, inv)
    os.mkdir(folder)
    def copy(name):
        path = os.path.join(src, inv, name)
        if os.path.exists(path):
            with open(path, "rb") as fh:
                data = fh.read()
            with open(os.path.join(folder, name), "wb") as fh:
                fh.write(data)
    copy("envelope.json")
    copy("request.json")
    with open(os.path.join(dst, "invocations.jsonl"), "a") as fh:
        fh.write(line + "\n")
    copy("spans.jsonl")
    copy("grounding.txt")
    copy("sources.txt")
    done[inv] = time.time()
with open(out, "w") as fh:
    json.dump(done, fh)
"""


def _rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, -(-int(q * 100) * len(ordered) // 100) - 1))]


def _archive(work: Path, base: int, landing: int, seed: int):
    """(staged runs dir, watched runs dir, sources.yaml, index lines to land)."""
    from groundwork.synth import generate

    stage = work / "stage"
    # The synthetic archive's malformed index lines and odd folders (a few percent) are neither in
    # the watched archive nor landed: enough runs are made that ``base`` and ``landing`` remain.
    generate(stage, base + landing + base // 10 + 100, seed=seed, violation_rate=0.3, workers=2)
    lines, ids, seen = [], [], set()
    for line in (stage / "runs" / "invocations.jsonl").read_text(encoding="utf-8").splitlines():
        try:
            inv = json.loads(line).get("invocation_id")
        except (ValueError, AttributeError):
            continue
        if isinstance(inv, str) and inv not in seen and (stage / "runs" / inv / "envelope.json").is_file():
            lines.append(line)
            ids.append(inv)
            seen.add(inv)
    if len(ids) < base + landing:
        raise SystemExit(f"the synthetic archive holds {len(ids)} runs that can land, not {base + landing}")
    ids, lines = ids[:base + landing], lines[:base + landing]
    runs = work / "archive" / "runs"
    runs.mkdir(parents=True)
    shutil.copytree(stage / "runs" / "schemas", runs / "schemas")
    for inv in ids[:base]:
        shutil.copytree(stage / "runs" / inv, runs / inv)
    (runs / "invocations.jsonl").write_text("".join(line + "\n" for line in lines[:base]), encoding="utf-8")
    return stage / "runs", runs, stage / "sources.yaml", list(zip(ids[base:], lines[base:]))


def _judge_base(runs: Path, warehouse: Path, sources: Path) -> None:
    from groundwork.checks.lint import lint_warehouse
    from groundwork.checks.verify import verify_warehouse
    from groundwork.core.warehouse import connect
    from groundwork.ingest import ingest_archive

    con = connect(warehouse)
    try:
        ingest_archive(con, runs)
        lint_warehouse(con)
        verify_warehouse(con, sources)
    finally:
        con.close()


def _one_mode(stage: Path, runs: Path, warehouse: Path, sources: Path, landing, rate: float, poll, work: Path) -> dict:
    from groundwork.jobs.watch import Watch

    times = work / f"landed-{'poll' if poll else 'events'}.json"
    committed: dict[str, float] = {}
    batches = []
    wanted = {inv for inv, _ in landing}
    stop = threading.Event()

    def on_batch(batch) -> None:
        batches.append(len(batch.runs))
        for inv in batch.runs:
            committed[inv] = batch.committed_wall
        if wanted <= committed.keys():
            stop.set()

    watch = Watch(runs, warehouse=warehouse, sources=sources, poll=poll, stop=stop, on_batch=on_batch,
                  out=lambda line: None, err=lambda line: print(line, file=sys.stderr))
    landers: list[subprocess.Popen] = []

    def land_once_started() -> None:
        # The runs land on a watch that has started: read its sources file and caught up with
        # the archive (a few seconds at 100,000 runs), as on a watch that has been running.
        while watch.rescan and not stop.is_set():
            time.sleep(0.05)
        if stop.is_set():
            return
        lander = subprocess.Popen([sys.executable, "-c", LANDER, str(stage), str(runs), str(rate), str(times), "0.5"],
                                  stdin=subprocess.PIPE, text=True)
        landers.append(lander)
        lander.stdin.write(json.dumps(landing))
        lander.stdin.close()

    starter = threading.Thread(target=land_once_started)
    starter.start()
    timer = threading.Timer(len(landing) / rate + 120, stop.set)
    timer.start()
    rss_before = _rss_mb()
    cpu = os.times()
    try:
        watch.run()
    finally:
        timer.cancel()
        stop.set()
        starter.join()
        for lander in landers:
            lander.wait()
    cpu_after = os.times()
    landed = json.loads(times.read_text())
    latency = [committed[inv] - landed[inv] for inv in landed if inv in committed]
    return {
        "runs": len(landed), "judged": len(latency), "batches": len(batches),
        "median_s": round(_quantile(latency, 0.5), 3), "p95_s": round(_quantile(latency, 0.95), 3),
        "max_s": round(max(latency), 3),
        "cpu_s_per_run": round((cpu_after.user + cpu_after.system - cpu.user - cpu.system) / max(1, len(latency)), 4),
        "rss_mb_before": round(rss_before, 1), "rss_mb_after": round(_rss_mb(), 1),
    }


def measure(workdir=None, *, runs: int = 50, rate: float = 5.0, base: int = 1000, poll: float = 0.2,
            seed: int = 16) -> dict:
    """Latency of `groundwork watch` with file events and with polling every ``poll`` s (see the
    module doc): {"events": {...}, "polling": {...}, "runs", "rate", "base", "load"}."""
    # A new folder each time (inside ``workdir`` when given): what an interrupted run left there
    # is never in the way, and is never taken for this run's archive.
    if workdir is not None:
        Path(workdir).mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="gw-watch-bench-", dir=workdir))
    try:
        stage, archive, sources, landing = _archive(work, base, 2 * runs, seed)
        warehouse = work / "warehouse.duckdb"
        _judge_base(archive, warehouse, sources)
        load = os.getloadavg()[0]
        out = {"runs": runs, "rate": rate, "base": base, "poll_s": poll}
        out["events"] = _one_mode(stage, archive, warehouse, sources, landing[:runs], rate, None, work)
        out["polling"] = _one_mode(stage, archive, warehouse, sources, landing[runs:], rate, poll, work)
        out["load"] = [round(load, 2), round(os.getloadavg()[0], 2)]
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--rate", type=float, default=5.0)
    ap.add_argument("--base", type=int, default=1000)
    ap.add_argument("--poll", type=float, default=0.2)
    ap.add_argument("--workdir")
    args = ap.parse_args(argv)
    print(json.dumps(measure(args.workdir, runs=args.runs, rate=args.rate, base=args.base, poll=args.poll), indent=2))


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
