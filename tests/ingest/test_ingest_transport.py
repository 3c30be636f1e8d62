"""The parser processes hand their Arrow tables to the main process through anonymous shared
memory (ingest/shm.py) or, as a fallback, the executor's pipe: both give the same warehouse; a
slot is reused only once nothing refers to its memory; a kill -9 leaves no memory behind."""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
import time
import uuid
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import pytest

import groundwork.ingest.load as load
from groundwork.ingest import shm
from groundwork.ingest.work import ChunkResult
from ingest_support import fresh_con, ingest, snapshot
from test_ingest_incremental import clone_archive

ROOT = Path(__file__).resolve().parent.parent.parent
MEMFD = "memfd:" + shm._NAME


@pytest.fixture(scope="module")
def corpus3(tmp_path_factory):
    """297 runs (the corpus three times) and the warehouse parsed inline (no transport at all)."""
    runs = clone_archive(tmp_path_factory.mktemp("transport"), 3)
    con, result = ingest(runs, workers=0)
    assert result.runs_loaded == 297
    return runs, snapshot(con)


@pytest.fixture
def spy(monkeypatch):
    """The Slots each ingest creates (None when it went without), with their counters."""
    made = []
    real_create = shm.Slots.create.__func__

    def create(cls, count):
        slots = real_create(cls, count)
        made.append(slots)
        return slots
    monkeypatch.setattr(load.Slots, "create", classmethod(create))
    monkeypatch.delenv(shm.ENV, raising=False)
    return made


def pooled(runs, **kw):
    """Ingest with two parser processes and small batches (297 runs: 33 tasks of 9 runs)."""
    kw.setdefault("batch_runs", 50)
    return ingest(runs, workers=2, **kw)


def held_by(pid) -> list[str]:
    """The groundwork slots a process has open or mapped."""
    held = []
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith("/" + MEMFD):
                held.append(target)
        with open(f"/proc/{pid}/maps") as fh:
            held += [line for line in fh if MEMFD in line]
    except OSError:
        pass
    return held


def test_shared_memory_and_pipe_give_the_warehouse_of_an_inline_parse(corpus3, spy, monkeypatch):
    runs, inline = corpus3
    con, result = pooled(runs)
    slots, = spy
    assert slots is not None, "memfd transport unavailable on this machine"
    assert result.runs_loaded == 297
    assert (slots.used, slots.retired) == (33, 0)  # every task came through a slot, each one given back
    assert snapshot(con) == inline

    monkeypatch.setenv(shm.ENV, "pipe")
    con, result = pooled(runs)
    assert spy[1] is None  # forced back to the pipe
    assert snapshot(con) == inline
    assert held_by(os.getpid()) == []


def test_slots_are_reused_once_written_never_while_duckdb_may_read_them(corpus3, spy, monkeypatch):
    """A batch's slots are given back once its rows are inserted, before the transaction commits
    (every batch of this ingest is in one: load.TXN_RUNS): DuckDB, scanning them through a record
    batch reader (load._insert), keeps no reference to them (none retired), and the rows it
    commits are those it read (the warehouse of an inline parse)."""
    runs, inline = corpus3
    monkeypatch.setattr(load, "_slot_count", lambda pool, loader: pool.ahead() + 2)  # 14 slots, 33 tasks
    real_write, real_insert, real_commit = load._write_rows, load._insert, load._Writer._commit
    writing, inserts, early, commits = [], [], [], []  # slots of each batch written; inserts run; slots given back too early

    def write_rows(con, batch):
        writing.append({r.slot for r in batch.pending if r.slot is not None})
        try:
            return real_write(con, batch)
        finally:
            early.extend(writing[-1] & set(spy[0].free))  # given back before its rows were inserted?
            writing.append(set())

    def insert(con, table, tbl, columns=None):
        if writing and writing[-1]:
            inserts.append(table)
            early.extend(writing[-1] & set(spy[0].free))
        return real_insert(con, table, tbl, columns)

    def commit(self):
        commits.append(len([s for s in writing if s]))  # batches written by then
        return real_commit(self)
    monkeypatch.setattr(load, "_write_rows", write_rows)
    monkeypatch.setattr(load, "_insert", insert)
    monkeypatch.setattr(load._Writer, "_commit", commit)
    con, result = pooled(runs)
    slots, = spy
    assert snapshot(con) == inline
    assert slots.used == 33 and slots.retired == 0
    assert len(slots.slots) == 0  # closed at the end of the ingest
    assert slots.waits > 0        # the submits waited for slots the writer gave back
    assert any(writing) and inserts and early == []
    assert commits == [len([s for s in writing if s])]  # one transaction, committed at the end: slots reused before it


def test_a_slot_still_referred_to_is_not_reused_until_the_reference_is_gone():
    slots = shm.Slots.create(1)
    assert slots is not None
    try:
        def task(payload: bytes) -> tuple[int, ChunkResult]:
            ref = slots.acquire()
            res = ChunkResult()
            res.slot_tables, res.slot_end = shm.put(ref, {"runs": payload})  # what a worker does
            return ref[1], slots.receive(ref[1], res)

        first, res = task(b"A" * 5000)
        kept = res.tables["runs"]  # an Arrow buffer over the slot, outliving the write
        slots.release(res)
        assert slots.retired == 1 and slots.free == []
        assert slots.acquire() is None  # the only slot is not handed out: this task takes the pipe
        assert kept.to_pybytes() == b"A" * 5000
        del kept
        second, res = task(b"B" * 70_000)  # the same slot once the reference is gone, grown
        assert second == first and res.tables["runs"].to_pybytes() == b"B" * 70_000
        slots.release(res)
        assert slots.free == [first] and slots.retired == 1
    finally:
        shm._forget()
        slots.close()


def test_a_slot_the_workers_cannot_open_sends_the_tables_through_the_pipe(corpus3, spy, monkeypatch):
    runs, inline = corpus3
    real_ref = shm.Slots._ref
    monkeypatch.setattr(shm.Slots, "_ref", lambda self, i: (*real_ref(self, i)[:2], "/proc/0/fd/0", 0))
    con, result = pooled(runs)
    slots, = spy
    assert slots.used == 0 and slots.closed  # the first failure switched the ingest to the pipe
    assert snapshot(con) == inline


def test_without_memfd_or_proc_the_ingest_uses_the_pipe(corpus3, spy, monkeypatch):
    runs, inline = corpus3
    monkeypatch.setattr(shm.Slots, "_path", lambda self, i: "/nonexistent/fd")  # no /proc
    con, _ = pooled(runs)
    monkeypatch.delattr(os, "memfd_create")  # not Linux
    con2, _ = pooled(runs)
    assert spy == [None, None]
    assert snapshot(con) == snapshot(con2) == inline


def test_a_parser_process_dying_mid_task_fails_the_ingest_and_a_rerun_completes_it(corpus3, spy, monkeypatch):
    runs, inline = corpus3
    con = fresh_con()
    # the parser processes read this when they start: each dies after filling its 3rd slot
    monkeypatch.setenv("GROUNDWORK_INGEST_CRASH", "worker-slot-written:3")
    with pytest.raises(BrokenProcessPool):
        pooled(runs, con=con)
    assert spy[0] is not None and spy[0].slots == []  # closed: the memfds are freed with their last holder
    gc.collect()  # (the results of the failed ingest, held by the exception's frames, mapped the slots)
    assert held_by(os.getpid()) == []
    monkeypatch.delenv("GROUNDWORK_INGEST_CRASH")
    _, result = pooled(runs, con=con)
    assert snapshot(con) == inline
    assert con.execute("SELECT count(*) - count(finished_at) FROM ingests").fetchall() == [(1,)]


KILLED_SCRIPT = """
import sys
from groundwork.core.warehouse import connect
from groundwork.ingest import ingest_archive
ingest_archive(connect(sys.argv[1]), sys.argv[2], workers=2, batch_runs=40)
"""
IN_USE = 3  # slots holding received results at the kill: the first batch alone holds 5 (40 runs, 9 a task)
# How long the parser processes and the resource tracker may take to go once the main process
# is dead. Each notices at once (a pidfd), but one that had not finished starting its interpreter
# (~0.5 s of CPU, imports included) must finish that first; nice 5 and a 2-core machine shared
# with CPU-bound processes stretch that to seconds. 120 s only bounds a process that never exits:
# the wait ends as soon as they are gone.
GONE_WITHIN = 120


def _marked(mark: str) -> list[int]:
    pids = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/environ", "rb") as fh:
                    if mark.encode() in fh.read():
                        pids.append(int(pid))
            except OSError:
                continue
    return pids


def test_kill_9_of_the_main_process_leaves_no_shared_memory_behind(corpus3, tmp_path):
    runs, _ = corpus3
    mark = f"GW_TRANSPORT_TEST={uuid.uuid4()}"
    # the ingest kills itself (SIGKILL, as kill -9) the moment IN_USE slots hold results it
    # received: a state it reaches by its own progress, whatever the machine's speed
    env = dict(os.environ, PYTHONPATH=str(ROOT), GROUNDWORK_INGEST_CRASH=f"slots-in-use:{IN_USE}")
    env.pop(shm.ENV, None)
    env["GW_TRANSPORT_TEST"] = mark.split("=", 1)[1]
    proc = subprocess.run([sys.executable, "-c", KILLED_SCRIPT, str(tmp_path / "w.duckdb"), str(runs)],
                          env=env, capture_output=True, timeout=600)
    # only that state sends the signal: an ingest through the pipe would end with 0
    assert proc.returncode == -signal.SIGKILL, (proc.returncode, proc.stderr.decode())
    # only the main process was killed; its parser processes follow it, and with them the
    # last references to the memfds
    deadline = time.monotonic() + GONE_WITHIN
    while (left := _marked(mark)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert left == [], [held_by(p) for p in left]


def test_a_parser_process_starting_after_its_main_process_died_exits_at_once():
    """A parser process still starting its interpreter when the main process is killed has been
    re-parented by the time it runs its initializer: it must go, not watch its new parent and
    wait for tasks forever (holding the slots it would open)."""
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    worker = subprocess.run([sys.executable, "-c", "import sys, threading\n"
                             "from groundwork.ingest.work import _exit_with_parent\n"
                             "_exit_with_parent(int(sys.argv[1]))\n"
                             "threading.Event().wait()  # what a parser process does next: wait for tasks",
                             dead.stdout.strip()], env=dict(os.environ, PYTHONPATH=str(ROOT)),
                            capture_output=True, text=True, timeout=120)
    assert (worker.returncode, worker.stderr) == (1, "")
