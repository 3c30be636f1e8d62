"""Memory does not follow one file's size (docs/rules.md#too-large-runs): a 2 GiB spans.jsonl
that is one line (a sparse file: no disk written) is hashed as it streams by, never held; the
line is recorded, the run kept unlintable, and the ingest's peak RSS stays within a bound
that does not depend on the file (before: ~2 bytes of RSS per byte of the file)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from ingest_support import PASS_RETRIEVAL, archive

GIB = 1 << 30
# what one ingest may add to the RSS of the process that imported groundwork: a block being
# hashed and the rows of the other lines; nothing near the file's size
BOUND_MB = 128

PROBE = """
import json, resource, sys
import duckdb
from groundwork.core.warehouse import apply_schema
from groundwork.ingest import ingest_archive
con = duckdb.connect(":memory:")
apply_schema(con, comments=False)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
ingest_archive(con, sys.argv[1], workers=0)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
rows = con.execute("SELECT path, line, kind, effect, message FROM ingest_issues").fetchall()
lintable = con.execute("SELECT lintable, span_count FROM runs").fetchall()
print(json.dumps({"added_mb": (peak - before) / 1024, "issues": rows, "runs": lintable}))
"""


def test_a_2_gib_line_is_recorded_and_skipped_in_bounded_memory(tmp_path):
    runs, (inv,) = archive(tmp_path, PASS_RETRIEVAL)
    spans = runs / inv / "spans.jsonl"
    before = spans.read_bytes()
    assert before.endswith(b"\n")
    lines = before.count(b"\n")
    with open(spans, "ab") as fh:
        fh.write(b'{"name": "x", "attributes": {"dd.note": "')
        fh.truncate(2 * GIB)  # the rest of the line: zeros, not written to disk
    out = subprocess.run([sys.executable, "-c", PROBE, str(runs)], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "GROUNDWORK_INGEST_WORKERS": "0"})
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["added_mb"] < BOUND_MB, got["added_mb"]
    (path, line, kind, effect, message), = got["issues"]
    assert (path, line, kind, effect) == (f"{inv}/spans.jsonl", lines + 1, "line-too-long", "unlintable")
    assert message.startswith(f"line is {2 * GIB - len(before):,} bytes, over the 16 MiB")
    assert got["runs"] == [[False, lines]]  # the other lines loaded


def _tiny_archive(root, n: int):
    """``n`` run folders holding only an envelope.json: parsed in no time, so the run count is
    what grows (each is loaded, with its missing-file issues)."""
    runs = root / "runs"
    runs.mkdir(parents=True)
    for i in range(n):
        inv = f"01a22a33-0000-7000-8000-{i:012d}"
        (runs / inv).mkdir()
        (runs / inv / "envelope.json").write_text(json.dumps({"invocation_id": inv}), encoding="utf-8")
    return runs


def _finish_peak_kb(runs, monkeypatch) -> tuple[int, object]:
    """Python's allocations (tracemalloc) from the moment every batch is written to the end of
    the ingest (index commit, final transaction, the result's lists, checkpoint): the peak in KB."""
    import tracemalloc

    import duckdb

    from groundwork.core.warehouse import apply_schema
    from groundwork.ingest import load

    start = {}
    close_writer = load._Loader.close_writer

    def traced(self, result):
        close_writer(self, result)
        if "at" not in start:
            tracemalloc.start()
            start["at"] = tracemalloc.get_traced_memory()[0]
    monkeypatch.setattr(load._Loader, "close_writer", traced)
    con = duckdb.connect(":memory:")
    apply_schema(con, comments=False)
    try:
        result = load.ingest_archive(con, runs, workers=1)
        peak = tracemalloc.get_traced_memory()[1] - start["at"]
    finally:
        tracemalloc.stop()
        con.close()
    return peak // 1024, result


def test_the_end_of_an_ingest_does_not_grow_with_the_archive(tmp_path, monkeypatch):
    """The end of an ingest (index commit, marking missing runs, the issues, the result) holds no
    list of every run: at 300,000 runs the list of changed runs (their names fetched, a set, a
    sorted copy) grew the main process by ~60 MB there. Past CHANGED_NAMES (lowered here, so that
    a small archive shows it) no names are kept; Python's peak over that phase is the same for
    500 runs as for 4,000 (before: 113 and 712 KB)."""
    from groundwork.ingest import load

    monkeypatch.setattr(load, "CHANGED_NAMES", 100)
    small, small_result = _finish_peak_kb(_tiny_archive(tmp_path / "small", 500), monkeypatch)
    large, large_result = _finish_peak_kb(_tiny_archive(tmp_path / "large", 4000), monkeypatch)
    assert (small_result.runs_loaded, large_result.runs_loaded) == (500, 4000)
    assert large_result.changed_runs is None and small_result.changed_runs is None
    assert large < small + 64, (small, large)


def test_a_few_changed_runs_are_still_named(tmp_path, monkeypatch):
    from groundwork.ingest import load

    monkeypatch.setattr(load, "CHANGED_NAMES", 100)
    runs = _tiny_archive(tmp_path, 40)
    _, result = _finish_peak_kb(runs, monkeypatch)
    assert result.changed_runs == sorted(p.name for p in runs.iterdir())


def _indexed_archive(root, n: int):
    """``_tiny_archive`` with an invocations.jsonl line for each run, as the workbench appends it."""
    runs = _tiny_archive(root, n)
    with open(runs / "invocations.jsonl", "w", encoding="utf-8") as fh:
        for i in range(n):
            fh.write(json.dumps({"invocation_id": f"01a22a33-0000-7000-8000-{i:012d}", "agent_id": "a.agent",
                                 "outcome": {"status": "succeeded"}, "completed_at": "2026-10-01T00:00:00Z"}) + "\n")
    return runs


def _held_at_commit_kb(runs, monkeypatch) -> tuple[int, object]:
    """Python's allocations (tracemalloc) still held when the runs' transaction commits, counted
    from the archive's listing (after every batch is written: what the transaction keeps), in KB."""
    import tracemalloc

    import duckdb

    from groundwork.core.warehouse import apply_schema
    from groundwork.ingest import load

    seen = {}
    list_root, commit = load._list_root, load._Writer._commit

    def traced_listing(*args):
        tracemalloc.start()
        seen["at"] = tracemalloc.get_traced_memory()[0]
        return list_root(*args)

    def measured_commit(self):
        if self.open and "held" not in seen:
            seen["held"] = tracemalloc.get_traced_memory()[0] - seen["at"]
        commit(self)
    monkeypatch.setattr(load, "_list_root", traced_listing)
    monkeypatch.setattr(load._Writer, "_commit", measured_commit)
    # tasks of 32 runs whatever the archive's size, so that the last task and the last look-up
    # (load.LOOKUP, 1,024 runs), which the ingest's loop variables still refer to, are the same
    # size in both archives of the test (both multiples of 1,024)
    monkeypatch.setattr(load, "_chunk_size", lambda total, workers: 32)
    con = duckdb.connect(":memory:")
    apply_schema(con, comments=False)
    try:
        # batches of 100 runs, so that no batch grows with the archive; one transaction holds them all
        result = load.ingest_archive(con, runs, workers=1, batch_runs=100)
    finally:
        tracemalloc.stop()
        con.close()
    return seen["held"] // 1024, result  # KB


def test_what_an_open_transaction_holds_does_not_grow_with_its_runs(tmp_path, monkeypatch):
    """The runs of an ingest share a transaction of up to TXN_RUNS (65,536) runs, which keeps
    what it needs to write them again should it be rolled back. It kept every result's lists of
    names, each task's (name, fingerprints) pairs and the Arrow tables of the whole index (its
    lines are the first tasks): the main process grew with the archive up to the first commit
    (at 300,000 runs, 43 MB of index tables and ~20 MB of names in its peak RSS). Now the index
    is staged on its own and a task is kept with its names packed in a string: what is held when
    8,192 runs commit is under 128 bytes a run more than what 1,024 runs hold (the packed names:
    ~40 bytes a run; before: ~330)."""
    _held_at_commit_kb(_indexed_archive(tmp_path / "warm", 64), monkeypatch)  # imports, caches
    monkeypatch.undo()
    small, small_result = _held_at_commit_kb(_indexed_archive(tmp_path / "small", 1024), monkeypatch)
    monkeypatch.undo()
    large, large_result = _held_at_commit_kb(_indexed_archive(tmp_path / "large", 8192), monkeypatch)
    assert (small_result.runs_loaded, large_result.runs_loaded) == (1024, 8192)
    assert (large - small) * 1024 < 128 * (8192 - 1024), (small, large)


def test_an_index_of_long_lines_is_parsed_in_bounded_memory(tmp_path):
    """invocations.jsonl lines each under the 16 MiB line limit but together far over it (a
    sparse file: lines of zero bytes, no disk written) go to the parser in blocks bounded in
    bytes, not only in lines: the ingest holds a block, never the file (before: 2,000 lines a
    block, so the whole 480 MiB index at once: ~690 MB added). What one line of 12 MiB costs to
    read and parse, ~165 MB, is the same for 6 such lines as for 48."""
    runs, _ = archive(tmp_path, PASS_RETRIEVAL)
    lines, size = 40, 12 << 20
    with open(runs / "invocations.jsonl", "wb") as fh:
        for n in range(1, lines + 1):
            fh.seek(n * size - 1)
            fh.write(b"\n")
    out = subprocess.run([sys.executable, "-c", PROBE, str(runs)], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "GROUNDWORK_INGEST_WORKERS": "0"})
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["added_mb"] < 256, got["added_mb"]
    assert sorted(line for path, line, *_ in got["issues"] if path == "invocations.jsonl") == list(range(1, lines + 1))
