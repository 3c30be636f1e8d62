"""Benchmark groundwork as a user meets it: every step a whole new process, CPU beside wall.

    .venv/bin/python benchmarks/bench.py                    # the full run (see BENCHMARKS.md for its time)
    .venv/bin/python benchmarks/bench.py --quick            # everything at 2,000 runs, a few repetitions
    .venv/bin/python benchmarks/bench.py --write-md         # ... and regenerate BENCHMARKS.md from this run

Steps (each a new process, started by a small launcher so that its peak RSS is its own; wall
clock, CPU = user + system of its process tree, peak RSS of its largest process):

  drop-in      `groundwork lint SPANS ENVELOPE` and `groundwork verify ENVELOPE --sources FILE`
               on a corpus run, --calls times each, alternating with `python -c pass` and
               `python -c "import duckdb"` (what any Python CLI on DuckDB pays) and, with
               --workbench, the workbench's own CLI; cold (no bytecode of the project, no
               groundwork cache folder) and warm (bytecode compiled, caches made).
  ingest       at --size runs: the read floor (Python reading every byte of the archive), the
               pipeline floor (benchmarks/pipeline_floor.py: the ingest's machinery storing raw
               bytes), `groundwork ingest` into a new warehouse, and the same without the C fast
               paths; --repeat rounds, alternating; ratios against the read floor of the same run.
  nightly      `groundwork nightly ... --json --quiet` (the console script; its phase times read from
               its JSON document) at --nightly-size runs, --repeat rounds of: a truly fresh first nightly (new
               warehouse, new report folder, empty groundwork cache folder: no template, no
               compiled templates), the next nightly with nothing changed, one after one new run
               (its fixed and archive-sized cost), and one after 1 % new runs were appended to the
               same archive as the workbench would (new folders, new lines at the end of
               invocations.jsonl); ratios against that round's fresh nightly, and what each
               nightly added to the warehouse file.
               A round starts once the last round's 1 % is older than the quick scan's settle
               window (SETTLE_NS + 1 s: ``settled``).
               The same rounds again at --small-nightly-size runs (default 10,000) with the same
               number of new runs per round: what the same change costs in a smaller archive.
               Then `groundwork lint --all` (a re-lint after a rule change) and the disk taken by
               the run tables, by lint_store and by report_store.
  rss          `groundwork ingest` peak RSS at each of --rss-sizes runs (flat in archive size?).
  watch        benchmarks/watch_latency.py's measure(...) when that file exists, else "not measured": on an
               archive of 1,000 runs, then of --watch-size runs (what each batch costs in a large archive).
  spark        the function a benchmarks/spark*.py module offers (measure), else "not measured".
  serve        benchmarks/serve_load.py's measure(warehouse): `groundwork serve` under 200 GETs
               from 8 concurrent clients, on the example warehouse and on a --serve-size warehouse
               after one nightly.

Medians of the alternating repetitions are reported, with every sample kept in results.json.
The load average is recorded before and after (the machine may be shared: CPU times are then
the better guide to cost). Writes benchmarks/results.json; --write-md regenerates BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import compileall
import datetime as dt
import importlib
import importlib.util
import inspect
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
GW = [PY, "-m", "groundwork.cli"]
PACKAGES = ("groundwork", "ingest", "reports")  # the project's Python source folders
CORPUS = ROOT / "tests" / "fixtures" / "corpus"

READ_FLOOR = r"""
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

# Bytes on disk of the run tables, of lint_store and of report_store: DuckDB blocks (256 KiB) each table uses.
DISK = r"""
import json, sys
import duckdb
con = duckdb.connect(sys.argv[1], read_only=True)
block = con.execute("SELECT block_size FROM pragma_database_size()").fetchall()[0][0]
out = {}
for schema, table in con.execute("SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = current_database()").fetchall():
    blocks = con.execute(f'SELECT count(DISTINCT block_id) FROM pragma_storage_info(\'"{schema}"."{table}"\') WHERE block_id >= 0').fetchall()[0][0]
    out.setdefault(schema, 0)
    out[schema] += blocks * block
out["file"] = __import__("os").path.getsize(sys.argv[1])
print(json.dumps(out))
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


# ------------------------------------------------------------------------------ measuring


def run_step(cmd, *, cwd=ROOT, env=None, stdout_file=None) -> dict:
    """Run ``cmd`` as a new process: wall and CPU seconds, peak RSS (MB), exit code, output tail.

    A small launcher forks and execs it and reads its rusage (os.wait4): Linux carries the
    forking process's RSS high-water mark across exec, so this (large) process must not fork it.
    ``env``: variables set on top of this process's (a value None removes the variable).
    """
    fd, report = tempfile.mkstemp(prefix="gw-bench-", suffix=".json")
    os.close(fd)
    full = dict(os.environ)
    for key, value in (env or {}).items():
        if value is None:
            full.pop(key, None)
        else:
            full[key] = str(value)
    out = open(stdout_file, "wb") if stdout_file else subprocess.PIPE
    try:
        p = subprocess.run([PY, "-c", LAUNCH, json.dumps([str(c) for c in cmd]), report], cwd=cwd, stdout=out,
                           stderr=subprocess.PIPE, env=full)
        info = json.loads(Path(report).read_text() or "{}")
    finally:
        if stdout_file:
            out.close()
        Path(report).unlink(missing_ok=True)
    return {"wall": info["wall"], "cpu": info["cpu"], "rss_mb": info["maxrss_kb"] / 1024, "rc": info["rc"],
            "stdout": (p.stdout or b"").decode(errors="replace")[-100000:], "stderr": p.stderr.decode(errors="replace")[-2000:]}


def must(step: dict, what: str, codes=(0, 1)) -> dict:
    if step["rc"] not in codes:
        raise SystemExit(f"{what} failed (exit {step['rc']}): {step['stderr'].strip()[-800:]}")
    return step


def summary(samples: list[dict]) -> dict:
    """Medians of wall, CPU and peak RSS over ``samples`` (each kept, in measured order)."""
    return {"n": len(samples), "wall": statistics.median(s["wall"] for s in samples),
            "cpu": statistics.median(s["cpu"] for s in samples), "rss_mb": statistics.median(s["rss_mb"] for s in samples),
            "walls": [round(s["wall"], 4) for s in samples], "cpus": [round(s["cpu"], 4) for s in samples],
            "rcs": sorted({s["rc"] for s in samples})}


def show(label: str, s: dict, note: str = "") -> None:
    n = f" (median of {s['n']})" if s.get("n", 1) > 1 else ""
    print(f"  {label:34s} wall {s['wall']:8.3f} s   cpu {s['cpu']:8.3f} s   rss {s['rss_mb']:6.0f} MB{n}{note}", flush=True)


def rounds(repeat: int, steps: dict, verbose: bool = True) -> dict[str, list[dict]]:
    """Run every step of ``steps`` (label -> callable returning a measurement) once per round,
    in turn, for ``repeat`` rounds: alternating, so a change in the machine's load touches all."""
    got: dict[str, list[dict]] = {label: [] for label in steps}
    for i in range(repeat):
        for label, step in steps.items():
            s = step()
            got[label].append(s)
            if verbose:
                print(f"    {i + 1}/{repeat} {label}: wall {s['wall']:.3f} s, cpu {s['cpu']:.3f} s", flush=True)
    return got


# ------------------------------------------------------------------------------ environment


def drop_bytecode() -> None:
    """Remove the project's compiled bytecode (what a fresh install without it has)."""
    for package in PACKAGES:
        for cache in (ROOT / package).rglob("__pycache__"):
            shutil.rmtree(cache, ignore_errors=True)


def compile_bytecode() -> None:
    """Compile the project's modules, as an installed package that has been used once has them.
    (This sandbox sets PYTHONDONTWRITEBYTECODE=1, so no process would write them itself.)"""
    for package in PACKAGES:
        compileall.compile_dir(ROOT / package, quiet=1)


CACHES = "caches"  # the folder of the workdir that holds fresh_cache's folders, removed when bench.py ends


def fresh_cache(work: Path) -> Path:
    """A new, empty folder for $XDG_CACHE_HOME: no groundwork cache (groundwork/core/cachedir.py)."""
    (work / CACHES).mkdir(exist_ok=True)
    return Path(tempfile.mkdtemp(prefix="xdg-", dir=work / CACHES))


def cache_env(xdg: Path) -> dict:
    """The environment of a step whose groundwork caches live under ``xdg`` only."""
    return {"XDG_CACHE_HOME": xdg, "GROUNDWORK_SCHEMA_CACHE": None, "GROUNDWORK_TEMPLATE_CACHE": None}


def machine() -> dict:
    cpu, mem = "unknown", 0.0
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name"))
        mem = next(int(line.split()[1]) for line in open("/proc/meminfo") if line.startswith("MemTotal")) / 2**20
    except (OSError, StopIteration):
        pass
    probe = subprocess.run([PY, "-c", "import duckdb; print(duckdb.__version__)"],
                           capture_output=True, text=True, cwd=ROOT)
    native = []
    for module in ("groundwork.ingest._spans_native", "groundwork.ingest._envelope_native",
                   "groundwork.ingest._columns_native", "groundwork.core._canonical_native"):
        try:
            importlib.import_module(module)
            native.append(module)
        except ImportError:
            pass
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    return {"cpu": cpu, "cores": os.cpu_count(), "ram_gb": round(mem, 1), "os": f"{platform.system()} {platform.release()}",
            "python": platform.python_version(), "duckdb": probe.stdout.strip() or "?", "native": native,
            "commit": commit or "?", "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}


def synth(work: Path, n: int, seed: int = 1) -> Path:
    """A synthetic archive of ``n`` runs (kept in ``work`` for reuse); returns its runs/ folder."""
    arch = work / f"fleet-{n}"
    if not (arch / "runs" / "invocations.jsonl").exists() or (arch / GROWN).exists():
        shutil.rmtree(arch, ignore_errors=True)
        s = must(run_step(GW + ["synth", arch, "--runs", n, "--seed", seed, "--records", max(400, n)]), "synth")
        show(f"synth {n:,} runs", s)
    return arch / "runs"


WATCH_AT_SCALE = "watch, large archive"  # results.json key of the watch latency at --watch-size runs
NIGHTLIES = ("fresh first nightly", "nothing changed", "after one new run", "after 1 % new runs")  # each round's, in order
GROWN = "runs-were-appended"  # marks an archive the nightlies grew: not reused as a synth archive


def append_runs(work: Path, runs: Path, n: int, seed: int) -> None:
    """Append ``n`` new runs to the archive as the workbench's run store does: new run folders,
    then their lines at the end of runs/invocations.jsonl."""
    extra = work / f"extra-{seed}"
    shutil.rmtree(extra, ignore_errors=True)
    must(run_step(GW + ["synth", extra, "--runs", n, "--seed", seed]), "synth (new runs)")
    for p in (extra / "runs").iterdir():
        if p.is_dir() and p.name != "schemas":
            if (runs / p.name).exists():
                raise SystemExit(f"synth seed {seed} made a run id already in the archive: {p.name}")
            os.rename(p, runs / p.name)
    (runs.parent / GROWN).touch()
    with open(runs / "invocations.jsonl", "ab") as fh:
        fh.write((extra / "runs" / "invocations.jsonl").read_bytes())
    shutil.rmtree(extra)


def settled(appended: float | None) -> None:
    """Wait until the runs appended at ``appended`` (time.time()) are older than the settle window
    (groundwork.ingest.load.SETTLE_NS) plus a second. A quick scan looks again at every run whose
    files were written within that window before the previous ingest started (they may have been
    listed while still being written): without the wait, the round's "nothing changed" nightly
    would look again at the 1 % that landed seconds before its fresh nightly, which a nightly a
    day after the last one does not meet."""
    if appended is not None:
        time.sleep(max(0.0, appended + settle_s() - time.time()))


def settle_s() -> float:
    """The quick scan's settle window plus a second, in seconds."""
    from groundwork.ingest.load import SETTLE_NS

    return SETTLE_NS / 1e9 + 1


def unlink_warehouse(path: Path) -> None:
    for p in path.parent.glob(path.name + "*"):
        shutil.rmtree(p) if p.is_dir() else p.unlink()


# ------------------------------------------------------------------------------ the steps


def console_script() -> list:
    """The `groundwork` console script a user runs (python -m groundwork.cli when not installed)."""
    script = Path(PY).parent / "groundwork"
    return [script] if script.exists() else GW


IMPORT_DUCKDB = "python -c 'import duckdb'"  # what any Python tool on DuckDB pays before its first line


def bench_dropin(work: Path, args) -> dict:
    print("\n== drop-in, per call ==", flush=True)
    expected = [json.loads(line) for line in (CORPUS / "expected.jsonl").read_text(encoding="utf-8").splitlines() if line]
    run = next(e for e in expected if not e["lint"]["passed"] and e["sources"]["violations"])  # a run with violations
    folder = CORPUS / "runs" / run["invocation_id"]
    gw = console_script()
    commands = {
        "python -c pass": [PY, "-c", "pass"],
        IMPORT_DUCKDB: [PY, "-c", "import duckdb"],
        "groundwork lint SPANS ENVELOPE": gw + ["lint", folder / "spans.jsonl", folder / "envelope.json"],
        "groundwork verify ENVELOPE --sources": gw + ["verify", folder / "envelope.json", "--sources", CORPUS / "sources.yaml"],
    }
    if args.workbench:
        commands["workbench lint SPANS ENVELOPE"] = args.workbench.split() + ["lint", folder / "spans.jsonl", folder / "envelope.json"]
    want = {"groundwork lint SPANS ENVELOPE": run["grounding_txt"], "groundwork verify ENVELOPE --sources": run["sources_txt"]}
    out: dict = {"run": run["scenario"]}
    for state in ("cold", "warm"):
        print(f" {state}:" + (" no bytecode of the project, a new empty cache folder each call" if state == "cold"
                              else " bytecode compiled, caches made"), flush=True)
        if state == "cold":
            drop_bytecode()
            env_of = lambda: {**cache_env(fresh_cache(work)), "PYTHONDONTWRITEBYTECODE": "1"}  # noqa: E731
        else:
            compile_bytecode()
            xdg = fresh_cache(work)
            env_of = lambda: cache_env(xdg)  # noqa: E731
            for cmd in commands.values():
                run_step(cmd, env=env_of())  # makes the caches
        got = rounds(args.calls, {label: (lambda cmd=cmd: run_step(cmd, env=env_of())) for label, cmd in commands.items()},
                     verbose=False)
        out[state] = {}
        for label, samples in got.items():
            if label in want:
                wrong = [s for s in samples if s["stdout"] != want[label]]
                if wrong:
                    raise SystemExit(f"{label} printed {wrong[0]['stdout']!r} (exit {wrong[0]['rc']}), not the workbench's text")
            out[state][label] = summary(samples)
            show(label, out[state][label])
    compile_bytecode()
    return out


def bench_ingest(work: Path, args) -> dict:
    n = args.size
    print(f"\n== ingest vs floor, {n:,} runs ==", flush=True)
    runs = synth(work, n)
    run_step([PY, "-c", READ_FLOOR, runs])  # read once: every round then starts from the page cache
    xdg = fresh_cache(work)
    env = cache_env(xdg)
    wh = work / f"ingest-{n}.duckdb"
    run_step(GW + ["ingest", runs, "-w", wh, "-q"], env=env)  # makes the warehouse template
    unlink_warehouse(wh)

    def ingest(extra=None):
        unlink_warehouse(wh)
        s = must(run_step(GW + ["ingest", runs, "-w", wh, "-q"], env={**env, **(extra or {})}), "ingest")
        unlink_warehouse(wh)
        return s

    def pipeline():
        unlink_warehouse(wh)
        s = must(run_step([PY, ROOT / "benchmarks" / "pipeline_floor.py", runs, wh], env=env), "pipeline floor", (0,))
        unlink_warehouse(wh)
        return s

    got = rounds(args.repeat, {
        "read floor": lambda: must(run_step([PY, "-c", READ_FLOOR, runs]), "read floor", (0,)),
        "pipeline floor (no parser)": pipeline,
        "ingest": ingest,
        "ingest, pure Python (GROUNDWORK_NATIVE=off)": lambda: ingest({"GROUNDWORK_NATIVE": "off"}),
    })
    out = {"runs": n, "bytes": sum(f.stat().st_size for f in runs.rglob("*") if f.is_file())}
    for label, samples in got.items():
        out[label] = summary(samples)
    floor = out["read floor"]
    for label in got:
        s = out[label]
        s["x_floor_wall"], s["x_floor_cpu"] = s["wall"] / floor["wall"], s["cpu"] / floor["cpu"]
        show(label, s, f"   {s['x_floor_wall']:.2f}x floor wall, {s['x_floor_cpu']:.2f}x floor cpu")
    return out


def nightly_rounds(work: Path, args, n: int, news: list[int] | None = None, lint_all: bool = True) -> dict:
    """--repeat rounds of the nightlies of NIGHTLIES at ``n`` runs: the fresh first one, the one
    with nothing changed, the one after one new run and the one after new runs were appended (1 %
    of the archive, or ``news[i]`` runs in round i)."""
    runs = synth(work, n)
    sources = runs.parent / "sources.yaml"
    out: dict = {"runs": n, "rounds": [], "settle_s": settle_s()}
    added = 0
    # The archive's last write (a synth just now, or the last round's new runs): a round starts
    # once it is older than the settle window (``settled``).
    appended = (runs / "invocations.jsonl").stat().st_mtime
    gw = console_script()
    for i in range(args.repeat):
        wh, rep = work / f"nightly-{n}-{i}.duckdb", work / f"reports-{n}-{i}"
        unlink_warehouse(wh)
        shutil.rmtree(rep, ignore_errors=True)
        env = cache_env(fresh_cache(work))  # nothing cached: no warehouse template, no compiled templates
        one: dict = {"runs_before": n + added}

        def nightly(label):
            # The command a user runs (console script, typer app and all), its phase times read
            # from its --json document. The disk first writes back what the last step wrote (the
            # fresh nightly: ~1 GB of warehouse and reports), untimed: a nightly a day after the
            # last does not share the disk with its write-back.
            os.sync()
            s = must(run_step(gw + ["nightly", runs, "-w", wh, "--sources", sources, "--out", rep, "--json", "--quiet"],
                              env=env), label)
            try:
                s["phases"] = json.loads(s.pop("stdout"))["seconds"]   # the document is not kept in results.json
            except (ValueError, KeyError, TypeError):
                s["phases"] = {}
            s["warehouse_bytes"] = sum(p.stat().st_size for p in wh.parent.glob(wh.name + "*") if p.is_file())
            one[label] = s
            show(f"round {i + 1}: {label}", {**s, "n": 1}, "   " + ", ".join(f"{k} {v}" for k, v in s["phases"].items())
                 + f"; warehouse {s['warehouse_bytes'] / 1e6:.1f} MB")

        settled(appended)
        nightly("fresh first nightly")
        nightly("nothing changed")
        # One new run, older than the settle window when the nightly starts (as a run that landed
        # in the day): the nightly's cost when almost nothing changed, fixed and archive-sized parts.
        append_runs(work, runs, 1, seed=2000 + i)
        added += 1
        settled(time.time())
        nightly("after one new run")
        new = news[i] if news is not None else max(1, (n + added) // 100)
        append_runs(work, runs, new, seed=1000 + i)
        appended = time.time()
        added += new
        nightly("after 1 % new runs")
        one["new_runs"] = new
        if i == 0 and lint_all:
            relint = [must(run_step(GW + ["lint", "-w", wh, "--all"], env=env, stdout_file=os.devnull), "lint --all")
                      for _ in range(args.repeat)]
            out["lint --all"] = summary(relint)
            show("lint --all (after the nightlies)", out["lint --all"])
            disk = must(run_step([PY, "-c", DISK, wh]), "disk sizes", (0,))
            out["disk"] = json.loads(disk["stdout"].strip().splitlines()[-1])
            print("  disk: " + ", ".join(f"{k} {v / 1e6:.0f} MB" for k, v in out["disk"].items()), flush=True)
        out["rounds"].append(one)
        if not args.keep:
            unlink_warehouse(wh)
            shutil.rmtree(rep, ignore_errors=True)
    for k, label in enumerate(NIGHTLIES):
        out[label] = summary([r[label] for r in out["rounds"]])
        if k:  # what the nightly added to the warehouse file (and its WAL) after the one before it, median of the rounds
            before = NIGHTLIES[k - 1]
            out[label]["grew_mb"] = statistics.median(
                (r[label]["warehouse_bytes"] - r[before]["warehouse_bytes"]) / 1e6 for r in out["rounds"])
    for label in NIGHTLIES[1:]:
        s = out[label]
        s["x_fresh_wall"] = statistics.median(r[label]["wall"] / r["fresh first nightly"]["wall"] for r in out["rounds"])
        s["x_fresh_cpu"] = statistics.median(r[label]["cpu"] / r["fresh first nightly"]["cpu"] for r in out["rounds"])
        show(label, s, f"   {s['x_fresh_wall']:.2%} of the fresh nightly's wall, {s['x_fresh_cpu']:.2%} of its cpu")
    show("fresh first nightly", out["fresh first nightly"])
    return out


def bench_nightly(work: Path, args) -> dict:
    """The nightlies at --nightly-size runs; then, when --small-nightly-size is smaller, the same
    rounds at that size with the same new runs per round (1 % of the larger archive): what the
    same change costs in an archive a tenth the size."""
    n = args.nightly_size
    print(f"\n== nightlies, {n:,} runs ==", flush=True)
    out = nightly_rounds(work, args, n)
    small = args.small_nightly_size
    if 0 < small < n:
        news = [r["new_runs"] for r in out["rounds"]]
        print(f"\n== nightlies, {small:,} runs, the same new runs per round ({', '.join(f'{x:,}' for x in news)}) ==", flush=True)
        sm = nightly_rounds(work, args, small, news, lint_all=False)
        label = "after 1 % new runs"
        out["same new runs, smaller archive"] = {
            "runs": small, "new_runs": news, "fresh first nightly": sm["fresh first nightly"],
            "nothing changed": sm["nothing changed"], "after one new run": sm["after one new run"], "after new runs": sm[label],
            # the same change in the larger archive against the smaller one, round by round
            "x_small_wall": statistics.median(b[label]["wall"] / a[label]["wall"] for a, b in zip(sm["rounds"], out["rounds"])),
            "x_small_cpu": statistics.median(b[label]["cpu"] / a[label]["cpu"] for a, b in zip(sm["rounds"], out["rounds"])),
            "rounds": sm["rounds"]}
        c = out["same new runs, smaller archive"]
        print(f"  the same new runs: {c['after new runs']['wall']:.2f} s at {small:,} runs, {out[label]['wall']:.2f} s at "
              f"{n:,} ({c['x_small_wall']:.2f}x wall, {c['x_small_cpu']:.2f}x CPU); one new run: "
              f"{c['after one new run']['wall']:.2f} s and {out['after one new run']['wall']:.2f} s", flush=True)
    return out


def bench_rss(work: Path, args, ingest: dict | None) -> dict:
    print("\n== ingest peak RSS by archive size ==", flush=True)
    out = {}
    env = cache_env(fresh_cache(work))
    for n in args.rss_sizes:
        if ingest and ingest.get("runs") == n:
            out[n] = {k: ingest["ingest"][k] for k in ("wall", "cpu", "rss_mb", "n")}
        else:
            runs = synth(work, n)
            wh = work / f"rss-{n}.duckdb"
            unlink_warehouse(wh)
            out[n] = {**must(run_step(GW + ["ingest", runs, "-w", wh, "-q"], env=env), "ingest"), "n": 1}
            unlink_warehouse(wh)
            if not args.keep and n not in (args.size, args.nightly_size):  # the others are used again
                shutil.rmtree(runs.parent, ignore_errors=True)
        show(f"ingest {n:,} runs", out[n])
    return out


def serve_warehouse(work: Path, n: int) -> Path:
    """A warehouse of ``n`` synthetic runs after one nightly (what a user serves)."""
    runs = synth(work, n)
    wh = work / f"serve-{n}.duckdb"
    unlink_warehouse(wh)
    must(run_step(GW + ["nightly", runs, "-w", wh, "--out", work / f"serve-{n}-reports", "-q"]), "nightly for serve")
    return wh


def bench_serve(work: Path, args) -> dict:
    """serve_load.measure on the example warehouse and on a --serve-size one."""
    out = {}
    for label, warehouse in (("example", lambda: ROOT / "warehouse.duckdb.example"),
                             (f"{args.serve_size} runs", lambda: serve_warehouse(work, args.serve_size))):
        out[label] = bench_hook(f"serve, {label}", ["serve_load"], {"warehouse": warehouse})
    return out


def hook(names: list[str], function: str):
    """``function`` of the first module benchmarks/<name>.py that exists, else None."""
    for name in names:
        path = ROOT / "benchmarks" / f"{name}.py"
        if path.exists():
            spec = importlib.util.spec_from_file_location(f"bench_hook_{name}", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            found = getattr(module, function, None)
            if callable(found):
                return found
    return None


def call_hook(fn, offered: dict):
    """Call ``fn`` with the arguments it names among ``offered`` (a callable value is called first:
    what costs something to make is made only when asked for)."""
    params = inspect.signature(fn).parameters
    takes_all = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    return fn(**{k: v() if callable(v) else v for k, v in offered.items() if takes_all or k in params})


def flat(d: dict, prefix: str = "") -> dict:
    """A nested result as one level of "a.b" keys."""
    out = {}
    for key, value in d.items():
        if isinstance(value, dict):
            out.update(flat(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def bench_hook(title: str, names: list[str], offered: dict) -> dict:
    """Run the ``measure`` of another benchmark module (benchmarks/<name>.py, the first that exists)
    with the arguments it names among ``offered``; its result dict, or "not measured"."""
    print(f"\n== {title} ==", flush=True)
    fn = hook(names, "measure")
    if fn is None:
        print("  not measured (no " + " / ".join(f"benchmarks/{n}.py" for n in names) + " with measure())", flush=True)
        return {"measured": False}
    cpu0, t0 = os.times(), time.perf_counter()
    result = dict(call_hook(fn, offered) or {})
    cpu1 = os.times()
    result.setdefault("wall_s", time.perf_counter() - t0)
    result.setdefault("cpu_s_this_process", (cpu1.user - cpu0.user) + (cpu1.system - cpu0.system))
    result["measured"] = True
    for key, value in flat(result).items():
        print(f"  {key}: {value}", flush=True)
    return result


# ------------------------------------------------------------------------------ reporting


def f3(x) -> str:
    return f"{x:.3f}" if isinstance(x, (int, float)) else "–"


def targets(res: dict) -> list[str]:
    """One table row per target of issue 16 that this run measured."""
    rows = []

    def met(ok: bool) -> str:
        return "yes" if ok else "**no**"

    d = res.get("dropin")
    if d:
        for label in ("groundwork lint SPANS ENVELOPE", "groundwork verify ENVELOPE --sources"):
            w, c = d["warm"][label], d["cold"][label]
            rows.append(f"| `{label}` ≤ 0.25 s per call | warm {w['wall']:.3f} s wall ({w['cpu']:.3f} s CPU); cold "
                        f"{c['wall']:.3f} s ({c['cpu']:.3f} s CPU); `python -c 'import duckdb'` alone "
                        f"{d['warm'][IMPORT_DUCKDB]['wall']:.3f} s | {met(w['wall'] <= 0.25)} |")
    g = res.get("ingest")
    if g:
        i = g["ingest"]
        rows.append(f"| ingest of {g['runs']:,} runs ≤ 3× the read floor (wall) | {i['x_floor_wall']:.2f}× wall, "
                    f"{i['x_floor_cpu']:.2f}× CPU ({i['wall']:.2f} s, {i['cpu']:.2f} s CPU) | {met(i['x_floor_wall'] <= 3)} |")
    nt = res.get("nightly")
    if nt:
        for label, limit in (("nothing changed", 0.02), ("after 1 % new runs", 0.05)):
            s = nt[label]
            rows.append(f"| nightly {label} ≤ {limit:.0%} of a fresh first nightly, {nt['runs']:,} runs | "
                        f"{s['x_fresh_wall']:.2%} wall, {s['x_fresh_cpu']:.2%} CPU, median of the rounds' ratios (medians "
                        f"{s['wall']:.2f} s and {nt['fresh first nightly']['wall']:.2f} s) | {met(max(s['x_fresh_wall'], s['x_fresh_cpu']) <= limit)} |")
    rss = res.get("rss")
    if rss and len(rss) > 1:
        values = [v["rss_mb"] for v in rss.values()]
        rows.append("| ingest peak RSS flat in archive size | " + ", ".join(f"{int(n):,} runs {v['rss_mb']:.0f} MB" for n, v in rss.items())
                    + f" (largest / smallest {max(values) / min(values):.2f}) | {met(max(values) / min(values) <= 1.25)} |")
    if nt and nt.get("same new runs, smaller archive"):
        small, big = nt["same new runs, smaller archive"]["fresh first nightly"], nt["fresh first nightly"]
        rows.append(f"| fresh first nightly peak RSS (no target: this synth sizes the pinned source copy with the "
                    f"archive) | {nt['same new runs, smaller archive']['runs']:,} runs {small['rss_mb']:.0f} MB, "
                    f"{nt['runs']:,} runs {big['rss_mb']:.0f} MB (largest / smallest {big['rss_mb'] / small['rss_mb']:.2f}) | – |")
    for key in ("watch", WATCH_AT_SCALE):
        w = res.get(key)
        if w is None:
            continue
        ev, po = w.get("events") or {}, w.get("polling") or {}
        title = "watch: a run's verdict in the warehouse ≤ 1 s after its folder is complete"
        if w.get("base") is not None:
            title += f", {w['base']:,} runs in the archive"
        if w.get("measured") and ev.get("median_s") is not None:
            rows.append(f"| {title} | "
                        f"file events: median {ev['median_s']:.2f} s, p95 {ev['p95_s']:.2f} s, max {ev['max_s']:.2f} s "
                        f"({ev.get('runs')} runs); polling: median {po.get('median_s', 0):.2f} s, p95 {po.get('p95_s', 0):.2f} s "
                        f"| {met(ev['max_s'] <= 1.0)} (file events, every run) |")
        else:
            rows.append(f"| {title} | not measured | |")
    return rows


def markdown(res: dict) -> str:
    m, args = res["machine"], res["args"]
    load0, load1 = res["loadavg_before"], res["loadavg_after"]
    lines = ["# Benchmarks", "",
             "Generated by `benchmarks/bench.py --write-md` from one run of it (the figures are in "
             "`benchmarks/results.json`); nothing here is edited by hand. Every step is a whole new process; *wall* "
             "is its elapsed time, *CPU* the user + system time of its process tree, *RSS* the peak resident memory "
             "of its largest process; each figure is the median of alternating repetitions (every sample is in "
             "results.json).", "",
             "## Machine and load", "",
             f"- {m['cpu']}, {m['cores']} cores, {m['ram_gb']} GB RAM; {m['os']}; Python {m['python']}, DuckDB {m['duckdb']}",
             f"- C fast paths: {', '.join(m['native']) or 'none'}",
             f"- {m['date']}, commit {m['commit']}; `{res['command']}` took {res['seconds'] / 60:.0f} min",
             f"- **load average before: {', '.join(f'{x:.2f}' for x in load0)}; after: {', '.join(f'{x:.2f}' for x in load1)}** "
             f"(1, 5, 15 min; {m['cores']} cores); the load after includes bench.py's own last steps" + (": the machine was shared with other work when the run started, so wall times "
                                         "are inflated and CPU times are the better guide to cost" if load0[0] > 1 else
                                         ""), ""]
    lines += ["## Targets (issue 16)", "", "| target | measured in this run | met? |", "|---|---|---|"] + targets(res) + [""]
    d = res.get("dropin")
    if d:
        lines += ["## Drop-in: one process per run", "",
                  f"On the corpus run `{d['run']}` (violations in both checks), {args['calls']} calls of each command, "
                  "alternating. *cold*: no bytecode of the project and an empty cache folder (the first call after an "
                  "install); *warm*: bytecode compiled and the caches made (every later call). Target: ≤ 0.25 s per call "
                  "(the workbench's own CLI: 0.59 s on this machine kind, measured in issue 16"
                  + (", and in this run below" if args.get("workbench") else "") + ").", "",
                  "| command | cold wall s | cold CPU s | warm wall s | warm CPU s | warm RSS MB |", "|---|---:|---:|---:|---:|---:|"]
        for label in d["warm"]:
            c, w = d["cold"][label], d["warm"][label]
            lines.append(f"| `{label}` | {f3(c['wall'])} | {f3(c['cpu'])} | {f3(w['wall'])} | {f3(w['cpu'])} | {w['rss_mb']:.0f} |")
        lines.append("")
    g = res.get("ingest")
    if g:
        lines += [f"## Ingest against the read floor, {g['runs']:,} runs ({g['bytes'] / 1e6:.0f} MB)", "",
                  f"{args['repeat']} rounds, alternating; each ingest into a new warehouse. *read floor*: Python reading "
                  "every byte of the archive; *pipeline floor*: benchmarks/pipeline_floor.py, the ingest's own machinery "
                  "storing each file's bytes unparsed. Target: ingest ≤ 3× the read floor in wall time.", "",
                  "| step | wall s | CPU s | × read floor (wall) | × read floor (CPU) | peak RSS MB |", "|---|---:|---:|---:|---:|---:|"]
        for label, s in g.items():
            if isinstance(s, dict) and "wall" in s:
                lines.append(f"| {label} | {f3(s['wall'])} | {f3(s['cpu'])} | {s['x_floor_wall']:.2f} | {s['x_floor_cpu']:.2f} | {s['rss_mb']:.0f} |")
        pf = g.get("pipeline floor (no parser)")
        if pf:
            lines.append(f"\nThe ingest is {g['ingest']['wall'] / pf['wall']:.2f}× the pipeline floor in wall time, "
                         f"{g['ingest']['cpu'] / pf['cpu']:.2f}× in CPU.")
        lines.append("")
    nt = res.get("nightly")
    if nt:
        lines += [f"## Nightlies, {nt['runs']:,} runs", "",
                  f"`groundwork nightly RUNS_DIR -w W --sources FILE --out DIR --json --quiet`, the command as a user runs it "
                  f"(phase times from its JSON document; before each, untimed, `sync` writes back what the last step wrote). {args['repeat']} rounds of: a fresh first nightly (new warehouse, new report folder, empty cache "
                  "folder), the next one with nothing changed, one after one new run was appended, and one after 1 % new "
                  "runs were appended to the archive (each round's archive is the last one's plus its new runs"
                  + (f"; a round starts once the last one's 1 % is {nt['settle_s']:g} s old, past the quick scan's settle "
                     "window, as for a nightly a day after the last: a run written within that window before an ingest "
                     "started is looked at again by the next one" if "settle_s" in nt else "") + "). "
                  "Targets: nothing changed ≤ 2 % and 1 % new ≤ 5 % "
                  "of the fresh nightly (wall and CPU). *% of fresh* is the median of the rounds' own ratios (each nightly "
                  "against its round's fresh one), not the ratio of the medians.", "",
                  "| nightly | wall s | CPU s | % of fresh (wall) | % of fresh (CPU) | peak RSS MB | warehouse grew MB |",
                  "|---|---:|---:|---:|---:|---:|---:|"]
        for label in NIGHTLIES:
            if label not in nt:
                continue
            s = nt[label]
            pw = f"{s['x_fresh_wall']:.2%}" if "x_fresh_wall" in s else "100 %"
            pc_ = f"{s['x_fresh_cpu']:.2%}" if "x_fresh_cpu" in s else "100 %"
            grew = f"{s['grew_mb']:.1f}" if "grew_mb" in s else "–"
            lines.append(f"| {label} | {f3(s['wall'])} | {f3(s['cpu'])} | {pw} | {pc_} | {s['rss_mb']:.0f} | {grew} |")
        if "after one new run" in nt:
            lines += ["", "*after one new run*: one run appended (older than the settle window when the nightly starts), "
                      "so the nightly's cost when almost nothing changed: what every nightly with any change pays, "
                      "before the cost of the change itself. *warehouse grew*: the warehouse file and its WAL after "
                      "the nightly against before it (median of the rounds)."]
        c = nt.get("same new runs, smaller archive")
        if c:
            a, b = c["after new runs"], nt["after 1 % new runs"]
            lines += ["", f"The same new runs ({', '.join(f'{x:,}' for x in c['new_runs'])} in the rounds) appended to an "
                      f"archive of {c['runs']:,} runs, the same rounds otherwise: that nightly took {f3(a['wall'])} s wall, "
                      f"{f3(a['cpu'])} s CPU (its fresh nightly {f3(c['fresh first nightly']['wall'])} s, nothing changed "
                      f"{f3(c['nothing changed']['wall'])} s); at {nt['runs']:,} runs {f3(b['wall'])} s, {f3(b['cpu'])} s CPU. "
                      f"The same change in an archive {nt['runs'] / c['runs']:g}× larger cost {c['x_small_wall']:.2f}× "
                      f"the wall time and {c['x_small_cpu']:.2f}× the CPU time (medians of the rounds' ratios)."]
            if "after one new run" in c and "after one new run" in nt:
                o, p_ = c["after one new run"], nt["after one new run"]
                lines[-1] += (f" One new run: {f3(o['wall'])} s wall, {f3(o['cpu'])} s CPU at {c['runs']:,} runs "
                              f"(the warehouse grew {o.get('grew_mb', 0):.1f} MB), {f3(p_['wall'])} s, {f3(p_['cpu'])} s CPU "
                              f"at {nt['runs']:,} (grew {p_.get('grew_mb', 0):.1f} MB); the new runs of the 1 % nightly "
                              f"added {f3(b['wall'] - p_['wall'])} s wall at {nt['runs']:,} runs and "
                              f"{f3(a['wall'] - o['wall'])} s at {c['runs']:,} beyond one new run.")
        lines += ["", "Phases inside each nightly (s, round by round):", ""]
        for i, r in enumerate(nt["rounds"]):
            for label in (x for x in NIGHTLIES if x in r):
                lines.append(f"- round {i + 1}, {label}: " + ", ".join(f"{k} {v}" for k, v in r[label]["phases"].items()))
        if c:
            for i, r in enumerate(c["rounds"]):
                for label in (x for x in NIGHTLIES if x in r):
                    lines.append(f"- {c['runs']:,} runs, round {i + 1}, "
                                 f"{'after ' + format(r['new_runs'], ',') + ' new runs' if label == NIGHTLIES[-1] else label}: "
                                 + ", ".join(f"{k} {v}" for k, v in r[label]["phases"].items()))
        if "lint --all" in nt:
            s = nt["lint --all"]
            lines.append(f"\n`groundwork lint --all` (every rule on every run, as after a rule change) after the first "
                         f"round: {f3(s['wall'])} s wall, {f3(s['cpu'])} s CPU, {s['rss_mb']:.0f} MB.")
        if "disk" in nt:
            disk = nt["disk"]
            lines.append(f"\nDisk after the first round's nightlies: warehouse file {disk.get('file', 0) / 1e6:.0f} MB; "
                         f"tables of schema main {disk.get('main', 0) / 1e6:.0f} MB, of lint_store (derived relations kept "
                         f"for the next lint) {disk.get('lint_store', 0) / 1e6:.0f} MB, of report_store (the per-run rows "
                         f"of the reports, kept for the next nightly) {disk.get('report_store', 0) / 1e6:.0f} MB.")
        lines.append("")
    rss = res.get("rss")
    if rss:
        lines += ["## Ingest peak RSS by archive size", "", "Target: flat in archive size.", "",
                  "| runs | peak RSS MB | wall s | CPU s |", "|---:|---:|---:|---:|"]
        for n, s in rss.items():
            lines.append(f"| {int(n):,} | {s['rss_mb']:.0f} | {f3(s['wall'])} | {f3(s['cpu'])} |")
        lines.append("")
    sp = res.get("spark")
    if sp and sp.get("measured") and sp.get("spark"):
        lines += spark_section(sp)
    for key, title in (("watch", "Watch latency"), (WATCH_AT_SCALE, "Watch latency, a large archive"), ("spark", "Spark engine")):
        if key == "spark" and sp and sp.get("measured") and sp.get("spark"):
            continue
        h = res.get(key)
        if h is None:
            continue
        lines += [f"## {title}", ""]
        if not h.get("measured"):
            lines += ["Not measured in this run.", ""]
        else:
            lines += [f"- {k}: {v}" for k, v in flat(h).items() if k != "measured"] + [""]
    sv = res.get("serve")
    if sv:
        lines += ["## `groundwork serve` under a bounded load", "",
                  "`benchmarks/serve_load.py`: `groundwork serve --port 0` as its own process, one warm-up request per "
                  "page, then GETs from concurrent keep-alive clients over loopback, cycling through the runs list "
                  "(plain, filtered, sorted, two filters), a run page, a rule page, the rule list, an ad-hoc query and a "
                  "saved query as JSON. Server CPU: the server process's user + system time over the load.", "",
                  "| warehouse | requests | clients | errors | p50 ms | p95 ms | max ms | requests/s | server CPU s | CPU ms / request |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for label, h in sv.items():
            if not h.get("measured"):
                lines.append(f"| {label} | not measured | | | | | | | | |")
                continue
            lat = h.get("latency_ms") or {}
            lines.append(f"| {label} | {h.get('requests')} | {h.get('concurrency')} | {h.get('errors')} | "
                         f"{_num(lat.get('p50'), 0)} | {_num(lat.get('p95'), 0)} | {_num(lat.get('max'), 0)} | "
                         f"{_num(h.get('requests_per_second'), 1)} | {_num(h.get('server_cpu_seconds'), 2)} | "
                         f"{_num(h.get('server_cpu_ms_per_request'), 0)} |")
        lines.append("")
    lines += STANDING
    return "\n".join(lines)


def spark_section(sp: dict) -> list[str]:
    """The Spark engine against the local DuckDB path on one archive, and on paper from those
    figures what N executors would take for 10^8 runs (a cold pass: every run parsed and checked)."""
    n = sp["runs"]
    out = [f"## Spark engine, {n:,} runs", "",
           "benchmarks/spark_bench.py: `groundwork ingest` + `lint` + `verify` into a new warehouse (the local "
           "DuckDB path) against `groundwork spark run` (parse in the executors, every rule on Spark SQL, the "
           "texts rendered in the executors; Parquet out) on the same synthetic archive, one process each.", "",
           "| path | wall s | runs/s | session start s | parse + tables s | checks + texts s |", "|---|---:|---:|---:|---:|---:|",
           f"| local DuckDB | {f3(sp['local']['wall'])} | {sp['local']['runs_per_s']:.0f} | | | |"]
    for master, r in sp["spark"].items():
        ph = r.get("phases", {})
        out.append(f"| Spark `{master}` | {f3(r['wall'])} | {r['runs_per_s']:.0f} | {ph.get('session_start', 0):.1f} | "
                   f"{ph.get('ingest', 0):.1f} | {ph.get('checks', 0):.1f} |")
    one = sp["spark"].get("local[1]")
    if one and one.get("phases"):
        per_run = (one["phases"]["ingest"] + one["phases"]["checks"]) / n  # core-seconds of one executor core
        total = per_run * 1e8
        out += ["", f"On paper, from `local[1]` (one executor core): {per_run * 1000:.1f} ms of core time per run, "
                f"{total:.2g} core-seconds for 10⁸ runs. A cold pass would take about "
                + ", ".join(f"{total / (ex * 4) / 3600:.1f} h on {ex} executors × 4 cores" for ex in (10, 50, 250))
                + ", plus the session start and the driver's share (the file listing, the split counts of the index), "
                "assuming the work spreads evenly and storage keeps up; a rerun parses only new or changed run folders."]
    return out + [""]


def _num(x, digits: int) -> str:
    return "" if x is None else f"{x:.{digits}f}"


# What the figures rest on, and what they do not show (written with the code, not measured).
STANDING = [
    "## What these figures rest on", "",
    "- **Memory bounds.** The ingest runs DuckDB under a 128 MB memory limit and its parser processes hand "
    "rows over in bounded shared-memory slots, closed as soon as the last batch is written. No file is held "
    "whole: envelope.json, request.json, grounding.txt and sources.txt over 16 MiB are hashed as they stream "
    "by and recorded as `too-large`; a spans.jsonl or invocations.jsonl line over 16 MiB is dropped as it "
    "streams by (`line-too-long`), so a 2 GiB single-line file costs what a small one does. The end of an "
    "ingest (index commit, final updates, checkpoint) reads the runs it changed in batches instead of "
    "holding every name. *Ingest peak RSS by archive size* above is the check.",
    "- **DuckDB versions.** groundwork needs DuckDB 2.0 or newer (a bound path in ATTACH); new warehouses "
    "are written in storage version v1.5.0, so the registry's `duckdb-cli` 1.5 opens them read-only (the "
    "README's `duckdb -readonly` line). A warehouse of a newer groundwork is refused; an older one is "
    "migrated forward in one transaction.",
    "- **The SQL sandbox.** `groundwork sql`, `groundwork query` and `groundwork serve`'s /sql run with "
    "DuckDB's `enable_external_access = false` and `lock_configuration = true` (serve adds a 10 s time "
    "limit, a 1,000-row limit and a 1 GB memory limit per served copy); the cost is one SET per session.",
    "",
]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=20000, help="runs for ingest vs floor (default 20,000)")
    ap.add_argument("--nightly-size", type=int, default=100000, help="runs for the nightlies (default 100,000)")
    ap.add_argument("--small-nightly-size", type=int, default=10000,
                    help="the same nightly rounds at this size, with the same new runs per round (default 10,000; 0: not run)")
    ap.add_argument("--rss-sizes", default="20000,100000",
                    help="comma list of archive sizes for peak RSS (default 20000,100000; add 300000 for the big end)")
    ap.add_argument("--repeat", type=int, default=3, help="rounds of each alternating measurement (default 3)")
    ap.add_argument("--calls", type=int, default=20, help="drop-in calls of each command, cold and warm (default 20)")
    ap.add_argument("--workbench", default=None, help="the workbench's CLI command (e.g. 'workbench'), timed beside the drop-in")
    ap.add_argument("--watch-size", type=int, default=100000,
                    help="runs already in the archive for the second watch latency measurement (default 100,000; 0: not run)")
    ap.add_argument("--spark-size", type=int, default=20000, help="runs for the Spark engine (default 20,000)")
    ap.add_argument("--serve-size", type=int, default=5000, help="runs in the larger served warehouse (default 5,000)")
    ap.add_argument("--only", default="dropin,ingest,nightly,rss,watch,spark,serve", help="comma list of steps to run")
    ap.add_argument("--quick", action="store_true", help="2,000 runs everywhere, 2 rounds, 5 calls: to check the script")
    ap.add_argument("--workdir", default=None, help="where archives and warehouses go (default: a new temp folder)")
    ap.add_argument("--keep", action="store_true", help="keep archives, warehouses and reports")
    ap.add_argument("--write-md", action="store_true", help="regenerate BENCHMARKS.md from this run")
    ap.add_argument("--markdown-from", metavar="RESULTS", default=None,
                    help="only regenerate BENCHMARKS.md from a results.json an earlier run wrote (its text, not its figures, changed)")
    ap.add_argument("--results", default=None,
                    help="where to write the results (default benchmarks/results.json; with --quick, the workdir)")
    args = ap.parse_args(argv)
    if args.markdown_from:
        res = json.loads(Path(args.markdown_from).read_text(encoding="utf-8"))
        (ROOT / "BENCHMARKS.md").write_text(markdown(res) + "\n", encoding="utf-8")
        print(f"wrote {ROOT / 'BENCHMARKS.md'} from {args.markdown_from}")
        return
    command = "benchmarks/bench.py " + " ".join(argv if argv is not None else sys.argv[1:])
    if args.quick:
        args.size = args.nightly_size = args.spark_size = args.serve_size = args.watch_size = 2000
        args.small_nightly_size = 1000
        args.rss_sizes, args.repeat, args.calls = "2000", 2, 5
    args.rss_sizes = [int(x) for x in str(args.rss_sizes).split(",") if x.strip()]
    only = {x.strip() for x in args.only.split(",") if x.strip()}
    work = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="gw-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    res = {"command": command.strip(), "args": {k: v for k, v in vars(args).items()}, "machine": machine(),
           "loadavg_before": os.getloadavg()}
    m = res["machine"]
    print(f"machine: {m['cpu']}, {m['cores']} cores, {m['ram_gb']} GB; Python {m['python']}, DuckDB {m['duckdb']}; "
          f"C paths: {', '.join(m['native']) or 'none'}; load {res['loadavg_before']}; workdir {work}", flush=True)
    try:
        if "dropin" in only:
            res["dropin"] = bench_dropin(work, args)
        compile_bytecode()
        if "ingest" in only:
            res["ingest"] = bench_ingest(work, args)
        if "rss" in only:  # before the nightlies, which grow their archive
            res["rss"] = bench_rss(work, args, res.get("ingest"))
        if "nightly" in only:
            res["nightly"] = bench_nightly(work, args)
        if "watch" in only:  # benchmarks/watch_latency.py: measure(workdir, *, runs, rate, base, poll, seed)
            res["watch"] = bench_hook("watch latency", ["watch_latency"], {
                "workdir": work / "watch", **({"runs": 10, "base": 200} if args.quick else {})})
            if args.watch_size:  # the same on an archive of --watch-size runs: what a batch costs there
                res[WATCH_AT_SCALE] = bench_hook(f"watch latency, {args.watch_size:,} runs in the archive", ["watch_latency"], {
                    "workdir": work / "watch", "base": args.watch_size, **({"runs": 10} if args.quick else {})})
        if "spark" in only:  # the Spark engine's benchmark: the first of these modules with measure()
            res["spark"] = bench_hook("spark", ["spark_bench", "spark_latency", "spark"], {
                "workdir": work / "spark", "runs_dir": lambda: synth(work, args.spark_size),
                "archive": lambda: synth(work, args.spark_size).parent, "size": args.spark_size, "quick": args.quick})
        if "serve" in only:
            res["serve"] = bench_serve(work, args)
    finally:
        res["loadavg_after"] = os.getloadavg()
        res["seconds"] = time.perf_counter() - started
        if not args.keep:
            shutil.rmtree(work / CACHES, ignore_errors=True)
        if not args.keep and not args.workdir:
            shutil.rmtree(work, ignore_errors=True)
    print(f"\nload average before {res['loadavg_before']}, after {res['loadavg_after']}; {res['seconds'] / 60:.1f} min")
    results = Path(args.results) if args.results else (
        work / "results.json" if args.quick and (args.keep or args.workdir) else None if args.quick else ROOT / "benchmarks" / "results.json")
    if results is not None:
        results.write_text(json.dumps(res, indent=1, default=str) + "\n", encoding="utf-8")
        print(f"wrote {results}")
    if args.write_md:
        (ROOT / "BENCHMARKS.md").write_text(markdown(res) + "\n", encoding="utf-8")
        print(f"wrote {ROOT / 'BENCHMARKS.md'}")


if __name__ == "__main__":
    main()
