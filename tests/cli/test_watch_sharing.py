"""Sharing the warehouse with a running `groundwork watch` (README.md#sharing-the-warehouse):
an open waits a bounded time for another process's lock; `groundwork sql`, `query` and
`nightly` succeed while the watch runs and runs keep landing, and the watch still judges every
run; without file events the watch polls."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time

import pytest

from groundwork.core.errors import GroundworkError, WarehouseLocked
from groundwork.core.warehouse import connect
from groundwork.jobs.watch import Watch
from watch_support import ROOT, SOURCES, Lander, WatchProcess, copy_run, corpus_ids, expected_verdict, wait_for_verdicts

HOLD = """
import duckdb, sys, time
con = duckdb.connect(sys.argv[1])
print("held", flush=True)
time.sleep(float(sys.argv[2]))
con.close()
print("released", flush=True)
sys.stdin.read()
"""


def test_an_open_waits_for_a_lock_held_by_another_process_then_says_who_holds_it(tmp_path):
    wh = tmp_path / "w.duckdb"
    connect(wh).close()
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(wh), "60"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        started = time.monotonic()
        with pytest.raises(WarehouseLocked) as exc:
            connect(wh, read_only=True, wait=0.3)
        assert 0.3 <= time.monotonic() - started < 5
        assert f"warehouse {wh} is locked by another process" in str(exc.value) and f"(PID {holder.pid})" in str(exc.value)
    finally:
        holder.kill()
        holder.wait()
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(wh), "1.0"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        started = time.monotonic()
        con = connect(wh, wait=30)  # a writer waits too, until the holder lets go
        waited = time.monotonic() - started
        con.close()
        assert holder.stdout.readline().strip() == "released"
    finally:
        holder.kill()
        holder.wait()
    assert 0.5 < waited < 20


def test_sql_query_and_nightly_work_while_the_watch_runs_and_it_still_judges_every_run(tmp_path):
    runs, wh = tmp_path / "runs", tmp_path / "w.duckdb"
    ids = corpus_ids()
    before, landing = ids[:8], ids[8:60]
    lander = Lander(runs)
    for inv in before:
        copy_run(inv, runs)
    watch = WatchProcess(runs, wh)
    landed: list[str] = []
    done = threading.Event()

    def land():
        for inv in landing:
            if done.is_set() and len(landed) >= 10:
                return
            lander.land(inv)
            landed.append(inv)
            time.sleep(0.1)

    writer = threading.Thread(target=land)
    try:
        watch.wait_started()
        wait_for_verdicts(wh, before[:1], timeout=60)
        writer.start()
        env = dict(os.environ, PYTHONPATH=str(ROOT), GROUNDWORK_LOCK_WAIT="30")
        results = {}
        for name, args in (
            ("sql", ["sql", "SELECT count(*) AS n FROM latest_lint", "--format", "csv"]),
            ("query", ["query", "agent_violation_rate", "--format", "csv"]),
            ("nightly", ["nightly", str(runs), "--sources", str(SOURCES), "--out", str(tmp_path / "out")]),
        ):
            results[name] = subprocess.run([sys.executable, "-m", "groundwork.cli", *args, "--warehouse", str(wh)],
                                           capture_output=True, text=True, env=env, timeout=300)
        done.set()
        writer.join()
        got = wait_for_verdicts(wh, [*before, *landed], timeout=120)
    finally:
        done.set()
        if writer.is_alive():
            writer.join()
        code, _, err = watch.stop()
    for name, proc in results.items():
        assert proc.returncode in ((0, 1) if name == "nightly" else (0,)), (name, proc.stderr)
        assert "locked" not in proc.stderr, (name, proc.stderr)
    assert int(results["sql"].stdout.splitlines()[1]) >= 1
    assert "nightly #1" in results["nightly"].stdout
    assert code == 0, err
    for inv in [*before, *landed]:
        v = got[inv]
        assert {k: v[k] for k in ("lint", "grounding", "sources_status", "sources")} == expected_verdict(inv), inv
        assert v["linted_ingest"] == v["ingest"], inv


def test_without_file_events_it_polls(tmp_path, monkeypatch):
    import watchfiles

    def unavailable(*args, **kwargs):
        raise OSError(28, "inotify watch limit reached")
        yield  # pragma: no cover

    monkeypatch.setattr(watchfiles, "watch", unavailable)
    runs, wh = tmp_path / "runs", tmp_path / "w.duckdb"
    lander = Lander(runs)
    inv = corpus_ids()[0]
    errors: list[str] = []
    judged = threading.Event()
    watch = Watch(runs, warehouse=wh, sources=SOURCES, out=lambda line: None, err=errors.append,
                  on_batch=lambda batch: inv in batch.runs and judged.set())
    thread = threading.Thread(target=watch.run)
    thread.start()
    try:
        time.sleep(0.5)
        lander.land(inv)
        assert judged.wait(30)
    finally:
        watch.stop.set()
        thread.join(30)
    assert not thread.is_alive()
    got = wait_for_verdicts(wh, [inv], timeout=5)
    assert got[inv]["grounding"] == expected_verdict(inv)["grounding"]
    assert watch.tally.polling
    assert len(errors) == 1 and "file events unavailable" in errors[0] and "polling every" in errors[0]


def test_a_pinned_copy_edited_while_it_runs_is_read_again_and_stops_it(tmp_path):
    """Each batch trusts a pinned copy's file while its size, inode, device, mtime and ctime are
    as when its bytes last matched the pin (docs/rules.md#sources-configuration), without reading
    it: it records the files it checked, and a file edited in place (the same size) is read again
    and no longer matches its pin: the watch stops with that error rather than judge against it."""
    sources = tmp_path / "sources.yaml"
    shutil.copy(SOURCES, sources)
    shutil.copytree(SOURCES.parent / "snapshots", tmp_path / "snapshots")
    time.sleep(2.1)  # a file changed less than 2 s before it was read is not recorded
    runs, wh = tmp_path / "runs", tmp_path / "w.duckdb"
    lander = Lander(runs)
    first, second = corpus_ids()[:2]
    judged: list[str] = []
    failure: list[BaseException] = []
    watch = Watch(runs, warehouse=wh, sources=sources, out=lambda line: None, err=lambda line: None,
                  on_batch=lambda batch: judged.extend(batch.runs))

    def run() -> None:
        try:
            watch.run()
        except BaseException as exc:  # noqa: BLE001 - what stopped it, for the assertions
            failure.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    try:
        time.sleep(0.5)
        lander.land(first)
        deadline = time.monotonic() + 30
        while first not in judged and time.monotonic() < deadline:
            time.sleep(0.05)
        assert first in judged
        records = tmp_path / "snapshots" / "records.jsonl"
        data = bytearray(records.read_bytes())
        data[data.index(b'"', 10)] = ord("'")  # one byte changed, the same size
        records.write_bytes(bytes(data))
        lander.land(second)
        thread.join(30)
    finally:
        watch.stop.set()
        thread.join(30)
    assert not thread.is_alive()
    assert second not in judged
    assert len(failure) == 1 and isinstance(failure[0], GroundworkError)
    assert "records.jsonl" in str(failure[0]) and "sha256" in str(failure[0]).lower()
    con = connect(wh, read_only=True)
    try:
        recorded = {os.path.basename(f) for f, in con.execute("SELECT file FROM source_files").fetchall()}
    finally:
        con.close()
    assert recorded == {"records.jsonl", "fairsharing.json"}
