"""Benchmark groundwork against the floor of reading the archive, on synthetic archives.

    .venv/bin/python benchmarks/bench.py [--sizes 10000,100000] [--quick] [--workdir DIR]
                                         [--ref-limit N] [--keep] [--no-write]

For each size: `groundwork synth` writes an archive; then every step runs as its own subprocess
and is timed (wall clock) with the peak RSS and CPU time of its process tree (os.wait4):

    floor            Python reading every file's bytes (os.scandir + open().read())
    duckdb           DuckDB read_json over the same JSON files (+ read_text for the .txt files),
                     materialised into tables of a DuckDB file (typed read_json on at most
                     --duckdb-limit runs, time extrapolated)
    ingest           groundwork ingest (fresh warehouse)
    re-ingest        groundwork ingest of the unchanged archive
    lint             groundwork lint (all rules, recorded)
    verify           groundwork verify against the archive's sources.yaml
    nightly #1       groundwork nightly on the ingested warehouse (its report rendering is timed
                     separately as "reports", and fleet.html's size is recorded)
    nightly +1%      groundwork nightly after adding 1 % new runs to the archive
    reference lint   tests/reference/linter.py looping over the runs in one process

Ratios are against the floor measured in the same invocation. A command that does not exist
yet is reported as "not available". Results are printed and written to BENCHMARKS.md
(and benchmarks/results.json).
"""

from __future__ import annotations

import argparse
import compileall
import datetime as dt
import importlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
GW = [PY, "-m", "groundwork.cli"]

FLOOR = r"""
import os, sys
n = total = 0
for e in os.scandir(sys.argv[1]):
    if e.is_dir():
        for f in os.scandir(e.path):
            with open(f.path, "rb") as fh:
                total += len(fh.read())
            n += 1
    else:
        with open(e.path, "rb") as fh:
            total += len(fh.read())
        n += 1
print(f"{n} files, {total} bytes")
"""

DUCKDB = r"""
import duckdb, os, sys
r, fn, db, limit = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
opts = ", union_by_name=true" if fn == "read_json" else ""
con = duckdb.connect(db)                     # a database file, so big archives spill instead of swapping
con.execute("SET memory_limit = '4GB'")
ids = sorted(e.name for e in os.scandir(r) if e.is_dir() and e.name != "schemas")
if limit and len(ids) > limit:                # a prefix of the archive; the caller extrapolates
    ids = ids[:limit]
    def files(name):
        return "[" + ", ".join(f"'{r}/{i}/{name}'" for i in ids) + "]"
else:
    def files(name):
        return f"'{r}/*/{name}'"
rows = []
for name, src in [
        ("envelope", f"{fn}({files('envelope.json')}, format='auto'{opts})"),
        ("request", f"{fn}({files('request.json')}, format='auto'{opts})"),
        ("spans", f"{fn}({files('spans.jsonl')}, format='newline_delimited'{opts})"),
        ("index", f"{fn}('{r}/invocations.jsonl', format='newline_delimited'{opts})"),
        ("grounding", f"read_text({files('grounding.txt')})"),
        ("sources", f"read_text({files('sources.txt')})")]:
    con.execute(f"CREATE TABLE t_{name} AS SELECT * FROM {src}")
    rows.append(f"{name}={con.execute(f'SELECT count(*) FROM t_{name}').fetchone()[0]}")
print(f"runs={len(ids)} " + " ".join(rows))
"""

WRITE_FLOOR = r"""
import os, resource, sys, time
src, dst = sys.argv[1], sys.argv[2]
runs = []
for e in os.scandir(src):
    if e.is_dir() and e.name != "schemas":
        runs.append((e.name, [(f.name, open(f.path, "rb").read()) for f in os.scandir(e.path)]))
r0 = resource.getrusage(resource.RUSAGE_SELF)
t = time.perf_counter()
os.mkdir(dst)
for name, files in runs:
    d = f"{dst}/{name}"
    os.mkdir(d)
    for fname, data in files:
        fd = os.open(f"{d}/{fname}", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        os.write(fd, data)
        os.close(fd)
r1 = resource.getrusage(resource.RUSAGE_SELF)
n = len(runs)
print(f"{n} {time.perf_counter() - t:.3f} {(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime) / n * 1e6:.1f}")
"""

GENERATE = r"""
import sys, time
from groundwork.synth import archive as A, scenarios as S
from groundwork.synth.pools import pools, set_records
n, records = int(sys.argv[1]), int(sys.argv[2])
set_records(records)
pools()
groups = A.plan(n, 1, 0.05)
t = time.process_time()
runs = 0
for i in range(0, len(groups), A.CHUNK):
    ctx = S.Ctx(1_000_003 + i // A.CHUNK)
    for g, sidx, nchild in groups[i:i + A.CHUNK]:
        t0 = A.T0_US + g * A.GROUP_STEP_US
        ctx.new_group(t0)
        ctx.nchild = nchild
        runs += len(A._scenario(sidx)(ctx, t0))
print(f"{(time.process_time() - t) / runs * 1e6:.1f}")
"""

NIGHTLY = r"""
import json, sys
from groundwork.jobs.nightly import run_nightly
res = run_nightly(sys.argv[1], warehouse=sys.argv[2], sources=sys.argv[3], out=sys.argv[4])
print(json.dumps({k: round(v, 3) for k, v in res.seconds.items() if isinstance(v, (int, float))}))
"""

KEEP_DERIVED = r"""
import sys, time
from groundwork.checks.store import keep_derived
from groundwork.core.warehouse import connect
con = connect(sys.argv[1], create=False)
print(keep_derived(con))
con.close()
"""

LINT_PASS = r"""
import json, sys, time
from groundwork.checks.lint import lint_warehouse
from groundwork.core.warehouse import connect
con = connect(sys.argv[1], create=False)
wall, cpu = time.perf_counter(), time.process_time()
result = lint_warehouse(con, reuse=False)  # every rule on every run, recorded, as `lint --all`
wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
con.close()
print(json.dumps({"seconds": wall, "cpu": cpu, "runs": sum(result.counts.values())}))
"""

REFERENCE = r"""
import json, os, sys, time
sys.path.insert(0, sys.argv[3])
from reference import linter as L
runs = sys.argv[1]
limit = int(sys.argv[2])
ids = sorted(e.name for e in os.scandir(runs) if e.is_dir() and e.name != "schemas")[:limit]
t = time.perf_counter()
n = bad = 0
for i in ids:
    try:
        L.lint_files(f"{runs}/{i}/spans.jsonl", f"{runs}/{i}/envelope.json")
    except L.Unlintable:
        bad += 1
    n += 1
print(json.dumps({"runs": n, "unlintable": bad, "seconds": time.perf_counter() - t}))
"""


LAUNCH = r"""
import json, os, sys, time
cmd, report = json.loads(sys.argv[1]), sys.argv[2]
t = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(cmd[0], cmd)
    finally:
        os._exit(127)
_, status, ru = os.wait4(pid, 0)
with open(report, "w") as fh:
    json.dump({"wall": time.perf_counter() - t, "rc": os.waitstatus_to_exitcode(status),
               "cpu": ru.ru_utime + ru.ru_stime, "maxrss_kb": ru.ru_maxrss}, fh)
"""


def run_step(cmd, *, cwd=None, stdout_file=None, env=None) -> dict:
    """Run a command; return wall seconds, CPU seconds, peak RSS (MB), exit code and output.

    The command is started by a small launcher process: Linux carries the forking process's RSS
    high-water mark across exec into ru_maxrss, so forking it from this (large) process would
    inflate the figure. ``env``: variables set for the command on top of this process's.
    """
    fd, report = tempfile.mkstemp(prefix="gw-bench-", suffix=".json")
    os.close(fd)
    out = open(stdout_file, "wb") if stdout_file else subprocess.PIPE
    try:
        p = subprocess.run([PY, "-c", LAUNCH, json.dumps([str(c) for c in cmd]), report], cwd=cwd, stdout=out,
                           stderr=subprocess.PIPE, env={**os.environ, **env} if env else None)
        info = json.loads(Path(report).read_text() or "{}")
    except (OSError, ValueError) as exc:
        return {"available": False, "error": str(exc)}
    finally:
        if stdout_file:
            out.close()
        Path(report).unlink(missing_ok=True)
    err = p.stderr.decode(errors="replace")
    if info.get("rc") == 127 or (info.get("rc") == 2 and ("No such command" in err or "No module named" in err)):
        return {"available": False, "error": err.strip().splitlines()[-1] if err.strip() else ""}
    return {"available": True, "wall": info["wall"], "cpu": info["cpu"], "rss_mb": info["maxrss_kb"] / 1024,
            "rc": info["rc"], "stdout": (p.stdout or b"").decode(errors="replace")[-2000:], "stderr": err[-2000:]}


def median_step(runs: list[dict], key: str = "wall", samples: str = "walls") -> dict:
    """The run with the median ``key`` time (its CPU and RSS too), with every such time kept
    under ``samples``. Only runs that have ``key`` count."""
    ok = [r for r in runs if r.get("available") and key in r]
    if not ok:
        return runs[0]
    r = dict(sorted(ok, key=lambda x: x[key])[(len(ok) - 1) // 2])
    r[samples] = [x[key] for x in ok]  # in the order they were measured
    return r


# The optional C extensions (pyproject.toml ext-modules); GROUNDWORK_NATIVE=off disables them all.
NATIVE_MODULES = ("groundwork.ingest._spans_native", "groundwork.ingest._envelope_native", "groundwork.core._canonical_native")


def machine() -> dict:
    cpu = "unknown"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = 0
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal"):
                mem = int(line.split()[1]) / 1024 / 1024
    except OSError:
        pass
    try:
        import duckdb
        duck = duckdb.__version__
    except ImportError:
        duck = "not installed"
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                text=True).stdout.strip() or os.environ.get("GW_BENCH_COMMIT", "?")
    except OSError:
        commit = "?"
    native = []
    for module in NATIVE_MODULES:
        try:
            importlib.import_module(module)
            native.append(module)
        except ImportError:
            pass
    return {"native": native, "commit": commit, "cpu": cpu, "cores": os.cpu_count(), "ram_gb": round(mem, 1), "python": platform.python_version(),
            "duckdb": duck, "os": f"{platform.system()} {platform.release()}",
            "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "loadavg_start": os.getloadavg()}


def add_new_runs(work: Path, main: Path, n: int, seed: int) -> None:
    """Append n new runs (another seed) to the archive, as the store would: folders + index lines."""
    extra = work / "extra"
    r = run_step(GW + ["synth", str(extra), "--runs", str(n), "--seed", str(seed)], cwd=ROOT)
    if not r.get("available") or r["rc"] != 0:
        raise SystemExit(f"synth failed: {r.get('stderr') or r.get('error')}")
    runs = main / "runs"
    for p in (extra / "runs").iterdir():
        if p.is_dir() and p.name != "schemas":
            os.rename(p, runs / p.name)
    with open(runs / "invocations.jsonl", "ab") as fh:
        fh.write((extra / "runs" / "invocations.jsonl").read_bytes())
    shutil.rmtree(extra)


def bench_size(n: int, work: Path, args) -> dict:
    res: dict = {"runs": n, "steps": {}}
    steps = res["steps"]
    arch = work / f"fleet-{n}"
    wh = work / f"w-{n}.duckdb"
    rep = work / f"reports-{n}"
    print(f"\n== {n:,} runs ==", flush=True)

    def show(name, r):
        steps[name] = r
        if not r.get("available"):
            print(f"  {name:16s} not available", flush=True)
        else:
            print(f"  {name:16s} {r['wall']:8.2f} s  cpu {r['cpu']:7.2f} s  rss {r['rss_mb']:7.0f} MB  rc {r['rc']}",
                  flush=True)

    show("synth", run_step(GW + ["synth", str(arch), "--runs", str(n), "--seed", "1",
                                 "--records", str(max(400, n))], cwd=ROOT))
    if not steps["synth"].get("available") or steps["synth"]["rc"] != 0:
        raise SystemExit("synth failed: " + steps["synth"].get("stderr", ""))
    w = run_step([PY, "-c", WRITE_FLOOR, str(arch / "runs"), str(work / f"copy-{n}")], cwd=ROOT)
    if w.get("available") and w["rc"] == 0:
        _, secs, us = w["stdout"].split()
        res["write_floor"] = {"seconds": float(secs), "cpu_us_per_run": float(us)}
    shutil.rmtree(work / f"copy-{n}", ignore_errors=True)
    g = run_step([PY, "-c", GENERATE, str(min(n, 20000)), str(max(400, n))], cwd=ROOT)
    if g.get("available") and g["rc"] == 0:
        res["synth_generate_us_per_run"] = float(g["stdout"].strip().splitlines()[-1])
    runs = arch / "runs"
    res["files_bytes"] = sum(f.stat().st_size for f in runs.rglob("*") if f.is_file())
    evidence = 0
    with open(arch / "truth.jsonl", encoding="utf-8") as fh:        # streamed: keep this process small
        for line in fh:
            iid = json.loads(line)["invocation_id"]
            e = json.loads((runs / iid / "envelope.json").read_bytes()).get("evidence")
            evidence += len(e) if isinstance(e, list) else 0
    res["evidence_items"] = evidence
    res["snapshot_records"] = max(400, n)
    # drop the page cache effect of generation as far as we can without root: read once first
    run_step([PY, "-c", FLOOR, str(runs)])
    floors = [run_step([PY, "-c", FLOOR, str(runs)])]
    for label, fn in (("duckdb read_json", "read_json"), ("duckdb objects", "read_json_objects")):
        db = work / f"duck-{n}.duckdb"
        lim = args.duckdb_limit if fn == "read_json" else 0
        r = run_step([PY, "-c", DUCKDB, str(runs), fn, str(db), str(lim)])
        if r.get("available") and r["rc"] == 0 and lim and n > lim:
            r["runs_looped"] = lim
            r["extrapolated_wall"] = r["wall"] * n / lim
            r["runs_per_s"] = lim / r["wall"]
        show(label, r)
        db.unlink(missing_ok=True)
    ingests, pure = [], []
    wh_pure = work / f"w-{n}-pure.duckdb"
    for i in range(args.repeat):  # floor and ingests alternate; each ingest into a new warehouse
        for p in [*work.glob(f"w-{n}.duckdb*"), *work.glob(f"w-{n}-pure.duckdb*")]:
            p.unlink()
        ingests.append(run_step(GW + ["ingest", str(runs), "-w", str(wh), "-q"], cwd=ROOT))
        # the same without the C fast paths: what an install without a C compiler runs
        pure.append(run_step(GW + ["ingest", str(runs), "-w", str(wh_pure), "-q"], cwd=ROOT,
                             env={"GROUNDWORK_NATIVE": "off"}))
        if i + 1 < args.repeat:
            floors.append(run_step([PY, "-c", FLOOR, str(runs)]))
    for p in work.glob(f"w-{n}-pure.duckdb*"):
        p.unlink()
    show("floor", median_step(floors))
    show("ingest", median_step(ingests))
    show("ingest, pure Python", median_step(pure))
    floor_db = work / f"pipeline-{n}.duckdb"
    show("ingest, no parser", run_step([PY, str(ROOT / "benchmarks" / "pipeline_floor.py"), str(runs), str(floor_db)],
                                       cwd=ROOT))
    for p in work.glob(f"pipeline-{n}.duckdb*"):
        p.unlink()
    show("re-ingest", run_step(GW + ["ingest", str(runs), "-w", str(wh), "-q"], cwd=ROOT))
    show("lint", run_step(GW + ["lint", "-w", str(wh)], cwd=ROOT, stdout_file=os.devnull))
    show("keep derived", run_step([PY, "-c", KEEP_DERIVED, str(wh)], cwd=ROOT))
    # A full re-lint takes well under a second at 100k runs, where one sample varies by ~0.05 s:
    # each is timed args.repeat times, alternating, in new processes; the medians are reported.
    relints, passes = [], []
    for _ in range(args.repeat):
        relints.append(run_step(GW + ["lint", "-w", str(wh), "--all"], cwd=ROOT, stdout_file=os.devnull))
        r = run_step([PY, "-c", LINT_PASS, str(wh)], cwd=ROOT)
        if r.get("available") and r["rc"] == 0:
            info = json.loads(r["stdout"].strip().splitlines()[-1])
            r["pass_seconds"], r["pass_cpu"] = info["seconds"], info["cpu"]
        passes.append(r)
    show("re-lint --all", median_step(relints))
    show("re-lint in-process", median_step(passes, key="pass_seconds", samples="pass_walls"))
    show("verify", run_step(GW + ["verify", "-w", str(wh), "-s", str(arch / "sources.yaml")], cwd=ROOT,
                            stdout_file=os.devnull))
    r = run_step([PY, "-c", NIGHTLY, str(runs), str(wh), str(arch / "sources.yaml"), str(rep)], cwd=ROOT)
    show("nightly #1", r)
    if r.get("available") and r["rc"] in (0, 1):
        try:
            secs = json.loads(r["stdout"].strip().splitlines()[-1])
            res["nightly1_seconds"] = secs
            steps["reports"] = {"available": True, "wall": secs.get("reports", float("nan")), "cpu": float("nan"),
                                "rss_mb": r["rss_mb"], "rc": r["rc"], "note": "inside nightly #1"}
            print(f"  {'reports':16s} {secs.get('reports', float('nan')):8.2f} s  (inside nightly #1)")
        except (ValueError, IndexError):
            pass
        fleet = rep / "fleet.html"
        res["fleet_html_bytes"] = fleet.stat().st_size if fleet.exists() else None
    add_new_runs(work, arch, max(1, n // 100), 1000 + n)
    r = run_step([PY, "-c", NIGHTLY, str(runs), str(wh), str(arch / "sources.yaml"), str(rep)], cwd=ROOT)
    show("nightly +1%", r)
    if r.get("available") and r.get("stdout"):
        try:
            res["nightly2_seconds"] = json.loads(r["stdout"].strip().splitlines()[-1])
        except (ValueError, IndexError):
            pass
    limit = min(n, args.ref_limit) if args.ref_limit else n
    r = run_step([PY, "-c", REFERENCE, str(runs), str(limit), str(ROOT)], cwd=ROOT)
    if r.get("available") and r["rc"] == 0:
        info = json.loads(r["stdout"].strip().splitlines()[-1])
        r["runs_looped"] = info["runs"]
        r["runs_per_s"] = info["runs"] / info["seconds"] if info["seconds"] else float("nan")
        r["extrapolated_wall"] = n / r["runs_per_s"]
    show("reference lint", r)
    if not args.keep:
        shutil.rmtree(arch, ignore_errors=True)
        shutil.rmtree(rep, ignore_errors=True)
        for p in work.glob(f"w-{n}.duckdb*"):
            p.unlink()
    return res


ORDER = ["synth", "floor", "duckdb read_json", "duckdb objects", "ingest", "ingest, pure Python", "ingest, no parser", "re-ingest", "lint", "keep derived", "re-lint --all",
         "re-lint in-process", "verify", "nightly #1", "reports", "nightly +1%", "reference lint"]


def table(res: dict) -> str:
    n = res["runs"]
    steps = res["steps"]
    floor = steps.get("floor", {}).get("wall")
    lines = ["| step | wall s | × floor | runs/s | CPU s | peak RSS MB |", "|---|---:|---:|---:|---:|---:|"]
    for name in ORDER:
        r = steps.get(name)
        if r is None:
            continue
        if not r.get("available"):
            lines.append(f"| {name} | not available | | | | |")
            continue
        wall = r["wall"]
        note = ""
        if r.get("runs_looped") and r["runs_looped"] != n:
            note = f" (ran on {r['runs_looped']:,} runs, time extrapolated)"
            wall = r["extrapolated_wall"]
        if r.get("runs_per_s"):
            rate = r["runs_per_s"]
        else:
            rate = n / wall if wall else float("nan")
        ratio = f"{wall / floor:.1f}" if floor else ""
        cpu_v = r.get("cpu")
        if cpu_v == cpu_v and r.get("runs_looped") and r["runs_looped"] != n:
            cpu_v = cpu_v * n / r["runs_looped"]
        cpu = f"{cpu_v:.1f}" if cpu_v == cpu_v and cpu_v is not None else "–"
        rc = "" if r.get("rc") in (0, 1) else f" (exit {r.get('rc')})"
        lines.append(f"| {name}{note}{rc} | {wall:.2f} | {ratio} | {rate:,.0f} | {cpu} | {r['rss_mb']:.0f} |")
    return "\n".join(lines)


def targets(results: list[dict]) -> list[str]:
    out = []
    by = {r["runs"]: r for r in results}

    def st(r, name):
        s = r["steps"].get(name, {})
        return s if s.get("available") else None

    for n, r in sorted(by.items()):
        ing, fl = st(r, "ingest"), st(r, "floor")
        if ing and fl:
            each = ""
            if len(ing.get("walls", ())) > 1:
                each = (f"; medians of {len(ing['walls'])} alternating runs: ingest "
                        + ", ".join(f"{w:.2f}" for w in ing["walls"]) + " s, floor "
                        + ", ".join(f"{w:.2f}" for w in fl.get("walls", ())) + " s")
            out.append(f"- ingest at {n:,} runs: {ing['wall'] / fl['wall']:.2f}× the floor "
                       f"({ing['wall']:.2f} s vs {fl['wall']:.2f} s{each}) (target ≤ 3× at 20k runs)")
            py = st(r, "ingest, pure Python")
            if py:
                out.append(f"- the same ingest without the C fast paths (GROUNDWORK_NATIVE=off, as installed without a C "
                           f"compiler) at {n:,} runs: {py['wall'] / fl['wall']:.2f}× the floor ({py['wall']:.2f} s, "
                           f"{py['cpu']:.1f} s CPU; with them {ing['cpu']:.1f} s CPU)")
            bare = st(r, "ingest, no parser")
            if bare:
                out.append(f"- the same pipeline without the parser at {n:,} runs: {bare['wall'] / fl['wall']:.2f}× the floor "
                           f"({bare['wall']:.2f} s, {bare['cpu']:.1f} s CPU; the ingest {ing['cpu']:.1f} s CPU): parsing "
                           f"adds {ing['wall'] - bare['wall']:.2f} s")
        ref = st(r, "reference lint")
        for name, what in (("lint", "first lint after the ingest (CLI)"), ("re-lint --all", "re-lint of every run (CLI, --all)"),
                           ("re-lint in-process", "re-lint of every run (lint_warehouse(reuse=False), in-process)")):
            lint = st(r, name)
            if not lint:
                continue
            wall = lint.get("pass_seconds", lint["wall"])
            samples = lint.get("pass_walls", lint.get("walls", ()))
            each = (f" (median of {len(samples)}: " + ", ".join(f"{w:.2f}" for w in samples) + " s)"
                    if len(samples) > 1 else "")
            line = f"- {what} at {n:,} runs: {wall:.2f} s{each} (target ≤ 2 s at 100k)"
            if ref and ref.get("runs_per_s"):
                line += f"; {n / wall / ref['runs_per_s']:.1f}× the reference linter's runs/s (target ≥ 20×)"
            out.append(line)
        ver = st(r, "verify")
        if ver:
            out.append(f"- verify (CLI) at {n:,} runs ({r.get('evidence_items', 0):,} evidence items, "
                       f"{r.get('snapshot_records', 0):,} snapshot records, the copy loaded and hashed by the same "
                       f"command): {ver['wall']:.2f} s (the ≤ 2 s target is for 100,000 items against a loaded copy: "
                       f"tests/bench_source_check.py)")
        rep = st(r, "reports")
        if rep:
            size = r.get("fleet_html_bytes")
            out.append(f"- reports at {n:,} runs: {rep['wall']:.2f} s, fleet.html "
                       f"{(size or 0) / 1e6:.2f} MB (targets ≤ 10 s and < 5 MB at 100k)")
        syn = st(r, "synth")
        if syn:
            gen = r.get("synth_generate_us_per_run")
            out.append(f"- synth at {n:,} runs: {n / syn['wall']:,.0f} runs/s wall, {syn['cpu'] / n * 1e6:.0f} µs CPU "
                       f"per run for the whole command (start-up, pools, 2 workers, writing)"
                       + (f", of which {gen:.0f} µs building the run's bytes" if gen else "")
                       + " (target ≥ 20,000 runs/s)")
            wf = r.get("write_floor")
            if wf:
                out.append(f"- write floor at {n:,} runs (one process creating the same folders and files from bytes "
                           f"in memory): {n / wf['seconds']:,.0f} runs/s, {wf['cpu_us_per_run']:.0f} µs CPU per run")
    rss = {n: st(r, "ingest")["rss_mb"] for n, r in by.items() if st(r, "ingest")}
    if len(rss) > 1:
        out.append("- ingest peak RSS by size: " + ", ".join(f"{n:,} runs {v:.0f} MB" for n, v in sorted(rss.items())))
    return out


def write_markdown(path: Path, mach: dict, results: list[dict], args) -> None:
    parts = ["# Benchmarks", "",
             "Measured by `benchmarks/bench.py` (pure stdlib + the project) on synthetic archives written by "
             "`groundwork synth` (seed 1, 5 % violating groups, snapshot copy with max(400, runs) records). Every step "
             "runs as its own process; *× floor* divides its wall time by the time Python needs just to read every "
             "byte of the archive in the same invocation. Peak RSS is the largest process of the step's process tree "
             "(`os.wait4` in a small launcher process), CPU is user+system of the tree. The project's modules are "
             "compiled to bytecode first, as in an installed package.", "",
             "## Machine", "",
             f"- CPU: {mach['cpu']}, {mach['cores']} cores; RAM {mach['ram_gb']} GB; {mach['os']}",
             f"- Python {mach['python']}, DuckDB {mach['duckdb']}; C fast paths built: {', '.join(mach.get('native', [])) or 'none'}",
             f"- Date: {mach['date']}; load average at start {', '.join(f'{x:.1f}' for x in mach['loadavg_start'])}, "
             f"at end {', '.join(f'{x:.1f}' for x in mach.get('loadavg_end', ()))}",
             f"- Command: `{' '.join(args.argv)}` at commit {mach.get('commit', '?')}", "",
             "Rows: *duckdb read_json* = typed `read_json(..., union_by_name=true)` into tables of a DuckDB file (4 GB memory limit); *duckdb objects* = "
             "`read_json_objects` (untyped JSON values); *ingest* = `groundwork ingest` with the C fast paths this "
             "install has (see Machine); *ingest, pure Python* = the same with `GROUNDWORK_NATIVE=off`; *ingest, no parser* = `benchmarks/pipeline_floor.py`, the "
             "ingest's own machinery (parser processes, listing, fingerprints, reading, Arrow IPC, batched DuckDB "
             "writes) storing each file's bytes as one BLOB instead of parsing it; *lint* = the first `groundwork lint` after the ingest; "
             "*keep derived* = `store.keep_derived` keeping the runs' derived relations in the warehouse (the nightly does it "
             "once its reports are written); *re-lint --all* = `groundwork lint --all` (every rule on every run, as after a "
             "rule change); *re-lint in-process* = the same pass as a library call (`lint_warehouse(reuse=False)`), its "
             "own wall time in the targets (the row's time includes interpreter start-up); "
             "*reports* = report rendering inside nightly #1 (full fleet); "
             "*nightly +1%* = the next nightly after 1 % new runs were added (runs/s over the whole fleet); "
             "*reference lint* = the tests' reference linter (tests/reference/linter.py) in one process.", ""]
    if mach["loadavg_start"][0] > (mach["cores"] or 1):
        parts += ["**The machine was shared with other jobs during this run** (load average above the core count): "
                  "wall times are inflated, CPU times are the better guide to cost.", ""]
    parts += ["## Targets", ""] + targets(results) + [""]
    for r in results:
        parts += [f"## {r['runs']:,} runs ({r.get('files_bytes', 0) / 1e6:,.0f} MB on disk)", "", table(r), ""]
        for key, label in (("nightly1_seconds", "nightly #1 phases (s)"), ("nightly2_seconds", "nightly +1 % phases (s)")):
            if r.get(key):
                parts.append(f"{label}: " + ", ".join(f"{k} {v}" for k, v in r[key].items()))
        parts.append("")
    text = "\n".join(parts)
    # Hand-written sections around the generated part survive: only the text between the markers
    # is replaced when the file has them.
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    if BEGIN in old and END in old:
        head, rest = old.split(BEGIN, 1)
        tail = rest.split(END, 1)[1]
        text = head + BEGIN + "\n" + text.split("\n", 2)[2] + "\n" + END + tail
    path.write_text(text, encoding="utf-8")


BEGIN, END = "<!-- bench.py: generated below -->", "<!-- bench.py: generated above -->"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,100000", help="comma-separated archive sizes (runs)")
    ap.add_argument("--quick", action="store_true", help="one small archive (2,000 runs) for development")
    ap.add_argument("--workdir", default=None, help="where archives and warehouses go (default: a temp dir)")
    ap.add_argument("--ref-limit", type=int, default=20000,
                    help="loop the reference linter over at most this many runs (rate extrapolated); 0 = all")
    ap.add_argument("--duckdb-limit", type=int, default=20000,
                    help="typed read_json over at most this many runs (time extrapolated); 0 = all")
    ap.add_argument("--repeat", type=int, default=3,
                    help="measure the floor and the fresh ingest this many times, alternating; report the medians")
    ap.add_argument("--keep", action="store_true", help="keep archives, warehouses and reports")
    ap.add_argument("--no-write", action="store_true", help="do not write BENCHMARKS.md / results.json")
    args = ap.parse_args(argv)
    args.argv = ["benchmarks/bench.py"] + (argv if argv is not None else sys.argv[1:])
    sizes = [2000] if args.quick else [int(x) for x in args.sizes.split(",") if x.strip()]
    work = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="gw-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    # Every step is a new interpreter (and an ingest spawns parser processes): with no bytecode
    # cached each would compile the project's modules again (~40 ms of CPU a process), which an
    # installed package never does. This sandbox sets PYTHONDONTWRITEBYTECODE=1, so compile here.
    for package in ("groundwork", "ingest", "reports"):
        compileall.compile_dir(ROOT / package, quiet=1)
    # Likewise a new warehouse starts as a copy of the cached empty one (groundwork.core.warehouse),
    # made once per schema and DuckDB version: make it now, not inside the first timed ingest.
    run_step([PY, "-c", "import sys; from groundwork.core.warehouse import connect; connect(sys.argv[1]).close()",
              str(work / "warm.duckdb")], cwd=ROOT)
    mach = machine()
    print(f"machine: {mach['cpu']}, {mach['cores']} cores, {mach['ram_gb']} GB, Python {mach['python']}, "
          f"DuckDB {mach['duckdb']}; C fast paths: {', '.join(mach['native']) or 'none'}; workdir {work}")
    results = [bench_size(n, work, args) for n in sizes]
    mach["loadavg_end"] = os.getloadavg()
    for r in results:
        print(f"\n{r['runs']:,} runs\n" + table(r))
    print("\n" + "\n".join(targets(results)))
    if not args.no_write and not args.quick:
        write_markdown(ROOT / "BENCHMARKS.md", mach, results, args)
        (ROOT / "benchmarks" / "results.json").write_text(
            json.dumps({"machine": mach, "results": results}, indent=2, default=str) + "\n", encoding="utf-8")
        print(f"\nwrote {ROOT / 'BENCHMARKS.md'}")
    if not args.keep and not args.workdir:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
