"""Load an archive into the warehouse: batches of runs, one transaction per TXN_RUNS runs.

Protocol (what makes kill -9 at any moment safe):

1. An ``ingests`` row is committed first (``finished_at`` NULL until the end).
2. Run folders are streamed from the archive root in chunks; worker processes list, fingerprint,
   read and parse them (``process_chunk``); the main process writes batches of results into a
   transaction committed every TXN_RUNS runs and at the end: the rows of reloaded runs are
   deleted and re-inserted whole, together with their ``run_files`` fingerprints. A killed
   transaction leaves nothing behind, and a committed one's runs are skipped as unchanged by the
   next ingest.
3. A final transaction replaces the archive-level state (index, class schemas, issues of the
   archive root and of rejected folders, duplicate-id issues), marks runs whose folder is gone
   as missing and closes the ``ingests`` row. Everything it writes is recomputed from the disk
   and the warehouse, so a re-run after a kill gives the same tables as one clean ingest.

Re-ingesting an unchanged archive changes no row (except the new ``ingests`` log row).
"""

from __future__ import annotations

import hashlib
import itertools
import os
import queue
import re
import signal
import sys
import threading
import time
from collections import deque
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from groundwork import __version__ as tool_version
from groundwork.core.engine import arrow, duckdb, full
from groundwork.core.jsontext import MAX_LINE
from groundwork.core.regular import NotRegularFile, open_regular, open_regular_file
from groundwork.core.values import ARROW_ROWS, insert_values
from groundwork.core.warehouse import ROW_GROUP_SIZE, cursor, memory_at_most, memory_setting, size_bytes

from groundwork.ingest import issues as K
from groundwork.ingest.archive import (NOT_A_SCHEMA, claims, index_blocks, index_duplicates, schema_file,
                                       schema_name_ok)
from groundwork.ingest.issues import Issues
from groundwork.ingest.parse import (ENVELOPE, FILE_FIELDS, GROUNDING, ISSUE_FIELDS, REQUEST, SOURCES, SPANS as SPANS_FILE,
                                     PARSER_VERSION, issue_row, issue_rows,
                                     stand_in_run)
from groundwork.ingest.scan import (INDEX_FILE, SCHEMAS_DIR, classify_root, display_name, inside,
                                    split_lines)
from groundwork.ingest.runs_folder import check_runs_dir
from groundwork.ingest.tables import RUN_TABLES, check_fields, column_list, to_arrow
from groundwork.ingest.shm import Slots
from groundwork.ingest.single import run_rows
from groundwork.ingest.work import (INDEX_FIELDS, ChunkResult, _crash_point, _from_ipc, _worker_init,
                                    process_index_lines, run_task)
from groundwork.ingest.work import process_chunk  # noqa: F401 - replaced by benchmarks/pipeline_floor.py

if TYPE_CHECKING:   # annotations only: pyarrow is imported where rows are written (not by an ingest with nothing new)
    import pyarrow as pa

CHUNK = 256           # runs per worker task, at most (see _chunk_size)
LOOKUP = 1024         # runs fetched at a time from the stream of (run folder, stored fingerprints)
DIR_BATCH = 16384     # run folder names per insert into the TEMP table of the archive's listing
BATCH_RUNS = 5000     # runs per batch handed to the writer thread (its rows are held until written)
BATCH_ROWS = 150_000  # or fewer when the runs are large
BATCH_BYTES = 96 << 20  # or fewer when their rows are large (5,000 synthetic runs: ~44 MB of Arrow IPC), so
                        # a few huge runs are held and refused (write_batch) in small batches
# Runs per transaction: the writer commits after the batch that reaches it (and at the end). A
# transaction holding a whole row group of a table (ROW_GROUP_SIZE rows) has DuckDB write it to
# the file compressed while inserting ("optimistic writes"); rows committed in smaller
# transactions are written to the WAL first, compressed by a later checkpoint, and the open row
# groups compressed again by each checkpoint after. At 20,000 runs, batches of 5,000 committed
# one by one cost ~2.3 s of the writer's CPU and left 0.75 s of checkpoint for the end; one
# transaction ~1.1 s and nothing. The rows of a batch are not held until the commit (_insert).
TXN_RUNS = 4 * ROW_GROUP_SIZE


@dataclass
class IngestResult:
    """What one ingest did. Counts reconcile:
    ``folders_seen == runs_loaded + runs_unchanged + runs_rejected``."""

    ingest_id: int | None
    runs_dir: str
    folders_seen: int = 0
    runs_loaded: int = 0
    runs_unchanged: int = 0
    runs_rejected: int = 0
    runs_missing: int = 0
    issues_new: int = 0
    issues_by_kind: dict[str, int] = field(default_factory=dict)
    elapsed: float = 0.0
    scan: str = "full"  # or "quick" (ingests.scan)
    # the runs loaded (new or replaced), gone missing or back, sorted; None when more than
    # CHANGED_NAMES (a list of every run of a large archive is what made the end of an ingest grow)
    changed_runs: list[str] | None = field(default_factory=list)

    @property
    def issues_total(self) -> int:
        return sum(self.issues_by_kind.values())

    @property
    def exit_code(self) -> int:
        """0 clean, 1 the archive has ingest issues."""
        return 1 if self.issues_by_kind else 0


# ------------------------------------------------------------------------------- main side


@contextmanager
def _workers_may_start():
    """Around a submit to the process pool, which may start a worker:

    - Spawned workers re-import a script's __main__ (and re-run it, without a __name__ guard);
      they only need the ingest package, so the script path is hidden while workers start.
    - SIGINT is blocked in this thread, so a worker starts with it blocked (the signal mask
      survives fork and exec) and keeps it so: a Ctrl-C at the terminal goes to every process
      of the group, and a worker taking it would print its KeyboardInterrupt traceback from
      wherever it was. The main process alone stops (one line, groundwork.cli); a SIGINT that
      comes while blocked here is delivered on leaving, not lost."""
    blocked = hasattr(signal, "pthread_sigmask")
    if blocked:
        was = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        main = sys.modules.get("__main__")
        if main is None or getattr(main, "__spec__", None) is not None or not hasattr(main, "__file__"):
            yield
            return
        path = main.__file__
        del main.__file__
        try:
            yield
        finally:
            main.__file__ = path
    finally:
        if blocked:
            signal.pthread_sigmask(signal.SIG_SETMASK, was)


class _Pool:
    """A process pool with bounded look-ahead (memory stays bounded by the window), or inline.

    During an ingest, ``slots`` (ingest/shm.py) carry the tasks' Arrow tables back instead of
    the executor's pipe; ``make_room`` is called while a submit waits for a free slot."""

    def __init__(self, workers: int):
        self.workers = workers
        self.ex = None
        self.window: deque = deque()  # (future, slot index or None)
        self.slots: Slots | None = None
        self.make_room = None

    def __enter__(self):
        if self.workers > 0 and self.ex is None:
            # imported here: a nightly with few new runs starts no parser process, and importing
            # the process pool and multiprocessing cost every such nightly ~7 ms
            from concurrent.futures import ProcessPoolExecutor
            from multiprocessing import get_context

            self.ex = ProcessPoolExecutor(max_workers=self.workers, mp_context=get_context("spawn"),
                                          initializer=_worker_init, initargs=(os.getpid(),))
        return self

    def __exit__(self, *exc):
        self.slots = self.make_room = None
        if self.ex is not None:
            # Not waiting: the workers' interpreters take ~0.1 s to wind down, which they do
            # while this process commits the index, finishes and checkpoints.
            self.ex.shutdown(wait=False, cancel_futures=True)
            self.ex = None

    def warm(self) -> "_Pool":
        """Start every worker now (the executor starts them one task at a time, on demand), so
        their interpreters load the parser while the caller does something else."""
        self.__enter__()
        if self.ex is not None:
            with _workers_may_start():
                for _ in range(self.workers):
                    self.ex.submit(process_index_lines, [])
        return self

    def submit(self, fn, *args):
        """Queue a task; yield results of finished tasks (in submission order) when the window is full."""
        if self.ex is None:
            yield _with_task(fn(*args), fn, args)
            return
        ref = None
        if self.slots is not None and fn is not process_index_lines:
            ref = self.slots.acquire(self.make_room)
        with _workers_may_start():
            self.window.append((self.ex.submit(run_task, ref, fn, *args), None if ref is None else ref[1], (fn, args)))
        while len(self.window) > self.ahead():
            yield self._result(*self.window.popleft())

    def ahead(self) -> int:
        """Tasks in flight at most."""
        return 6 * self.workers

    def drain(self):
        while self.window:
            yield self._result(*self.window.popleft())

    def _result(self, future, slot, task):
        res = _with_task(future.result(), *task)
        if slot is None:
            return res
        res = self.slots.receive(slot, res)
        # GROUNDWORK_INGEST_CRASH=slots-in-use:n (the kill -9 transport test): killed once n
        # slots hold results this process received, a state its own progress reaches
        _crash_point("slots-in-use", self.slots.in_use)
        return res


def _with_task(res, fn, args):
    """``res`` with the task that gave it, when a ChunkResult (``_Writer._redo`` runs it again)."""
    if isinstance(res, ChunkResult):
        res.task = (fn, args)
    return res


class _Borrowed:
    """A pool the caller started (``parsers``): used, not shut down."""

    def __init__(self, pool: _Pool):
        self.pool = pool

    def __enter__(self):
        return self.pool

    def __exit__(self, *exc):
        self.pool.window.clear()
        self.pool.slots = self.pool.make_room = None


SMALL = 200  # archives with fewer run folders are parsed in the calling process
QUICK_INLINE = 2000  # and quick scans reading fewer (1,000 runs: ~0.6 s of CPU inline, ~0.5 s more
                     # to start the parser processes, for about the same wall time on 2 cores)


def _small(runs_dir) -> bool:
    try:
        with os.scandir(runs_dir) as it:
            return sum(1 for _ in itertools.islice(it, SMALL)) < SMALL
    except OSError:
        return True  # ingest_archive words the error


@contextmanager
def parsers(workers: int | None = None, runs_dir=None):
    """Parser processes started ahead of ``ingest_archive(..., parsers=...)``: open the
    warehouse inside the block, and the workers load meanwhile (~0.2 s saved per ingest).
    None are started for a small ``runs_dir``."""
    if runs_dir is not None and _small(runs_dir):
        workers = 0
    pool = _Pool(_default_workers() if workers is None else workers).warm()
    try:
        yield pool
    finally:
        pool.__exit__(None, None, None)


def _now():
    return datetime.now(timezone.utc).replace(tzinfo=None)


def _default_workers() -> int:
    env = os.environ.get("GROUNDWORK_INGEST_WORKERS")
    if env is not None and env.strip().isdigit():
        return int(env)
    return min(4, os.cpu_count() or 1)


@dataclass
class _Batch:
    pending: list[ChunkResult]
    replace: list[str]
    seen: list[str]
    touched: list[tuple[str, str]]


@dataclass(slots=True)
class _Redo:
    """What the open transaction keeps of a written task, to run it again should the transaction
    be rolled back (_Writer._redo): the task without its (name, stored fingerprints) pairs, the
    names packed in one string, the result's counts and rejected folders' issues. Not the
    result's lists of names nor the pairs: at 65,536 runs (TXN_RUNS) those were ~20 MB of the
    main process until the commit (~40 bytes a run now). What the warehouse held of each run
    is read again after the rollback (``_stored``): as when the runs were listed, since every
    transaction writes other runs than the rolled-back one's."""

    fn: object
    args: tuple        # process_chunk's arguments, without the run folders (``args[3]``) ...
    names: str         # ... whose names these are, NUL-separated (no file name holds a NUL)
    counts: tuple      # the result's loaded, unchanged, rejected (as _Writer.recount)
    rejected_issues: list

    @classmethod
    def of(cls, res: ChunkResult) -> "_Redo":
        fn, args = res.task
        return cls(fn, (*args[:3], None, *args[4:]), "\0".join(name for name, _ in args[3]),
                   (len(res.loaded), len(res.unchanged), len(res.rejected)), res.rejected_issues)

    def run_names(self) -> list[str]:
        return self.names.split("\0") if self.names else []

    def task(self, stored: dict[str, tuple]) -> tuple:
        """(function, arguments) as first submitted, ``stored`` what the warehouse holds by name."""
        args = self.args
        return self.fn, (*args[:3], [(n, stored.get(n)) for n in self.run_names()], *args[4:])


def _stored(con, names: list[str]) -> dict[str, tuple]:
    """What the warehouse holds of the runs ``names`` (those it holds): name -> (files
    fingerprint, content fingerprint, parser version), as process_chunk's items carry it."""
    return {row[0]: tuple(row[1:]) for row in con.execute(
        "SELECT invocation_id, files_fingerprint, content_fingerprint, parser_version FROM runs "
        "WHERE invocation_id IN (SELECT unnest($names::VARCHAR[]))", {"names": names}).fetchall()}


class _Writer:
    """Writes batches on its own DuckDB cursor in a thread, so parsing never waits for inserts
    (DuckDB releases the GIL). At most two batches wait, which bounds memory.

    The batches go into one open transaction, committed once it holds ``txn_runs`` runs (TXN_RUNS)
    and at the end (``close``). A batch's shared memory is given back as soon as its rows are
    inserted; should the warehouse refuse a batch's rows, the transaction is rolled back and what
    it held is written again batch by batch, as write_batch writes (the earlier batches' tasks
    run again, in this thread: their rows are not held), the refused runs isolated."""

    def __init__(self, con: duckdb.DuckDBPyConnection, txn_runs: int = TXN_RUNS):
        self.con = con
        self.txn_runs = txn_runs
        self.queue: queue.Queue = queue.Queue(maxsize=2)
        self.error: BaseException | None = None
        self.issues_new = 0
        self.put_count = 0   # batches put (by the main thread) ...
        self.done_count = 0  # ... and written (by the writer thread)
        self.slots: Slots | None = None  # given back their shared memory once a batch is written
        self.open = False    # a transaction is open ...
        self.held: list = [] # ... holding these batches (their tasks, _Redo) and any index table
        self.held_runs = 0
        self.held_issues = 0
        # what batches written again found otherwise than when first read (a run folder changed
        # meanwhile): count corrections and rejected-folder issues to swap (``_Loader.close_writer``)
        self.recount: dict[str, int] = {"loaded": 0, "unchanged": 0, "rejected": 0}
        self.rejected_swap: list[tuple[list, list]] = []
        self.stopping = False  # ``stop``: write nothing more
        self.thread = threading.Thread(target=self._run, name="groundwork-ingest-writer", daemon=True)
        self.thread.start()

    def put(self, batch: _Batch) -> None:
        self._check()
        self.put_count += 1
        self.queue.put(batch)

    @property
    def idle(self) -> bool:
        return self.done_count == self.put_count

    def close(self) -> None:
        self.queue.put(None)
        self.thread.join()
        self._check()

    def stop(self) -> None:
        """End the thread, writing nothing more (the main thread stopped, at a Ctrl-C or SIGTERM,
        say): the statement it runs is interrupted, the batches queued are dropped, the open
        transaction is rolled back. It returns once the thread has ended, whatever interrupts it
        meanwhile: a thread left inside DuckDB when the process ends (its statement calling back
        into an interpreter being finalised) made the C++ runtime abort the process ("FATAL:
        exception not rethrown", exit -6) in about one SIGTERM in ten during an ingest."""
        self.stopping = True
        while self.thread.is_alive():
            try:
                try:
                    self.queue.put_nowait(None)
                except queue.Full:
                    pass
                self.con.interrupt()
                self.thread.join(0.05)
            except KeyboardInterrupt:
                continue

    def _check(self) -> None:
        if self.error is not None:
            err, self.error = self.error, None
            raise err

    def _run(self) -> None:
        while True:
            batch = self.queue.get()
            if batch is None and self.stopping:
                if self.open:
                    self.open = False
                    _rollback(self.con)
                return
            if batch is None:
                if self.error is None:
                    try:
                        self._commit()
                    except BaseException as exc:  # noqa: BLE001 - handed to the main thread
                        self._fail(exc)
                return
            try:
                if self.error is not None or self.stopping:
                    continue  # drain; the main thread re-raises (or has stopped)
                self._write(batch)
            except BaseException as exc:  # noqa: BLE001 - handed to the main thread
                self._fail(exc)
            finally:
                # The batch's shared memory is given back once its rows are inserted (_insert
                # lets DuckDB keep no reference to it). (Should anything still refer to a slot,
                # say the traceback of an error, it is not reused before that reference is gone.)
                # (A release failing, the slots torn down by a main thread that stopped, say at a
                # Ctrl-C, is handed over as any error: never a thread's traceback.)
                try:
                    if isinstance(batch, _Batch):  # not the index's rows (an Arrow table)
                        for r in batch.pending:
                            if self.slots is not None:
                                self.slots.release(r)
                            r.tables = {}  # the rows go; the names stay (``_redo``)
                except BaseException as exc:  # noqa: BLE001 - handed to the main thread
                    if self.error is None:
                        self._fail(exc)
                self.done_count += 1

    def _fail(self, exc: BaseException) -> None:
        self.error = exc
        if self.open:
            self.open = False
            _rollback(self.con)
        if self.slots is not None:
            self.slots.disable()  # a submit waiting for a slot goes on through the pipe

    def _write(self, batch) -> None:
        pa = arrow()

        con = self.con
        index_rows = isinstance(batch, pa.Table)  # invocations.jsonl rows, staged until the final transaction
        if index_rows and not self.open:
            # Staged on their own (a TEMP table: nothing of the warehouse changes), not in the
            # runs' transaction, which would hold them until its commit to write them again
            # should it be rolled back (_redo): the index's blocks are the first tasks, so at
            # 300,000 runs that was the whole index, 43 MB of Arrow tables held to the first commit.
            _insert(con, "_gw_index_stage", batch, columns=column_list("invocation_index"))
            return
        if not self.open:
            con.execute("BEGIN")
            self.open, self.held, self.held_runs, self.held_issues = True, [], 0, 0
        try:
            if index_rows:
                _insert(con, "_gw_index_stage", batch, columns=column_list("invocation_index"))
            else:
                self.held_issues += _write_rows(con, batch)
        except duckdb.Error as exc:
            if isinstance(exc, _NOT_ISOLABLE) or isinstance(batch, pa.Table) or not any(r.loaded for r in batch.pending):
                raise
            self.open = False
            _rollback(con)
            self._redo(batch)
            return
        if index_rows:
            self.held.append(batch)
            return
        self.held.append(tuple(_Redo.of(r) for r in batch.pending))
        self.held_runs += sum(len(r.loaded) + len(r.unchanged) + len(r.rejected) for r in batch.pending)
        if self.held_runs >= self.txn_runs:
            self._commit()

    def _commit(self) -> None:
        if not self.open:
            return
        _crash_point("batch-before-commit")
        try:
            self.con.execute("COMMIT")
        except duckdb.Error as exc:
            self.open = False
            _rollback(self.con)
            if isinstance(exc, _NOT_ISOLABLE):
                raise
            self._redo(None)
            return
        self.open = False
        self.issues_new += self.held_issues
        self.held = []
        _crash_point("batch-after-commit")

    def _redo(self, failed: _Batch | None) -> None:
        """The open transaction was rolled back: write what it held again, each batch in its own
        transaction (write_batch), then ``failed`` (the batch whose rows were refused)."""
        pa = arrow()

        held, self.held = self.held, []
        for item in held:
            if isinstance(item, pa.Table):
                with _transaction(self.con):
                    _insert(self.con, "_gw_index_stage", item, columns=column_list("invocation_index"))
            else:
                self.issues_new += write_batch(self.con, self._again(item))
        if failed is not None:
            self.issues_new += write_batch(self.con, failed)

    def _again(self, batch: tuple[_Redo, ...]) -> _Batch:
        """A batch read and parsed again (its results' tasks, run here)."""
        pending = []
        stored = _stored(self.con, [n for old in batch for n in old.run_names()])
        for old in batch:
            fn, args = old.task(stored)
            new = _with_task(fn(*args), fn, args)
            for key, n in zip(self.recount, old.counts):
                self.recount[key] += len(getattr(new, key)) - n
            if new.rejected_issues != old.rejected_issues:
                self.rejected_swap.append((old.rejected_issues, new.rejected_issues))
            pending.append(new)
        return _Batch(pending, replace=[n for r in pending for n in r.loaded if n in stored],
                      seen=[n for r in pending for n in (*r.loaded, *r.unchanged)],
                      touched=[t for r in pending for t in r.touched])


def write_batch(con: duckdb.DuckDBPyConnection, batch: _Batch) -> int:
    """One transaction: replace the rows of reloaded runs, add new ones, record fingerprints.
    Returns the number of issue rows written.

    Should the warehouse refuse the batch's rows (say DuckDB runs out of memory on a huge value
    the read-time bounds let through), the batch is written again in halves, down to the run(s)
    whose rows it refuses: each of those is kept as an unlintable, unverifiable stand-in with an
    ``unstorable`` issue naming the cause and its largest value, and the rest of the batch loads
    (docs/rules.md#too-large-runs). An error that is no run's doing (disk full, ...) is raised."""
    try:
        return _write_whole(con, batch)
    except duckdb.Error as exc:
        if isinstance(exc, _NOT_ISOLABLE) or not any(r.loaded for r in batch.pending):
            raise
        return _write_isolating(con, batch)


# errors no single run's rows cause: isolating runs would only repeat them
_NOT_ISOLABLE = (duckdb.IOException, duckdb.FatalException, duckdb.InterruptException)


def _write_whole(con: duckdb.DuckDBPyConnection, batch: _Batch) -> int:
    with _transaction(con, "batch"):
        return _write_rows(con, batch)


def _write_rows(con: duckdb.DuckDBPyConnection, batch: _Batch) -> int:
    """The rows of ``batch`` into the open transaction; returns the number of issue rows."""
    pa = arrow()

    pending = batch.pending
    issues_new = 0
    if batch.replace:
        _delete_runs(con, batch.replace)
    for t in RUN_TABLES:
        parts = [_from_ipc(r.tables[t]) for r in pending if t in r.tables]
        if not parts:
            continue
        tbl = pa.concat_tables(parts) if len(parts) > 1 else parts[0]
        if t == "ingest_issues":
            issues_new += tbl.num_rows
        _insert(con, t, tbl)
    _write_bookkeeping(con, batch)
    return issues_new


def _delete_runs(con, names: list[str]) -> None:
    pa = arrow()

    _with_table(con, "_gw_replace", pa.table({"id": pa.array(names, pa.string())}), lambda: [
        con.execute(f"DELETE FROM {t} WHERE invocation_id IN (SELECT id FROM _gw_replace)")
        for t in RUN_TABLES])


def _write_bookkeeping(con, batch: _Batch) -> None:
    """The batch's touched runs (new stat, same content) and the names seen."""
    pa = arrow()

    pending = batch.pending
    if batch.touched:
        tt = pa.table({"id": pa.array([n for n, _ in batch.touched], pa.string()),
                       "fp": pa.array([fp for _, fp in batch.touched], pa.string())})

        def upd():
            con.execute("UPDATE runs SET files_fingerprint = _gw_touched.fp FROM _gw_touched "
                        "WHERE runs.invocation_id = _gw_touched.id")
            con.execute("DELETE FROM run_files WHERE invocation_id IN (SELECT id FROM _gw_touched)")
        _with_table(con, "_gw_touched", tt, upd)
        _insert(con, "run_files", to_arrow("run_files", [f for r in pending for f in r.touched_files], FILE_FIELDS))
    if batch.seen:
        _with_table(con, "_gw_seen_batch", pa.table({"id": pa.array(batch.seen, pa.string())}),
                    lambda: con.execute("INSERT INTO _gw_seen SELECT id FROM _gw_seen_batch"))


def _write_isolating(con, batch: _Batch) -> int:
    """write_batch's fallback: the loaded runs' rows in halves, one transaction each, down to
    single runs; a run whose rows still fail becomes a stand-in (``_write_stand_in``)."""
    pa = arrow()

    tables = {}
    for t in RUN_TABLES:
        parts = [_from_ipc(r.tables[t]) for r in batch.pending if t in r.tables]
        if parts:
            tables[t] = pa.concat_tables(parts) if len(parts) > 1 else parts[0]
    replace = set(batch.replace)
    issues_new = 0
    groups = [[n for r in batch.pending for n in r.loaded]]
    while groups:
        group = groups.pop()
        rows = {t: _rows_of(tbl, group) for t, tbl in tables.items()}
        try:
            with _transaction(con):
                if replace.intersection(group):
                    _delete_runs(con, [n for n in group if n in replace])
                for t, tbl in rows.items():
                    _insert(con, t, tbl)
        except duckdb.Error as exc:
            if isinstance(exc, _NOT_ISOLABLE):
                raise
            if len(group) > 1:
                half = len(group) // 2
                groups += [group[half:], group[:half]]  # the first half next
                continue
            issues_new += _write_stand_in(con, rows, group[0], group[0] in replace, exc)
            continue
        issues_new += rows["ingest_issues"].num_rows if "ingest_issues" in rows else 0
    with _transaction(con, "batch"):
        _write_bookkeeping(con, batch)
    return issues_new


def _rows_of(tbl: pa.Table, names: list[str]) -> pa.Table:
    pa = arrow()
    import pyarrow.compute as pc

    return tbl.filter(pc.is_in(tbl["invocation_id"], value_set=pa.array(names, pa.string())))


def _write_stand_in(con, rows: dict[str, pa.Table], name: str, replace: bool, exc: duckdb.Error) -> int:
    """Keep the run ``name`` whose rows (``rows``) the warehouse refused as a stand-in, with its
    run_files rows (so an unchanged run is not tried again) and an ``unstorable`` issue."""
    run = rows["runs"].to_pylist()[0]
    file_name, where, nbytes = _largest_value(rows)
    cause = " ".join(str(exc).split()).partition(" Possible solutions")[0]  # DuckDB's advice is not for this
    message = (f"the warehouse could not store this run's rows ({type(exc).__name__}: {cause[:200]}); "
               f"its largest value is {where} from {file_name}, {nbytes:,} bytes")
    prefix = run["run_path"] + "/" if run["run_path"] else ""
    out = stand_in_run(name, run["run_path"], run["ingest_id"], run["files_fingerprint"], run["content_fingerprint"],
                       prefix + file_name, K.UNSTORABLE, message)
    with _transaction(con):
        if replace:
            _delete_runs(con, [name])
        for t in ("runs", "ingest_issues"):
            _insert(con, t, out.arrow(t))
        if "run_files" in rows:
            _insert(con, "run_files", rows["run_files"])
    return len(out.rows["ingest_issues"])


# the file a value of a run table comes from (for the unstorable issue); envelope.json otherwise
_VALUE_FILES = {("spans", None): SPANS_FILE, ("runs", "request_json"): REQUEST,
                ("runs", "recorded_grounding"): GROUNDING, ("runs", "recorded_sources"): SOURCES}


def _largest_value(rows: dict[str, pa.Table]) -> tuple[str, str, int]:
    """(file, ``table.column[ line n]``, bytes) of the longest text value among a run's rows."""
    pa = arrow()
    import pyarrow.compute as pc

    best = ("envelope.json", "no value", 0)
    for t, tbl in rows.items():
        if t in ("run_files", "ingest_issues"):
            continue
        for col in tbl.column_names:
            arr = tbl[col]
            if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)) or not len(arr):
                continue
            lengths = pc.binary_length(arr)
            top = pc.max(lengths).as_py()
            if top is None or top <= best[2]:
                continue
            where = f"{t}.{col}"
            if t == "spans":
                line = tbl["line_no"][pc.index(lengths, top).as_py()].as_py()
                where += f" (line {line})"
            best = (_VALUE_FILES.get((t, None), _VALUE_FILES.get((t, col), ENVELOPE)), where, top)
    return best


# runs whose folder is gone (or no longer loadable) are kept, marked missing; returns the runs flipped
_MISSING_SQL = (
    # only the rows that change are touched (an UPDATE ... FROM a join of every run held them all),
    # and only they are read whole: DuckDB updates runs (which has an index) by reading every
    # column of the rows it scans, so the runs to flip are chosen in a subquery reading two
    # columns (a condition on the updated scan itself read every envelope: 0.25-0.6 s of CPU at
    # 100,000 runs in every full scan's finish, flipping none)
    "UPDATE runs SET missing = true WHERE invocation_id IN (SELECT r.invocation_id FROM runs r "
    "WHERE r.missing IS DISTINCT FROM true AND NOT EXISTS (SELECT 1 FROM _gw_seen s WHERE s.invocation_id = r.invocation_id)) "
    "RETURNING invocation_id",
    "UPDATE runs SET missing = false WHERE invocation_id IN (SELECT r.invocation_id FROM runs r "
    "WHERE r.missing IS DISTINCT FROM false AND EXISTS (SELECT 1 FROM _gw_seen s WHERE s.invocation_id = r.invocation_id)) "
    "RETURNING invocation_id",
)
# the same for a quick scan: the runs it looked at and those no longer listed (_gw_looked) only
_QUICK_MISSING_SQL = ("""
UPDATE runs SET missing = NOT missing WHERE invocation_id IN (
    SELECT l.invocation_id FROM (SELECT DISTINCT invocation_id FROM _gw_looked) l JOIN runs r USING (invocation_id)
    WHERE r.missing IS DISTINCT FROM (l.invocation_id NOT IN (SELECT invocation_id FROM _gw_seen)))
RETURNING invocation_id
""",)
_KEPT_DUPLICATES_SQL = "SELECT invocation_id, path, message FROM ingest_issues WHERE kind = $kind AND invocation_id IS NOT NULL"


class _Loader:
    def __init__(self, con: duckdb.DuckDBPyConnection, root: Path, progress, workers, rehash, batch_runs, txn_runs=TXN_RUNS):
        self.con = cursor(con)      # everything written (the writer thread, then the main thread)
        self.writer: _Writer | None = None
        self.root = str(root)
        self.root_real = os.path.realpath(root)
        self.progress = progress
        self.workers = workers
        self.rehash = rehash
        self.batch_runs = batch_runs
        self.txn_runs = txn_runs
        self.pending: list[ChunkResult] = []
        self.pending_runs = 0
        self.pending_rows = 0
        self.pending_bytes = 0
        self.existing: set[str] = set()
        self.rejected_issues: list[tuple] = []
        self.archive_issues = Issues()
        self.index_rows: list[pa.Table] = []
        self.index_issues: list[tuple] = []
        self.done = 0
        self.total: int | None = None  # run folders in the archive, once counted

    # -- bookkeeping rows ---------------------------------------------------------------

    def start(self) -> int:
        con = self.con
        con.execute("BEGIN")
        ingest_id = con.execute("SELECT coalesce(max(ingest_id), 0) + 1 FROM ingests").fetchall()[0][0]
        con.execute("INSERT INTO ingests (ingest_id, runs_dir, started_at, tool_version) VALUES (?, ?, ?, ?)",
                    [ingest_id, self.root_real, _now(), tool_version])
        con.execute("COMMIT")
        con.execute("CREATE OR REPLACE TEMP TABLE _gw_seen (invocation_id VARCHAR)")
        self.ingest_id = ingest_id
        self.writer = _Writer(con, self.txn_runs)
        return ingest_id

    def close_writer(self, result: IngestResult) -> None:
        """Wait for every batch to be written (re-raising a writer error)."""
        if self.writer is not None:
            writer = self.writer
            try:
                writer.close()
            except BaseException:
                writer.stop()   # (an interrupt while waiting: the thread must not outlive the ingest)
                raise
            finally:
                self.writer = None
                result.issues_new += writer.issues_new
                result.runs_loaded += writer.recount["loaded"]
                result.runs_unchanged += writer.recount["unchanged"]
                result.runs_rejected += writer.recount["rejected"]
                for old, new in writer.rejected_swap:
                    for row in old:
                        self.rejected_issues.remove(row)
                    self.rejected_issues.extend(new)

    # -- run folders --------------------------------------------------------------------

    def take(self, res, result: IngestResult) -> None:
        if isinstance(res, tuple):  # process_index_lines: (rows, issues)
            rows, problems = res
            self.index_issues.extend(problems)
            if rows:
                self.writer.put(to_arrow("invocation_index", rows, INDEX_FIELDS))
            return
        result.runs_loaded += len(res.loaded)
        result.runs_unchanged += len(res.unchanged)
        result.runs_rejected += len(res.rejected)
        self.rejected_issues.extend(res.rejected_issues)
        self.existing.difference_update(res.unchanged)  # only reloaded runs need their old rows deleted
        self.existing.difference_update(res.rejected)
        self.pending.append(res)
        n = len(res.loaded) + len(res.unchanged) + len(res.rejected)
        self.pending_runs += n
        self.pending_rows += res.rows
        self.pending_bytes += res.nbytes
        self.done += n
        # Near the end, smaller batches: the writer then keeps pace with the parsers instead of
        # writing a whole batch after the last run is parsed.
        closing = self.total is not None and self.total - self.done < self.batch_runs
        if (self.pending_runs >= (self.batch_runs // 4 if closing else self.batch_runs)
                or self.pending_rows >= BATCH_ROWS or self.pending_bytes >= BATCH_BYTES):
            self.flush(result)
        if self.progress is not None:
            self.progress(self.done, None)

    def flush(self, result: IngestResult) -> None:
        """Hand the pending results to the writer thread as one batch (one transaction)."""
        if not self.pending:
            return
        pending, self.pending = self.pending, []
        self.pending_runs = self.pending_rows = self.pending_bytes = 0
        loaded = [n for r in pending for n in r.loaded]
        batch = _Batch(pending, replace=[n for n in loaded if n in self.existing],
                       seen=[n for r in pending for n in (*r.loaded, *r.unchanged)],
                       touched=[t for r in pending for t in r.touched])
        self.existing.difference_update(loaded)
        self.writer.put(batch)

    # -- archive level -------------------------------------------------------------------

    def archive_file_changed(self, rel: str, path: str) -> tuple[bool, tuple | None]:
        try:
            st = os.stat(path)
        except OSError:
            return True, None
        row = self.con.execute("SELECT size, mtime_ns, sha256 FROM archive_files WHERE path = ?", [rel]).fetchall()
        row = row[0] if row else None
        if row is not None and row[0] == st.st_size and row[1] == st.st_mtime_ns and not self.rehash:
            return False, row
        return True, (st.st_size, st.st_mtime_ns)

    def finish(self, result: IngestResult, schema_state) -> None:
        con = self.con
        archive_rows = issue_rows(self.archive_issues, self.ingest_id, None)
        archive_rows += [issue_row(self.ingest_id, None, p, line, kind, msg, K.NONE) for p, line, kind, msg in self.index_issues]
        archive_rows += self.rejected_issues
        with _transaction(con, "finish"):
            # runs whose folder is gone (or no longer loadable) are kept, marked missing (a quick
            # scan: among the runs it looked at and those no longer listed, _quick_plan)
            missing_sql = getattr(self, "missing_sql", _MISSING_SQL)
            self.flipped, n_flipped = [], 0
            for sql in missing_sql or ():
                cur = con.execute(sql)
                while rows := cur.fetchmany(LOOKUP):  # streamed: at most CHANGED_NAMES names kept
                    n_flipped += len(rows)
                    if self.flipped is not None:
                        self.flipped.extend(i for (i,) in rows)
                        if len(self.flipped) > CHANGED_NAMES:
                            self.flipped = None
            # duplicate invocation ids among the runs on disk (computed over the whole warehouse;
            # a quick scan that changed no run keeps the last ones: the same runs, the same ids)
            same = getattr(self, "quick", False) and not n_flipped and not result.runs_loaded
            archive_rows += [issue_row(self.ingest_id, inv, path, None, K.DUPLICATE_ID, msg, K.NONE) for inv, path, msg in (
                con.execute(_KEPT_DUPLICATES_SQL, {"kind": K.DUPLICATE_ID}).fetchall() if same else claims(con, K.DUPLICATE_ID))]
            self._replace_derived_issues(archive_rows, result)
            if self.index_missing:
                con.execute("DELETE FROM invocation_index")
                con.execute("DELETE FROM archive_files WHERE path = ?", [INDEX_FILE])
            if schema_state is not None:
                rows, files = schema_state
                con.execute("DELETE FROM class_schemas")
                _insert_rows(con, "class_schemas", rows, SCHEMA_FIELDS)
                con.execute("DELETE FROM archive_files WHERE path LIKE 'schemas/%'")
                _insert_rows(con, "archive_files", files, ARCHIVE_FILE_FIELDS)
            result.runs_missing = con.execute("SELECT count(*) FROM runs WHERE missing").fetchall()[0][0]
            result.issues_by_kind = current_issue_counts(con)
            result.elapsed = time.monotonic() - self.t0
            # runs_changed: what a check pass recorded before this ingest depends on (checks.current)
            con.execute("UPDATE ingests SET finished_at = ?, folders_seen = ?, runs_loaded = ?, runs_unchanged = ?, "
                        "runs_rejected = ?, runs_missing = ?, issues = ?, runs_changed = ? WHERE ingest_id = ?",
                        [_now(), result.folders_seen, result.runs_loaded, result.runs_unchanged,
                         result.runs_rejected, result.runs_missing, result.issues_new,
                         result.runs_loaded + n_flipped, self.ingest_id])
        con.execute("DROP TABLE IF EXISTS _gw_seen")

    def _replace_derived_issues(self, rows: list[tuple], result: IngestResult) -> None:
        """Issues of the archive root, of rejected folders and duplicate ids: replace by diff, so
        an unchanged archive changes no row."""
        con = self.con
        key = "coalesce(i.invocation_id, '\x00') = coalesce(n.invocation_id, '\x00') AND i.path = n.path " \
              "AND i.line IS NOT DISTINCT FROM n.line AND i.kind = n.kind AND i.message = n.message"
        derived = f"(i.invocation_id IS NULL OR i.effect = '{K.REJECTED}' OR i.kind = '{K.DUPLICATE_ID}')"

        def apply():
            con.execute(f"DELETE FROM ingest_issues i WHERE {derived} AND NOT EXISTS "
                        f"(SELECT 1 FROM _gw_new n WHERE {key})")
            added = con.execute(f"SELECT count(*) FROM _gw_new n WHERE NOT EXISTS "
                                f"(SELECT 1 FROM ingest_issues i WHERE {key})").fetchall()[0][0]
            con.execute(f"INSERT INTO ingest_issues ({column_list('ingest_issues')}) "
                        f"SELECT {column_list('ingest_issues')} FROM _gw_new n WHERE NOT EXISTS "
                        f"(SELECT 1 FROM ingest_issues i WHERE {key})")
            result.issues_new += added
        con.execute(f"CREATE OR REPLACE TEMP TABLE _gw_new AS SELECT {column_list('ingest_issues')} FROM ingest_issues LIMIT 0")
        try:
            _insert_rows(con, "ingest_issues", rows, ISSUE_FIELDS, into="_gw_new")
            apply()
        finally:
            con.execute("DROP TABLE IF EXISTS _gw_new")


def _with_table(con, name: str, tbl: pa.Table, fn):
    """``fn()`` with ``tbl`` registered as ``name``. On an error the registration is dropped
    quietly: in an aborted transaction unregister itself fails, and that error would hide the
    one to report (a later register of the name replaces it anyway)."""
    con.register(name, tbl)
    try:
        result = fn()
    except BaseException:
        try:
            con.unregister(name)
        except duckdb.Error:
            pass
        raise
    con.unregister(name)
    return result


def _insert(con, table: str, tbl: pa.Table, columns: str | None = None) -> None:
    """``tbl``'s rows into ``table``. Scanned through a record batch reader: DuckDB holds a
    registered table (and so the memory under it, a shared-memory slot) until the transaction
    ends, a reader's batches only while it inserts them."""
    pa = arrow()

    if tbl.num_rows == 0:
        return
    cols = columns or column_list(table)
    rows = pa.RecordBatchReader.from_batches(tbl.schema, tbl.to_batches())
    _with_table(con, "_gw_rows", rows, lambda: con.execute(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM _gw_rows"))


def _insert_rows(con, table: str, rows: list[tuple], fields: tuple[str, ...], into: str | None = None) -> None:
    """``rows`` (tuples of ``fields``, the columns of ``table``) into ``table`` (or ``into``, a
    table of the same columns): a few (``ARROW_ROWS``) bound as parameters, so that an ingest
    that finds nothing new needs no pyarrow; more as Arrow."""
    if len(rows) > ARROW_ROWS:
        _insert(con, into or table, to_arrow(table, rows, fields), column_list(table))
    elif rows:
        check_fields(table, fields)
        insert_values(con, into or table, fields, rows)


@contextmanager
def _transaction(con, crash_point: str | None = None):
    """BEGIN ... COMMIT, rolled back on any error. ``crash_point`` names the fault-injection
    points just before and after the commit (the kill -9 tests)."""
    con.execute("BEGIN")
    try:
        yield
        if crash_point is not None:
            _crash_point(f"{crash_point}-before-commit")
        con.execute("COMMIT")
    except BaseException:
        _rollback(con)
        raise
    if crash_point is not None:
        _crash_point(f"{crash_point}-after-commit")


def _rollback(con) -> None:
    try:
        con.execute("ROLLBACK")
    except duckdb.Error:
        pass


def current_issue_counts(con) -> dict[str, int]:
    """Issue counts by kind for the archive as it stands (runs on disk, the root, rejected folders):
    every issue but those of a run marked missing. (The missing runs are few: a join of the issues
    with every run cost each ingest 7-14 ms at 100,000 runs, this 1-2 ms.)"""
    rows = con.execute("""
        SELECT kind, count(*) FROM ingest_issues
        WHERE invocation_id IS NULL OR effect = 'rejected'
           OR invocation_id NOT IN (SELECT invocation_id FROM runs WHERE missing)
        GROUP BY kind ORDER BY kind""").fetchall()
    return {k: n for k, n in rows}


def _chunks(it, size):
    buf = []
    for x in it:
        buf.append(x)
        if len(buf) >= size:
            yield buf
            buf = []
    if buf:
        yield buf


def ingest_archive(con: duckdb.DuckDBPyConnection, runs_dir, *, progress=None, workers: int | None = None,
                   rehash: bool = False, batch_runs: int = BATCH_RUNS, parsers: _Pool | None = None,
                   full_scan: bool = True, txn_runs: int = TXN_RUNS) -> IngestResult:
    """Ingest every run folder of ``runs_dir`` (the store's ``runs/`` folder) into the warehouse.

    ``full_scan`` (the default here; `groundwork ingest` and the nightly pass False unless asked)
    lists every run folder and compares its files' size and mtime (then content hash) with the
    warehouse's. ``full_scan=False`` is the quick scan (``_quick_plan``): only what is new since the
    last finished ingest is looked at, so a run folder edited in place is not noticed; it falls
    back to a full scan when the warehouse holds no finished scan of ``runs_dir``.

    ``progress(done, total)`` is called as runs are processed (``total`` is given once, first).
    ``workers`` = parser processes (0 = parse in this process; default min(4, CPUs), or the
    GROUNDWORK_INGEST_WORKERS environment variable). ``rehash`` compares content hashes even
    when size and mtime are unchanged. ``parsers`` (from ``parsers()``) replaces ``workers``.
    """
    root = check_runs_dir(runs_dir)
    t0 = time.monotonic()
    with _ingest_settings(con):
        return _ingest(con, root, t0, progress, workers, rehash, batch_runs, parsers, full_scan, txn_runs)


MEMORY_LIMIT = "128MB"  # DuckDB's buffer during an ingest: it caches what it writes, so without a
                        # bound the process would grow with the archive (default: 80% of RAM)
WAL_CHECKPOINT = "64MB"  # DuckDB checkpoints when its WAL grows past this (default 16MB); every
                         # checkpoint recompresses the tables' open row groups, so at 16MB a 20k-run
                         # ingest spent ~0.35 s of CPU recompressing. Bounded, so memory stays flat.


def ingest_memory() -> str:
    """DuckDB's memory during an ingest: $GROUNDWORK_INGEST_MEMORY, else MEMORY_LIMIT. A job
    calls it before its work too: a bad value is one line before anything is created."""
    return memory_setting("GROUNDWORK_INGEST_MEMORY", MEMORY_LIMIT)


def _lower(previous: str, value: str) -> bool:
    prev_b, new_b = size_bytes(previous), size_bytes(value)
    return prev_b is not None and new_b is not None and new_b < prev_b


def _higher(previous: str, value: str) -> bool:
    prev_b, new_b = size_bytes(previous), size_bytes(value)
    return prev_b is not None and new_b is not None and new_b > prev_b


@contextmanager
def _ingest_settings(con):
    """DuckDB settings for the ingest, restored afterwards:

    * memory_limit lowered (never raised) to MEMORY_LIMIT;
    * wal_autocheckpoint raised (never lowered) to WAL_CHECKPOINT;
    * one DuckDB thread: the parser processes keep every core busy, DuckDB's own parallelism
      only added ~0.3 s of CPU at 20k runs, and the time of the ingest is its CPU time;
    * zstd for what the ingest writes (unless the user forced a method): on the benchmark
      archive the default string compression cost ~0.4 s more CPU at 20k runs for a 20 % larger
      file, and lint reads either as fast.
    """
    changed = []
    for name, value, applies in (("wal_autocheckpoint", WAL_CHECKPOINT, _higher),
                                 ("threads", "1", _lower),
                                 ("force_compression", "zstd", lambda previous, _: previous == "auto")):
        try:
            previous = con.execute("SELECT CAST(current_setting($name) AS VARCHAR)", {"name": name}).fetchall()[0][0]
            if applies(previous, value):
                con.execute(f"SET {name} = '{value}'")  # our names and values
                changed.append((name, previous))
        except duckdb.Error:
            continue  # a setting this DuckDB does not have: go without
    try:
        with memory_at_most(con, ingest_memory()):
            yield
    finally:
        for name, previous in changed:
            try:
                con.execute(f"SET {name} = '{previous}'")
            except duckdb.Error:
                pass


def _chunk_size(total: int, workers: int) -> int:
    """Runs per worker task: large enough that per-task costs (Arrow tables, pickling) vanish,
    small enough that every worker gets many tasks."""
    return max(8, min(CHUNK, total // (max(workers, 1) * 16)))


def _ingest(con, root: Path, t0: float, progress, workers, rehash, batch_runs, parsers, full_scan=True,
            txn_runs=TXN_RUNS) -> IngestResult:
    if parsers is not None:
        workers = parsers.workers
    loader = _Loader(con, root, progress, _default_workers() if workers is None else workers, rehash, batch_runs, txn_runs)
    loader.t0 = t0
    loader.full_scan = full_scan or rehash
    ingest_id = loader.start()
    result = IngestResult(ingest_id, loader.root_real)
    listing = cursor(con)
    slots = None
    try:
        plan = None if loader.full_scan else _quick_plan(loader, listing, result)
        if plan is None:
            dir_mtime = _dir_watermark(loader.root)
            total, index_present, schemas_present = _list_root(loader, listing, result)
            index = _IndexLoad.begin(loader, index_present)
        else:
            total, schemas_present, dir_mtime, index = plan
            result.scan = "quick"
        loader.con.execute("UPDATE ingests SET scan = ?, dir_mtime_ns = ? WHERE ingest_id = ?",
                           [result.scan, dir_mtime, ingest_id])  # trusted by the next ingest once this one finishes
        loader.total = total
        if progress is not None:
            progress(0, total)
        tasks = _tasks(loader, listing, index, result, _chunk_size(total, loader.workers))
        inline = total < (QUICK_INLINE if result.scan == "quick" else SMALL)
        with _Borrowed(parsers) if parsers is not None else _Pool(0 if inline else loader.workers) as pool:
            slots = _open_slots(pool, loader, result)
            for fn, args in tasks:
                for res in pool.submit(fn, *args):
                    loader.take(res, result)
            for res in pool.drain():
                loader.take(res, result)
            loader.flush(result)
            loader.close_writer(result)
        if slots is not None:
            # every result is written: the slots' shared memory goes now, not after the index
            # commit, finish and checkpoint (it was up to ~100 MB of this process's RSS there)
            slots.close()
            slots = None
        if index is not None:
            index.commit()
            result.issues_new += loader.index_issues_new
        schema_state = _load_schemas(loader, schemas_present)
        loader.finish(result, schema_state)
        result.changed_runs = _changed_names(loader.con, ingest_id, loader.flipped)
        if result.scan != "quick" or result.runs_loaded >= CHECKPOINT_RUNS:
            _checkpoint(loader.con)
    finally:
        if loader.writer is not None:  # an error above: stop the writer before leaving
            try:
                loader.close_writer(result)
            except BaseException:  # noqa: BLE001 - the first error is the one to report
                pass
        if slots is not None:
            for r in loader.pending:  # an error above: results never handed to the writer
                slots.release(r)
            slots.close()
        loader.con.close()
        listing.close()
    if progress is not None:
        progress(loader.done, total)
    return result


CHANGED_NAMES = 10_000  # IngestResult.changed_runs: names listed at most


def _changed_names(con, ingest_id: int, flipped: list[str] | None) -> list[str] | None:
    """IngestResult.changed_runs: the runs this ingest loaded and those ``flipped`` (missing or
    back), sorted, or None when they are more than CHANGED_NAMES (then never fetched whole)."""
    if flipped is None:
        return None
    names = [i for (i,) in con.execute(
        "SELECT invocation_id FROM runs WHERE ingest_id = $id UNION SELECT unnest($flipped::VARCHAR[]) "
        "ORDER BY 1 LIMIT $n", {"id": ingest_id, "flipped": flipped, "n": CHANGED_NAMES + 1}).fetchall()]
    return names if len(names) <= CHANGED_NAMES else None


CHECKPOINT_RUNS = 2000  # a quick scan loading fewer runs leaves its rows to the connection's next checkpoint


def _checkpoint(con) -> None:
    """Checkpoint now, while DuckDB is still held to the ingest's memory limit. Left to the
    connection's close, the checkpoint runs under the default limit (a share of the machine's
    memory): the rows of large batches go straight to the file (optimistic writes, so the WAL
    stays small) and the close's checkpoint still folds them in, which took a 100,000-run
    warehouse from 218 to 660 MB after 150,000 span rows were added; under 128 MB it peaked at
    231 MB and left the close nothing to do. An unchanged warehouse checkpoints in no time.

    A quick scan that loaded fewer than CHECKPOINT_RUNS runs does not call it: its rows are a
    few thousand per table, far from DuckDB's row groups, so nothing goes to the file ahead of the
    checkpoint, and the connection's close checkpoints them; in a nightly, with its passes' rows,
    once instead of twice (0.15-0.3 s of a nightly after 1,000 new runs at 100,000; they stay in
    memory until then: its peak RSS went from 448 to 469 MB)."""
    try:
        if con.execute("SELECT path FROM duckdb_databases() WHERE database_name = current_database()").fetchone()[0]:
            con.execute("CHECKPOINT")
    except duckdb.Error:
        pass  # a checkpoint refused: the close checkpoints, as before


def _slot_count(pool: _Pool, loader: _Loader) -> int:
    """Shared-memory slots for an ingest: the tasks in flight, plus the results of one and a half
    batches (one is being committed while the next one fills), at most 48 more. The main process
    waits for the writer before it holds more. (At 100k runs: 44 slots, ~105 MB, one wait; with
    34 the parsers waited 18 times for the writer, with 54 the peak RSS grew by 50 MB.)"""
    per_batch = -(-loader.batch_runs // _chunk_size(loader.total or 0, pool.workers))
    return pool.ahead() + 2 + min(48, per_batch + per_batch // 2)


def _open_slots(pool: _Pool, loader: _Loader, result: IngestResult) -> Slots | None:
    """Shared memory for the tasks' tables (ingest/shm.py), when there are parser processes and
    it can be set up (else None: the executor's pipe, as with GROUNDWORK_IPC=pipe)."""
    if pool.ex is None:
        return None
    slots = Slots.create(_slot_count(pool, loader))
    if slots is None:
        return None

    def make_room() -> bool:
        """Every slot is taken: if the writer has none to give back, hand it the pending results.
        False when nothing will give one back (the task then goes through the pipe)."""
        if not loader.writer.idle:
            return True
        if any(r.slot is not None for r in loader.pending):
            loader.flush(result)
            return True
        return False
    pool.slots, pool.make_room = slots, make_room
    loader.writer.slots = slots
    return slots


def _list_root(loader: _Loader, listing, result: IngestResult) -> tuple[int, bool, bool]:
    """One pass over the archive root: run folders are counted (progress shows a total) and their
    names go into the TEMP table ``_gw_dir`` of ``listing``, which one join with ``runs`` turns
    into the stream the tasks are cut from (one look-up query per chunk, as before, scanned
    ``runs`` each time: 100 scans of 100,000 rows for a re-ingest of 100,000 unchanged runs).
    Other entries are recorded as issues. Returns (folders, index present, schemas present)."""
    pa = arrow()

    listing.execute("CREATE OR REPLACE TEMP TABLE _gw_dir (seq BIGINT, name VARCHAR, link BOOLEAN)")
    total = 0
    index_present = schemas_present = False
    names: list[str] = []  # run folders listed, not yet in _gw_dir
    links: list[int] = []  # positions in ``names`` of the symlinked ones (rare)

    def spill() -> None:
        if names:
            link = [False] * len(names)
            for i in links:
                link[i] = True
            batch = pa.table({"seq": pa.array(range(total - len(names), total), pa.int64()),
                              "name": pa.array(names, pa.string()), "link": pa.array(link, pa.bool_())})
            _with_table(listing, "_gw_dir_batch", batch,
                        lambda: listing.execute("INSERT INTO _gw_dir SELECT * FROM _gw_dir_batch"))
            names.clear()
            links.clear()

    for kind, name in classify_root(loader.root):
        if kind == "run" or kind == "run-link":
            total += 1
            if kind == "run-link":
                links.append(len(names))
            names.append(name)
            if len(names) >= DIR_BATCH:
                spill()
        elif kind == "bad-name":
            spill()
            total += 1
            result.folders_seen += 1
            result.runs_rejected += 1
            loader.archive_issues.reject(display_name(name), K.BAD_NAME, "folder name is not valid UTF-8; not loaded")
        elif kind == "index":
            index_present = True
        elif kind == "schemas":
            schemas_present = True
        else:
            loader.archive_issues.add(display_name(name), None, K.UNEXPECTED_ENTRY,
                                      "not a run folder, invocations.jsonl or schemas/; ignored")
    spill()
    return total, index_present, schemas_present


SETTLE_NS = 10 * 10**9   # a run whose newest file is at most this older than an ingest's start is listed again
                         # by the next quick scan (its files may have been listed while being written)
RACY_NS = 2 * 10**9      # runs/ modified this close to its listing: its mtime is no watermark (the same
                         # timestamp could hide an entry added just after the listing)


def _dir_watermark(root: str) -> int | None:
    """The mtime of runs/ to record before listing it, or None when too recent to be trusted."""
    try:
        mtime = os.stat(root).st_mtime_ns
    except OSError:
        return None
    return mtime if time.time_ns() - mtime > RACY_NS else None


# runs to list again at a quick scan (besides new folder names): written shortly before the last
# scan (maybe still being written: the workbench writes a run's files one after the other, its
# index line in between, docs/rules.md#run-folder), lacking a file (incomplete, maybe an empty
# folder listed just after it was made), loaded by the last scan or since without sources.txt
# (the file the workbench writes last): a copy of the archive may bring it later, and once is
# enough (a workbench before the source check never writes it, and looking into every run without
# one at every quick scan would cost the archive; the full scan looks into them all), holding a
# sources.txt not yet complete (complete: ending with its newline, as the watch has it,
# docs/rules.md#complete-run-folders; a file being written or copied: looked into until it is,
# however many scans that takes), or parsed by another parser version.
_RECHECK_SQL = """
SELECT DISTINCT invocation_id FROM run_files WHERE mtime_ns >= $since
UNION SELECT invocation_id FROM ingest_issues WHERE kind = $missing_file AND invocation_id IS NOT NULL
UNION SELECT invocation_id FROM runs WHERE parser_version IS DISTINCT FROM $parser
UNION SELECT invocation_id FROM runs WHERE NOT missing AND ingest_id >= $last_scan AND recorded_sources IS NULL
UNION SELECT invocation_id FROM runs WHERE NOT missing AND NOT suffix(recorded_sources, $newline)
"""


def _quick_plan(loader: _Loader, listing, result: IngestResult):
    """Fill ``_gw_dir`` (on ``listing``) with only the run folders a quick scan must look at, and
    ``_gw_looked`` (on the loader's cursor) with those and the runs whose folder is gone: finish
    decides the missing flag of these only (``_QUICK_MISSING_SQL``). Returns (folders to look
    at, schemas present, runs/ watermark, the index's ``_IndexLoad``), or None when there is no
    watermark (the full scan then).

    The watermark is the last finished quick or full scan of this archive: runs/'s mtime then
    (``ingests.dir_mtime_ns``) and its start. When runs/ has another mtime now, a folder was
    added, removed or renamed: the root is listed (names only, no folder opened) and the names
    not among the warehouse's present runs are looked at, the present runs not listed are gone
    (marked missing by ``finish``). When it has the same mtime, nothing is listed, and the
    root's issues and those of rejected folders are kept. Either way, the runs ``_RECHECK_SQL``
    names are looked at too, and those named by the lines appended to the index since (the
    workbench appends a run's line after its envelope.json and request.json, before its other
    files: a folder listed before its line may have been incomplete); every other run is kept
    unread (an in-place edit is the full scan's to find)."""
    con = loader.con
    prev = con.execute(
        "SELECT dir_mtime_ns, epoch_ns(started_at), ingest_id FROM ingests WHERE runs_dir = ? AND finished_at IS NOT NULL "
        "AND scan IN ('quick', 'full') ORDER BY ingest_id DESC LIMIT 1", [loader.root_real]).fetchall()
    if not prev:
        return None
    prev_mtime, prev_start, prev_id = prev[0]
    dir_mtime = _dir_watermark(loader.root)
    params = {"since": prev_start - SETTLE_NS, "parser": PARSER_VERSION, "missing_file": K.MISSING_FILE,
              "last_scan": prev_id, "newline": "\n"}
    relist = dir_mtime is None or prev_mtime is None or dir_mtime != prev_mtime
    if relist:
        _, index_present, schemas_present = _list_root(loader, listing, result)
    else:
        index_present = _is_file_entry(os.path.join(loader.root, INDEX_FILE))
        schemas_present = os.path.isdir(os.path.join(loader.root, SCHEMAS_DIR))
    index = _IndexLoad.begin(loader, index_present)
    listing.execute("CREATE OR REPLACE TEMP TABLE _gw_named (invocation_id VARCHAR)")
    named = index.appended_ids() if index is not None else []
    if named:
        pa = arrow()

        _with_table(listing, "_gw_named_batch", pa.table({"invocation_id": pa.array(named, pa.string())}),
                    lambda: listing.execute("INSERT INTO _gw_named SELECT invocation_id FROM _gw_named_batch"))
    recheck = f"{_RECHECK_SQL} UNION SELECT invocation_id FROM _gw_named"
    if relist:
        listing.execute(f"""
            CREATE OR REPLACE TEMP TABLE _gw_cand AS SELECT d.seq, d.name, d.link FROM _gw_dir d
            LEFT JOIN runs r ON r.invocation_id = d.name
            WHERE r.invocation_id IS NULL OR r.missing OR d.name IN ({recheck})""", params)
        full()  # the relational API (listing.sql)
        gone = listing.sql("SELECT invocation_id FROM runs WHERE NOT missing "
                           "AND invocation_id NOT IN (SELECT name FROM _gw_dir)").to_arrow_table()
        listing.execute("CREATE OR REPLACE TEMP TABLE _gw_dir AS "
                        "SELECT row_number() OVER (ORDER BY seq) AS seq, name, link FROM _gw_cand")
        listing.execute("DROP TABLE _gw_cand")
    else:
        # the named runs the warehouse holds as present (no folder was added or removed since)
        listing.execute(f"CREATE OR REPLACE TEMP TABLE _gw_dir AS SELECT row_number() OVER (ORDER BY invocation_id) AS seq, "
                        f"invocation_id AS name, true AS link FROM ({recheck}) "
                        f"WHERE invocation_id IN (SELECT invocation_id FROM runs WHERE NOT missing)", params)
        gone = None
        _keep_root_issues(loader, result)
    # the runs whose missing flag this ingest decides: those looked at and those gone (finish)
    total = listing.execute("SELECT count(*) FROM _gw_dir").fetchall()[0][0]
    n_gone = gone.num_rows if gone is not None else 0
    con.execute("CREATE OR REPLACE TEMP TABLE _gw_looked (invocation_id VARCHAR)")
    if total or n_gone:   # (else no Arrow table: an ingest that finds nothing new needs no pyarrow)
        pa = arrow()

        looked = pa.concat_tables([listing.sql("SELECT name AS invocation_id FROM _gw_dir").to_arrow_table()]
                                  + ([gone] if gone is not None else []))
        _with_table(con, "_gw_looked_batch", looked, lambda: con.execute("INSERT INTO _gw_looked SELECT invocation_id FROM _gw_looked_batch"))
    loader.quick, loader.missing_sql = True, _QUICK_MISSING_SQL if total or n_gone else None
    kept = listing.execute("SELECT (SELECT count(*) FROM runs WHERE NOT missing) - "
                           "(SELECT count(*) FROM _gw_dir d JOIN runs r ON r.invocation_id = d.name WHERE NOT r.missing)"
                           ).fetchall()[0][0] - n_gone
    result.folders_seen += kept
    result.runs_unchanged += kept
    listing.execute("DROP TABLE _gw_named")
    return total, schemas_present, dir_mtime, index


def _is_file_entry(path: str) -> bool:
    """As classify_root tells the index: an entry that is not a folder."""
    return os.path.lexists(path) and not os.path.isdir(path)


def _keep_root_issues(loader: _Loader, result: IngestResult) -> None:
    """A quick scan that does not list the root keeps the issues its listing gave (unexpected
    entries, folders with undecodable names) and those of the run folders it rejected, as they
    stand (``finish`` rewrites the root's issues from what this ingest found)."""
    rows = loader.con.execute("""
        SELECT invocation_id, path, line, kind, message, effect FROM ingest_issues
        WHERE (invocation_id IS NULL AND kind IN ($unexpected, $bad_name) AND path <> $index AND path NOT LIKE 'schemas/%')
           OR (invocation_id IS NOT NULL AND effect = $rejected)
        ORDER BY invocation_id NULLS FIRST, path, line, kind, message""",
        {"unexpected": K.UNEXPECTED_ENTRY, "bad_name": K.BAD_NAME, "index": INDEX_FILE, "rejected": K.REJECTED}).fetchall()
    folders = {inv for inv, *_ in rows if inv is not None}
    bad_names = sum(1 for inv, _, _, kind, _, effect in rows if inv is None and effect == K.REJECTED)
    loader.rejected_issues.extend(issue_row(loader.ingest_id, inv, p, line, kind, msg, effect)
                                  for inv, p, line, kind, msg, effect in rows)
    result.folders_seen += len(folders) + bad_names
    result.runs_rejected += len(folders) + bad_names


def _tasks(loader: _Loader, listing, index: "_IndexLoad | None", result: IngestResult, chunk_size: int):
    """(function, arguments) of every worker task: the index's lines first (parsed alongside the
    run folders), then the run folders in listing order with what the warehouse holds of each."""
    if index is not None:
        for block in index.blocks():
            yield process_index_lines, (block,)
    stream = listing.execute(
        "SELECT d.name, d.link, r.invocation_id IS NOT NULL, r.files_fingerprint, r.content_fingerprint, "
        "r.parser_version FROM _gw_dir d LEFT JOIN runs r ON r.invocation_id = d.name ORDER BY d.seq")
    while rows := stream.fetchmany(LOOKUP):
        result.folders_seen += len(rows)
        loader.existing.update(row[0] for row in rows if row[2])  # their old rows go when they are reloaded
        items = [(name, stored[1:] if stored[0] else None) for name, _, *stored in rows]
        links = {name for name, link, *_ in rows if link}
        for chunk in _chunks(items, chunk_size):
            chunk_links = frozenset(n for n, _ in chunk if n in links) if links else frozenset()
            yield process_chunk, (loader.root, loader.root_real, loader.ingest_id, chunk, loader.rehash, chunk_links)


class _IndexLoad:
    """Replace invocation_index by runs/invocations.jsonl when the file changed.

    The lines are read here and parsed by the worker pool together with the run folders; their
    rows are staged in a TEMP table by the writer thread, and ``commit`` swaps them in with their
    fingerprint and issues in one transaction (a kill before it leaves the old index intact).

    The store appends a line per invocation, so the file usually differs from the loaded one only
    by new lines at its end. archive_files remembers where it was read up to (``size``, ending
    with a newline), how many lines that was, and a hash of the last TAIL bytes before it: when
    the file is longer and still holds those bytes there, only the new lines are parsed and
    added, and the rows and issues of the others stay (the result is the same as parsing the
    whole file again); the prefix is not read again. Otherwise (shorter, a different tail, or
    --rehash) the file is read whole.
    """

    TAIL = 4096  # bytes before the read-up-to offset that must be unchanged to append

    def __init__(self, loader: _Loader, path: str, stat):
        self.loader = loader
        self.path = path
        self.stat = stat
        self.offset = 0       # bytes already loaded (the unchanged prefix), when appending
        self.first_line = 1   # line number of the first line to parse
        self.end = 0          # bytes read up to, once read
        self.lines = 0        # newlines in the first ``end`` bytes
        self.tail = b""       # the last TAIL bytes before ``end``

    def _resume(self, size: int, lines: int | None, tail_sha256: str | None) -> None:
        """Start after the loaded prefix when the file only grew by whole lines (or was only
        touched: same bytes, nothing to parse); reads TAIL bytes, not the prefix."""
        if lines is None or tail_sha256 is None or not (0 < size <= self.stat.st_size):
            return
        start = max(0, size - self.TAIL)
        try:
            with open_regular_file(self.path) as fh:
                fh.seek(start)
                tail = fh.read(size - start)
        except OSError:
            return
        if len(tail) != size - start or not (tail.endswith(b"\n") or size == self.stat.st_size):
            return
        if hashlib.sha256(tail).hexdigest() != tail_sha256:
            return
        self.offset = self.end = size
        self.first_line, self.lines, self.tail = lines + 1, lines, tail

    @classmethod
    def begin(cls, loader: _Loader, present: bool) -> "_IndexLoad | None":
        """None when there is nothing to load (no index, a refused symlink, or unchanged)."""
        loader.index_missing = not present
        path = os.path.join(loader.root, INDEX_FILE)
        if not present:
            return None
        if os.path.islink(path) and not inside(loader.root_real, path):
            loader.archive_issues.add(INDEX_FILE, None, K.SYMLINK_OUTSIDE, "symlink leading outside the archive; not read")
            return None
        changed, _ = loader.archive_file_changed(INDEX_FILE, path)
        if not changed:
            loader.index_issues = cls._stored_issues(loader)
            return None
        loader.con.execute("CREATE OR REPLACE TEMP TABLE _gw_index_stage AS SELECT * FROM invocation_index LIMIT 0")
        try:
            fd, st = open_regular(path)  # a FIFO, device or socket: refused, never waited on
            os.close(fd)
        except NotRegularFile:
            loader.index_issues.append((INDEX_FILE, None, K.UNREADABLE, "not a regular file; not read"))
            st = None
        except OSError as exc:
            loader.index_issues.append((INDEX_FILE, None, K.UNREADABLE, f"cannot read: {exc.strerror or exc}"))
            st = None
        load = cls(loader, path, st)
        stored = loader.con.execute("SELECT size, lines, tail_sha256 FROM archive_files WHERE path = ?", [INDEX_FILE]).fetchall()
        if st is not None and stored and not loader.rehash:
            load._resume(*stored[0])
            if load.offset:
                loader.index_issues = cls._stored_issues(loader)  # of the lines already loaded
        return load

    @staticmethod
    def _stored_issues(loader: _Loader) -> list[tuple]:
        return [(p, line, kind, msg) for p, line, kind, msg in loader.con.execute(
            "SELECT path, line, kind, message FROM ingest_issues WHERE invocation_id IS NULL AND path = ?",
            [INDEX_FILE]).fetchall()]

    def blocks(self):
        """Blocks of (line_no, raw line) for the workers."""
        if self.stat is None:
            return
        issues = self.loader.index_issues
        try:
            with open_regular_file(self.path) as fh:
                fh.seek(self.offset)
                yield from index_blocks(_lines(fh, self), self.first_line, issues)
        except OSError as exc:
            issues.append((INDEX_FILE, None, K.UNREADABLE, f"cannot read: {exc.strerror or exc}"))
            self.stat = None

    def appended_ids(self) -> list[str]:
        """The invocation ids in the lines after the loaded prefix (none when the file is read
        whole): every ``"invocation_id":"..."`` member, a delegation's too (at worst a run is
        looked at once more)."""
        if not self.offset or self.stat is None:
            return []
        ids: set[str] = set()
        try:
            with open_regular_file(self.path) as fh:
                fh.seek(self.offset)
                for raw in _lines(fh):
                    if isinstance(raw, int):  # a line over MAX_LINE bytes: not loaded, no run named
                        continue
                    ids.update(m.decode("ascii") for m in _ID_MEMBER.findall(raw))
        except OSError:
            return []
        return sorted(ids)

    def update(self, block: bytes) -> None:
        """Account for a block read (``_lines``): where the file was read up to, its lines, its tail."""
        self.end += len(block)
        self.lines += block.count(b"\n")
        self.tail = (self.tail + block)[-self.TAIL:] if len(block) < self.TAIL else block[-self.TAIL:]

    def commit(self) -> None:
        loader, con = self.loader, self.loader.con
        cols = column_list("invocation_index")
        with _transaction(con, "index"):
            if not self.offset:
                con.execute("DELETE FROM invocation_index")
            # staged in line order (the index's blocks are the first tasks, their results taken
            # and written in order): no sort, whose memory would grow with the index
            con.execute(f"INSERT INTO invocation_index ({cols}) SELECT {cols} FROM _gw_index_stage")
            # the same invocation id on two lines; when appending, those of the earlier lines are
            # among the stored issues already
            loader.index_issues.extend(index_duplicates(con, self.first_line))
            con.execute("DELETE FROM archive_files WHERE path = ?", [INDEX_FILE])
            if self.stat is not None:
                con.execute("INSERT INTO archive_files (path, size, mtime_ns, sha256, lines, tail_sha256) "
                            "VALUES (?, ?, ?, NULL, ?, ?)",
                            [INDEX_FILE, self.end, self.stat.st_mtime_ns, self.lines, hashlib.sha256(self.tail).hexdigest()])
            new = to_arrow("ingest_issues", [issue_row(loader.ingest_id, None, p, line, kind, msg, K.NONE)
                                             for p, line, kind, msg in loader.index_issues], ISSUE_FIELDS)
            # the issues not stored before count as this ingest's (ingests.issues), as finish counts
            # the other archive-level ones
            loader.index_issues_new = _with_table(con, "_gw_new", new, lambda: con.execute(
                "SELECT count(*) FROM _gw_new n WHERE NOT EXISTS (SELECT 1 FROM ingest_issues i WHERE "
                "i.invocation_id IS NULL AND i.path = n.path AND i.line IS NOT DISTINCT FROM n.line "
                "AND i.kind = n.kind AND i.message = n.message)").fetchall()[0][0])
            con.execute("DELETE FROM ingest_issues WHERE invocation_id IS NULL AND path = ?", [INDEX_FILE])
            _insert(con, "ingest_issues", new)
        con.execute("DROP TABLE IF EXISTS _gw_index_stage")


_ID_MEMBER = re.compile(rb'"invocation_id":"([0-9A-Za-z._-]{1,200})"')


def _lines(fh, seen: "_IndexLoad | None" = None):
    """The raw lines of a binary file (scan.split_lines: a line over MAX_LINE bytes is never held
    whole, its length is yielded instead), telling ``seen`` every block read."""
    def blocks():
        while block := fh.read(1 << 20):
            if seen is not None:
                seen.update(block)
            yield block
    return split_lines(blocks())


# the columns of _load_schemas' rows and files, in their order
SCHEMA_FIELDS = ("digest", "computed_digest", "schema_json")
ARCHIVE_FILE_FIELDS = ("path", "size", "mtime_ns", "sha256")


def _load_schemas(loader: _Loader, present: bool):
    """runs/schemas/<digest>.json -> class_schemas rows and archive_files rows (small; re-read when
    anything changed)."""
    folder = os.path.join(loader.root, SCHEMAS_DIR)
    if not present:
        return [], []
    if os.path.islink(folder) and not inside(loader.root_real, folder):
        loader.archive_issues.add(SCHEMAS_DIR, None, K.SYMLINK_OUTSIDE, "symlink leading outside the archive; not read")
        return [], []
    rows, files = [], []
    try:
        names = sorted(os.listdir(folder))
    except OSError as exc:
        loader.archive_issues.add(SCHEMAS_DIR, None, K.UNREADABLE, f"cannot list: {exc.strerror or exc}")
        return [], []
    for name in names:
        rel = f"{SCHEMAS_DIR}/{display_name(name)}"
        path = os.path.join(folder, name)
        if os.path.islink(path) and not inside(loader.root_real, path):
            loader.archive_issues.add(rel, None, K.SYMLINK_OUTSIDE, "symlink leading outside the archive; not read")
            continue
        if not schema_name_ok(name):
            loader.archive_issues.add(rel, None, *NOT_A_SCHEMA)
            continue
        try:
            with open_regular_file(path) as fh:  # a FIFO, device or socket: refused, never waited on
                st = os.fstat(fh.fileno())
                data = fh.read(MAX_LINE + 1)
        except OSError as exc:
            loader.archive_issues.add(rel, None, K.UNREADABLE, f"cannot read: {exc.strerror or exc}")
            continue
        row, issues = schema_file(name, rel, len(data), data)
        if row is not None:
            files.append((rel, st.st_size, st.st_mtime_ns, hashlib.sha256(data).hexdigest()))
            rows.append(row)
        for issue in issues:
            loader.archive_issues.add(*issue)
    return rows, files


def load_single(con: duckdb.DuckDBPyConnection, spans_path, envelope_path, request_path=None) -> str:
    """Load one spans file + envelope (+ request) as a run (``ingest.single.run_rows``), for a
    drop-in lint of files that are not in an archive (like ``workbench lint SPANS ENVELOPE``).
    Any earlier rows under the run's key are replaced. Returns the key (runs.invocation_id).
    """
    pa = arrow()

    key, rows = run_rows(spans_path, envelope_path, request_path)
    with _transaction(con):
        _with_table(con, "_gw_replace", pa.table({"id": pa.array([key], pa.string())}), lambda: [
            con.execute(f"DELETE FROM {t} WHERE invocation_id IN (SELECT id FROM _gw_replace)") for t in RUN_TABLES])
        for t in RUN_TABLES:
            _insert(con, t, rows.arrow(t))
    return key


def ingest_runs(con: duckdb.DuckDBPyConnection, runs_dir, names) -> IngestResult:
    """Ingest only the run folders ``names`` of ``runs_dir`` (`groundwork watch`: the runs that
    have just landed), parsed in this process, without listing the archive.

    Each folder is loaded, skipped as unchanged or rejected exactly as ``ingest_archive`` would
    (same rows, same ``run_files`` fingerprints), in one transaction after the ``ingests`` row is
    committed (the protocol above). Nothing archive-level is touched: the index, the class
    schemas, runs whose folder is gone, and the issues of the root and of rejected folders are the
    next full ingest's (a rejected folder is only counted).
    """
    root = check_runs_dir(runs_dir)
    wanted = list(dict.fromkeys(names))
    t0 = time.monotonic()
    with _transaction(con):
        ingest_id = con.execute("SELECT coalesce(max(ingest_id), 0) + 1 FROM ingests").fetchall()[0][0]
        con.execute("INSERT INTO ingests (ingest_id, runs_dir, started_at, tool_version) VALUES (?, ?, ?, ?)",
                    [ingest_id, os.path.realpath(root), _now(), tool_version])
    result = IngestResult(ingest_id, os.path.realpath(root), folders_seen=len(wanted))
    stored = _stored(con, wanted)
    links = frozenset(n for n in wanted if os.path.islink(os.path.join(root, n)))
    res = process_chunk(str(root), result.runs_dir, ingest_id, [(n, stored.get(n)) for n in wanted], False, links)
    result.runs_loaded, result.runs_unchanged, result.runs_rejected = len(res.loaded), len(res.unchanged), len(res.rejected)
    result.issues_new = write_batch(con, _Batch([res], replace=[n for n in res.loaded if n in stored], seen=[],
                                                touched=res.touched))
    present = [*res.loaded, *res.unchanged]
    with _transaction(con):
        back = con.execute("UPDATE runs SET missing = false WHERE missing AND invocation_id IN (SELECT unnest($names::VARCHAR[]))",
                           {"names": present}).fetchall()[0][0]
        result.issues_by_kind = {k: n for k, n in con.execute(
            "SELECT kind, count(*) FROM ingest_issues WHERE invocation_id IN (SELECT unnest($names::VARCHAR[])) "
            "GROUP BY kind ORDER BY kind", {"names": present}).fetchall()}
        result.runs_missing = con.execute("SELECT count(*) FROM runs WHERE missing").fetchall()[0][0]
        result.elapsed = time.monotonic() - t0
        con.execute("UPDATE ingests SET finished_at = ?, folders_seen = ?, runs_loaded = ?, runs_unchanged = ?, "
                    "runs_rejected = ?, runs_missing = ?, issues = ?, runs_changed = ? WHERE ingest_id = ?",
                    [_now(), result.folders_seen, result.runs_loaded, result.runs_unchanged,
                     result.runs_rejected, result.runs_missing, result.issues_new, result.runs_loaded + back, ingest_id])
    return result
