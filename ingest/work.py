"""The parser processes' side of an ingest: list, fingerprint, read and parse chunks of run
folders, and parse ``invocations.jsonl`` lines; results go back as Arrow IPC bytes.

Nothing here touches the warehouse, and this module does not import DuckDB: every parser
process imports it (spawned interpreters), and DuckDB's import alone costs ~50 ms of CPU each.
"""

from __future__ import annotations

import gc
import os
import select
import signal
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from groundwork.core.canonical import content_hash_or_none

from groundwork.ingest import issues as K
from groundwork.ingest import shm
from groundwork.core.jsontext import decode_utf8, iso_to_us_opt, needs_exact_bytes, parse, vstr
from groundwork.ingest.parse import PARSER_VERSION, failed_run, file_rows, issue_row, parse_run
from groundwork.ingest.scan import INDEX_FILE, list_and_read, list_run, read_files
from groundwork.ingest.tables import RUN_TABLES, RowSet

if TYPE_CHECKING:   # annotations only: pyarrow is imported where tables are built or read
    import pyarrow as pa


@dataclass
class ChunkResult:
    loaded: list[str] = field(default_factory=list)       # (re)parsed runs
    unchanged: list[str] = field(default_factory=list)
    touched: list[tuple[str, str]] = field(default_factory=list)  # (name, files_fingerprint): same content, new stat
    rejected: list[str] = field(default_factory=list)
    # Arrow IPC streams (non-empty tables only): bytes through the pipe, buffers over a shared
    # memory slot in the main process (shm.Slots.receive), pa.Buffer when parsed inline
    tables: dict[str, bytes | pa.Buffer] = field(default_factory=dict)
    touched_files: list[tuple] = field(default_factory=list)      # parse.FILE_FIELDS
    rejected_issues: list[tuple] = field(default_factory=list)    # parse.ISSUE_FIELDS
    rows: int = 0
    nbytes: int = 0  # of the IPC streams: the main process cuts batches by it too (load.BATCH_BYTES)
    # shared-memory transport (ingest/shm.py): where the worker wrote the streams in its slot
    # (``tables`` is then empty), or why it could not; in the main process, the slot ``tables``
    # refers to until the writer thread gives it back
    slot_tables: dict[str, tuple[int, int]] | None = None
    slot_end: int = 0
    slot_error: str | None = None
    slot: int | None = None
    # in the main process, the task that gave it: (function, arguments) (load._Writer._redo)
    task: tuple | None = None


_CRASH = os.environ.get("GROUNDWORK_INGEST_CRASH")  # fault injection for the kill -9 tests: "point:n"
_crash_counts: dict[str, int] = {}


def _crash_point(point: str, level=None) -> None:
    """SIGKILL this process the n-th time ``point`` is reached or, with ``level`` (a function
    returning a count), once that count is at least n (only when GROUNDWORK_INGEST_CRASH is set;
    tests use it to kill an ingest, or a parser process, at exact moments or states)."""
    if _CRASH is None:
        return
    name, _, n = _CRASH.partition(":")
    if name == point:
        if level is None:
            _crash_counts[point] = _crash_counts.get(point, 0) + 1
            reached = _crash_counts[point]
        else:
            reached = level()
        if reached >= int(n or 1):
            os.kill(os.getpid(), signal.SIGKILL)


def run_task(slot: tuple | None, fn, *args):
    """A task in a parser process: ``fn(*args)``; a ChunkResult's IPC streams go into the shared
    memory slot ``slot`` when one is given and usable, else back through the pipe as bytes."""
    res = fn(*args)
    if isinstance(res, ChunkResult) and res.tables:
        if slot is not None:
            try:
                res.slot_tables, res.slot_end = shm.put(slot, res.tables)
            except (OSError, ValueError) as exc:
                res.slot_error = f"{type(exc).__name__}: {exc}"
            else:
                res.tables = {}
                _crash_point("worker-slot-written")
                return res
        res.tables = {t: b if isinstance(b, bytes) else memoryview(b).tobytes() for t, b in res.tables.items()}
    return res


def process_chunk(root: str, root_real: str, ingest_id: int, items: list, rehash: bool,
                  links: frozenset = frozenset()) -> ChunkResult:
    """List, fingerprint, read and parse a chunk of run folders.

    ``items`` = [(name, stored)] where stored = (files_fingerprint, content_fingerprint,
    parser_version) of the warehouse copy, or None for a run not in the warehouse. ``links``:
    the names that are symlinks in the archive root (the others need no symlink check).
    """
    res = ChunkResult()
    rows = RowSet()
    for name, stored in items:
        current = stored is not None and stored[2] == PARSER_VERSION
        # a run the warehouse lacks (or holds from an older parser) is read whatever its stat says
        listing = list_run(root, root_real, name) if current else list_and_read(root, root_real, name, name in links)
        if listing.reject is not None:
            res.rejected.append(name)
            kind, message = listing.reject
            res.rejected_issues.append(issue_row(ingest_id, name, name, None, kind, message, K.REJECTED))
            continue
        files_fp = listing.files_fingerprint()
        if current and not rehash and files_fp == stored[0]:
            res.unchanged.append(name)
            continue
        read_files(root, listing)
        if current and listing.content_fingerprint() == stored[1]:
            res.unchanged.append(name)
            if files_fp != stored[0]:
                res.touched.append((name, files_fp))
                res.touched_files.extend(file_rows(listing))
            continue
        try:
            out, _ = parse_run(listing, ingest_id, files_fp=files_fp if listing.sizes_unchanged() else None)
        except Exception as exc:  # noqa: BLE001 - a parser bug must not lose the run or the ingest
            out = failed_run(listing, ingest_id, exc)
        rows.extend(out)
        res.loaded.append(name)
    # As Arrow IPC bytes: pickling a pa.Table costs ~50 us per column (~10 ms per task here), a
    # byte string next to nothing, and reading the stream back is zero-copy.
    res.tables = {t: _to_ipc(rows.arrow(t)) for t in RUN_TABLES if rows.rows.get(t)}
    res.rows = rows.count()
    res.nbytes = sum(b.size for b in res.tables.values())
    return res


def _to_ipc(tbl: pa.Table) -> pa.Buffer:
    import pyarrow as pa

    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, tbl.schema) as writer:
        writer.write_table(tbl)
    return sink.getvalue()


def _from_ipc(data) -> pa.Table:
    import pyarrow as pa

    return pa.ipc.open_stream(data).read_all()


# the columns of process_index_lines' rows, in their order
INDEX_FIELDS = ("line_no", "invocation_id", "agent_id", "outcome_status", "completed_at", "envelope_hash")


def process_index_lines(lines: list[tuple[int, bytes]]) -> tuple[list[tuple], list[tuple]]:
    """invocations.jsonl lines -> (invocation_index rows (INDEX_FIELDS), issues (path, line, kind, message))."""
    out, problems = [], []
    for line_no, raw in lines:
        text, decode_problems = decode_utf8(raw)
        for p in decode_problems:
            problems.append((INDEX_FILE, line_no, p.kind, p.message))
        if not text.strip():
            continue
        try:
            doc, fast = parse(text, needs_exact_bytes(raw))
        except (ValueError, RecursionError) as exc:
            problems.append((INDEX_FILE, line_no, K.MALFORMED_JSON, f"invalid JSON ({exc})"))
            continue
        if not isinstance(doc, dict):
            problems.append((INDEX_FILE, line_no, K.WRONG_TYPE, "index line is not a JSON object"))
            out.append((line_no, None, None, None, None, None))
            continue
        outcome = doc.get("outcome")
        h = content_hash_or_none("dd-envelope-json-v1", doc, fast)
        out.append((line_no,
                    vstr(doc["invocation_id"]) if "invocation_id" in doc else None,
                    vstr(doc["agent_id"]) if "agent_id" in doc else None,
                    vstr(outcome["status"]) if isinstance(outcome, dict) and "status" in outcome else None,
                    iso_to_us_opt(doc.get("completed_at")), h))
    return out, problems


def _worker_init(parent: int) -> None:
    """Parser processes run without the cyclic garbage collector (parsing makes no reference
    cycles; collections cost 2-3 % of the parse time) and yield the CPU to the process writing
    the warehouse: with every core busy, a writer that falls behind leaves a serial tail of
    writes after the last run is parsed.

    Their Arrow tables are allocated with the C library's malloc instead of pyarrow's default
    (mimalloc), which hands freed memory back to the system between tasks, so every task's
    tables were built in freshly faulted pages: 247 instead of 256-276 us of CPU per run.

    They exit when the main process does, even by ``kill -9`` (else they would wait for tasks
    forever, holding their memory and the shared-memory slots they have open). ``parent`` is
    the pid of the main process."""
    import pyarrow as pa

    _exit_with_parent(parent)
    gc.disable()
    pa.set_memory_pool(pa.system_memory_pool())
    try:
        os.nice(5)
    except OSError:
        pass


def _exit_with_parent(parent: int) -> None:
    """End this process as soon as its parent ``parent`` is gone: a thread waits on a pidfd of the
    parent (Linux), or checks every second where there is none.

    The parent's pid is given, not read here: a parser process still starting when the main
    process was killed has already been re-parented by then, and would watch its new parent."""
    try:
        fd = os.pidfd_open(parent)
    except ProcessLookupError:  # gone already
        os._exit(1)
    except (AttributeError, OSError):
        fd = None
    if os.getppid() != parent:  # gone already (the pidfd, if any, may be of a reused pid)
        os._exit(1)

    def watch():
        if fd is not None:
            select.select([fd], [], [])
        else:
            while os.getppid() == parent:
                threading.Event().wait(1.0)
        os._exit(1)
    threading.Thread(target=watch, name="groundwork-exit-with-parent", daemon=True).start()
