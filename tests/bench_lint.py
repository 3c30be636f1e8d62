"""Measure `lint_warehouse` on a ~100,000-run warehouse against the reference linter (not a test).

    .venv/bin/python tests/bench_lint.py [WAREHOUSE] [COPIES]

Builds WAREHOUSE (default /tmp/groundwork-bench-lint.duckdb) once: the corpus ingested, then every
run's rows copied COPIES times (default 1011, i.e. 100,089 runs) under new invocation ids with
INSERT ... SELECT. Prints wall and CPU time of a full lint (every run through the rules): the
first after the ingest (which derives every run for the pass), of keeping the derived relations
in the warehouse afterwards (store.keep_derived), of three full lints that read them, each the
first call of a new process, and of two more in this process (as after a rule change; with and
without the history writes), of a re-lint (runs unchanged since the last full lint
reuse their verdicts), and the reference linter's runs per second looping over the corpus run
folders in one process (files read and parsed each time, as `workbench lint` would).

Every run of the corpus appears COPIES times with identical content, so a message or a
grounding.txt text (rendered once per distinct row, see groundwork.checks.messages.render_rows) repeats far
more often here than in a real archive, where hashes and ids differ from run to run.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import groundwork.ingest as ingest  # noqa: E402
from groundwork.checks.lint import lint_warehouse  # noqa: E402
from groundwork.checks.store import keep_derived  # noqa: E402
from groundwork.core.warehouse import connect  # noqa: E402
from reference import linter as ref  # noqa: E402

CORPUS_RUNS = ROOT / "tests" / "fixtures" / "corpus" / "runs"
RUN_TABLES = ("spans", "payload_refs", "evidence", "delegations", "runs")


def build(path: str, copies: int) -> None:
    con = connect(path)
    ingest.ingest_archive(con, CORPUS_RUNS)
    con.execute("CREATE TEMP TABLE copy_no AS SELECT range AS k FROM range(1, $n)", {"n": copies})
    con.execute("CREATE TEMP TABLE originals AS SELECT invocation_id FROM runs")
    for table in RUN_TABLES:
        cols = [r[0] for r in con.execute(
            "SELECT column_name FROM duckdb_columns() WHERE table_name = ? AND schema_name = 'main' "
            "ORDER BY column_index", [table]).fetchall()]
        select = ", ".join("t.invocation_id || '-' || CAST(c.k AS VARCHAR)" if col == "invocation_id" else f"t.{col}"
                           for col in cols)
        con.execute(f"INSERT INTO {table} SELECT {select} FROM {table} t, copy_no c "
                    "WHERE t.invocation_id IN (SELECT invocation_id FROM originals)")
    con.execute("CHECKPOINT")
    con.close()


def timed(label: str, con, **kwargs):
    wall, cpu = time.perf_counter(), time.process_time()
    result = lint_warehouse(con, **kwargs)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"{label:40s} {wall:6.2f} s wall {cpu:6.2f} s cpu  {result.totals_line()}")
    return result


COLD_PASS = """
import sys, time
from groundwork.checks.lint import lint_warehouse
from groundwork.core.warehouse import connect
con = connect(sys.argv[1], create=False)
wall, cpu = time.perf_counter(), time.process_time()
result = lint_warehouse(con, reuse=False)
print(f"{time.perf_counter() - wall:6.2f} s wall {time.process_time() - cpu:6.2f} s cpu  {result.totals_line()}")
con.close()
"""


def cold_pass(path: str) -> str:
    """A full lint (every run, recorded) timed as the first call of a new interpreter, after it
    has imported and connected."""
    done = subprocess.run([sys.executable, "-c", COLD_PASS, path], cwd=ROOT, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def reference_rate(rounds: int = 20) -> tuple[float, float]:
    """Runs per second of wall and of CPU time."""
    folders = [p for p in sorted(CORPUS_RUNS.iterdir()) if p.is_dir()]
    n, start, cpu = 0, time.perf_counter(), time.process_time()
    for _ in range(rounds):
        for folder in folders:
            try:
                ref.summary(ref.lint_files(folder / "spans.jsonl", folder / "envelope.json"))
            except ref.Unlintable:
                pass
            n += 1
    return n / (time.perf_counter() - start), n / (time.process_time() - cpu)


def main() -> None:
    path = sys.argv[1] if len(sys.argv) > 1 else "/tmp/groundwork-bench-lint.duckdb"
    copies = int(sys.argv[2]) if len(sys.argv) > 2 else 1011
    if not os.path.exists(path):
        build(path, copies)
    con = connect(path)
    runs = con.execute("SELECT count(*) FROM runs").fetchall()[0][0]
    print(f"{runs} runs, load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    # The first full lint after the ingest derives every run for the pass; keep_derived (run by
    # the caller after answering) then keeps the derived relations in the warehouse (schema
    # lint_store), which later full lints (e.g. after a rule file changed) read.
    con.execute("DROP SCHEMA IF EXISTS lint_store CASCADE")
    con.execute("CHECKPOINT")
    full = timed("first full lint (derives; recorded)", con, reuse=False)
    wall, cpu = time.perf_counter(), time.process_time()
    keep_derived(con)
    print(f"{'keep_derived (after answering)':40s} {time.perf_counter() - wall:6.2f} s wall {time.process_time() - cpu:6.2f} s cpu")
    # The same full lint as the first call of a new process (as `groundwork lint --all` or a
    # library caller meets it: DuckDB reads the kept relations from the file, templates load).
    con.close()
    for _ in range(3):
        print(f"{'full lint, new process (kept, recorded)':40s} {cold_pass(path)}")
    con = connect(path)
    timed("full lint (relations kept, recorded)", con, reuse=False)
    timed("full lint (relations kept, not recorded)", con, reuse=False, record=False)
    timed("re-lint (unchanged runs reused, recorded)", con)
    rate, cpu_rate = reference_rate()
    print(f"reference linter: {rate:,.0f} runs/s wall, {cpu_rate:,.0f} runs/s cpu -> "
          f"{runs / rate:.1f} s wall, {runs / cpu_rate:.1f} s cpu for {runs} runs")
    con.close()
    assert full.counts["passed"] + full.counts["failed"] + full.counts["unlintable"] == runs


if __name__ == "__main__":
    main()
