"""The server's view of the warehouse: a private copy, refreshed while no writer holds the file.

DuckDB lets one process write a warehouse file, and while it does no other process can open it,
not even read-only (README.md#sharing-the-warehouse); a nightly holds it for its whole run. So the
server never answers from the warehouse itself: it copies the file (and its write-ahead log, if
any) while it holds a read-only connection to it — a read-only open shares the file only with
other read-only opens, so no writer can change it during the copy — and answers every request
from that copy, opened read-only and confined like `groundwork sql` (investigate.session.confine).

At most every ``refresh_every`` seconds a request looks at the warehouse file's size and time; when
they changed it tries, for ``wait`` seconds only, to take a new copy. While a writer holds the file
the pages keep answering from the last copy and say so (``Freshness``); the next request after the
writer lets go takes a new one. An old copy is closed and deleted once the requests reading it end.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import duckdb

from groundwork.core.errors import GroundworkError, WarehouseLocked
from groundwork.core.warehouse import connect, schema_version, stored_version
from groundwork.investigate.session import confine

MEMORY_LIMIT = "1GB"  # per served copy, shared by the requests answered from it

REFRESH_EVERY = 1.0   # seconds between two looks at the warehouse file
REFRESH_WAIT = 0.2    # seconds a refresh waits for a writer's lock before answering from the old copy


def _signature(path: str) -> tuple:
    """What changes when a writer changes the warehouse: the file's and its log's size and time."""
    out = []
    for name in (path, path + ".wal"):
        try:
            st = os.stat(name)
            out.append((st.st_size, st.st_mtime_ns))
        except FileNotFoundError:
            out.append(None)
    return tuple(out)


@dataclass
class Snapshot:
    """One private copy of the warehouse and the connection reading it."""

    con: duckdb.DuckDBPyConnection
    folder: Path
    taken_at: float          # epoch seconds of the copy
    signature: tuple
    users: int = 0
    retired: bool = False

    def close(self) -> None:
        self.con.close()
        shutil.rmtree(self.folder, ignore_errors=True)


@dataclass(frozen=True)
class Freshness:
    """How fresh the data a page shows is."""

    taken_at: float               # when the copy being read was taken
    checked_at: float             # when the warehouse file was last looked at
    busy: str | None              # the lock message while a writer holds the file, else None


class Snapshots:
    """The current copy of the warehouse at ``path`` and the refreshing of it (thread-safe)."""

    def __init__(self, path: str | Path, *, refresh_every: float = REFRESH_EVERY, wait: float = REFRESH_WAIT,
                 first_wait: float | None = None, workdir: str | None = None):
        self.path = str(path)
        self.refresh_every = refresh_every
        self.wait = wait
        self._root = Path(tempfile.mkdtemp(prefix="groundwork-serve-", dir=workdir))
        self._lock = threading.Lock()        # guards the fields below
        self._refreshing = threading.Lock()  # one copy at a time
        self._count = 0
        self._busy: str | None = None
        self._checked_at = time.time()
        try:
            self._current = self._take(first_wait)   # None: the usual lock wait (GROUNDWORK_LOCK_WAIT)
        except BaseException:
            shutil.rmtree(self._root, ignore_errors=True)
            raise

    # -- taking a copy -------------------------------------------------------------------
    def _take(self, wait: float | None) -> Snapshot:
        """Copy the warehouse while holding a read-only connection to it; open the copy, confined."""
        self._count += 1
        folder = self._root / f"copy-{self._count}"
        folder.mkdir()
        copy = folder / "warehouse.duckdb"
        try:
            source = connect(self.path, read_only=True, wait=wait)  # refuses a file that is not a warehouse
            try:
                signature = _signature(self.path)
                shutil.copyfile(self.path, copy)
                if os.path.exists(self.path + ".wal"):
                    shutil.copyfile(self.path + ".wal", str(copy) + ".wal")
                older = (stored_version(source) or 0) < schema_version()
            finally:
                source.close()
            if older:
                # The copy is the server's own: brought to today's schema (the file itself is
                # never written), so the pages' queries find every table they read.
                connect(copy).close()
            con = connect(copy, read_only=True)
            try:
                # A bound on what one /sql query may hold (a join of two large tables, say);
                # past it DuckDB says "Out of Memory" and that query alone fails.
                con.execute("SET memory_limit = $limit", {"limit": MEMORY_LIMIT})
                confine(con)
            except BaseException:
                con.close()
                raise
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        return Snapshot(con=con, folder=folder, taken_at=time.time(), signature=signature)

    def _maybe_refresh(self) -> None:
        now = time.time()
        with self._lock:
            if now - self._checked_at < self.refresh_every:
                return
            self._checked_at = now
            current = self._current
        if _signature(self.path) == current.signature and self._busy is None:
            return
        if not self._refreshing.acquire(blocking=False):
            return  # another request is taking the copy; answer from the current one
        try:
            try:
                new = self._take(self.wait)
            except WarehouseLocked as exc:
                with self._lock:
                    self._busy = str(exc)
                return
            except GroundworkError as exc:  # e.g. the file was replaced by something else: keep the copy
                with self._lock:
                    self._busy = str(exc)
                return
            with self._lock:
                old, self._current, self._busy = self._current, new, None
                old.retired = True
                if old.users == 0:
                    old.close()
        finally:
            self._refreshing.release()

    # -- reading -------------------------------------------------------------------------
    @contextmanager
    def cursor(self) -> Iterator[tuple[duckdb.DuckDBPyConnection, Freshness]]:
        """A new cursor on the current copy (its own temp tables; confined) and how fresh it is."""
        self._maybe_refresh()
        with self._lock:
            snap = self._current
            snap.users += 1
            fresh = Freshness(taken_at=snap.taken_at, checked_at=self._checked_at, busy=self._busy)
        cur = snap.con.cursor()
        try:
            yield cur, fresh
        finally:
            cur.close()
            with self._lock:
                snap.users -= 1
                if snap.retired and snap.users == 0:
                    snap.close()

    def close(self) -> None:
        with self._lock:
            self._current.retired = True
            if self._current.users == 0:
                self._current.close()
        shutil.rmtree(self._root, ignore_errors=True)
