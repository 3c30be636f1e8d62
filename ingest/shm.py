"""Arrow IPC bytes from the parser processes to the main process through anonymous shared memory.

Each parser task returns its tables as Arrow IPC streams (~2.3 MB per 256 runs). Through the
executor's pipe those bytes are pickled and copied into the pipe by the worker, then read into a
growing buffer (~200k page faults per 20k runs), unpickled and copied again by the main process.
Here they travel through *slots* instead: ``memfd_create`` files owned by the main process, which
the worker opens as ``/proc/<main pid>/fd/<n>`` and writes; the main process maps them (once:
the pages stay mapped when the slot is written again) and hands the writer thread zero-copy
Arrow buffers over the mapping.

What makes it safe:

* Nothing is named: a memfd lives only as long as a process holds it open or mapped, so a
  ``kill -9`` (of the main process; its workers follow it, see ``work._exit_with_parent``) leaves
  no memory behind. No /dev/shm name, no resource tracker.
* A slot belongs to one task at a time: taken when the task is submitted, given back by the
  writer thread after ``write_batch`` returned (DuckDB reads the Arrow memory during the INSERTs
  and keeps the scanned tables until the COMMIT). Before a slot is reused, the main process's
  memoryview over it is released, which fails while any Arrow buffer (a table, a slice, a scan
  DuckDB kept) still refers to it: such a slot waits in ``limbo`` until that reference is gone,
  and is never written meanwhile.
* Bounded: at most ``count`` slots; a submit waits for one to be given back (the caller's
  ``make_room`` hands its pending results to the writer first), or uses the pipe when nothing
  would give one back. A slot grows to what one task writes and is cut back when that was more
  than ``KEEP``.
* Anything unavailable or failing while setting up (no ``os.memfd_create``, no /proc, a worker
  that cannot open the slot) falls back to the pipe, as does ``GROUNDWORK_IPC=pipe``.

The worker side (``put``) runs in the parser processes and imports no DuckDB.
"""

from __future__ import annotations

import itertools
import mmap
import os
import threading

ENV = "GROUNDWORK_IPC"  # "pipe" forces the executor's pipe; anything else: shared memory where possible
ALIGN = 64              # each IPC stream starts at a multiple of this in its slot
KEEP = 16 << 20         # a slot given back larger than this is cut back to nothing
_NAME = "groundwork-ipc"

_generations = itertools.count(1)


def _rounded(n: int) -> int:
    return (n + (1 << 16) - 1) >> 16 << 16  # whole 64 KiB (the mapping is populated whole)


def _populate() -> int:
    return mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0)


# ----------------------------------------------------------------------------- worker side

_gen = None
_opened: dict[int, int] = {}  # slot index -> fd (of generation _gen)
_PAD = bytes(ALIGN)


def put(ref: tuple, blobs: dict[str, object]) -> tuple[dict[str, tuple[int, int]], int]:
    """Write ``blobs`` (name -> bytes-like) into the slot ``ref`` = (generation, index, path,
    inode); returns {name: (offset, length)} and the bytes used. Raises OSError when the slot
    cannot be used (the caller then sends the bytes through the pipe).

    One ``pwritev`` of the whole chunk: the worker does not map the slot (a first write through
    a mapping faults every page in, ~3 us each here, twice the cost of the system call's copy)."""
    global _gen
    gen, index, path, ino = ref
    if gen != _gen:  # a new ingest: the slots of the previous one are not used again
        _forget()
        _gen = gen
    fd = _opened.get(index)
    if fd is None:
        fd = os.open(path, os.O_RDWR | getattr(os, "O_CLOEXEC", 0))
        if os.fstat(fd).st_ino != ino:
            os.close(fd)
            raise OSError(f"{path} is not the slot it was given as")
        _opened[index] = fd
    where, parts, end = {}, [], 0
    for name, blob in blobs.items():
        n = memoryview(blob).nbytes
        where[name] = (end, n)
        parts.append(blob)
        end += n
        if end % ALIGN:
            parts.append(_PAD[:ALIGN - end % ALIGN])
            end += ALIGN - end % ALIGN
    if os.pwritev(fd, parts, 0) != end:
        raise OSError(f"short write to {path}")
    return where, end


def _forget() -> None:
    for fd in _opened.values():
        os.close(fd)
    _opened.clear()


# ------------------------------------------------------------------------------- main side


class _Slot:
    __slots__ = ("fd", "ino", "mm", "view")

    def __init__(self):
        self.fd = os.memfd_create(_NAME, os.MFD_CLOEXEC)
        self.ino = os.fstat(self.fd).st_ino
        self.mm = None    # the main process's mapping (kept between uses: no page faults the next time)
        self.view = None  # memoryview over mm while a result's tables refer to it


class Slots:
    """The main process's slots for one ingest. ``acquire`` (the thread submitting tasks),
    ``receive`` (the thread taking results) and ``release`` (the writer thread)."""

    def __init__(self, count: int):
        self.gen = next(_generations)
        self.count = count
        self.pid = os.getpid()
        self.slots: list[_Slot] = []
        self.free: list[int] = []
        self.limbo: list[int] = []  # given back while something still referred to them
        self.cond = threading.Condition()
        self.closed = False
        self.used = 0      # results that came through a slot
        self.retired = 0   # slots given back while something still referred to their memory
        self.waits = 0     # submits that waited for a slot

    @classmethod
    def create(cls, count: int) -> "Slots | None":
        """Slots, or None for the pipe (forced by GROUNDWORK_IPC=pipe, or unavailable here)."""
        if os.environ.get(ENV, "").strip().lower() == "pipe" or not hasattr(os, "memfd_create"):
            return None
        slots = cls(count)
        try:
            slots._new()
            first = slots.slots[0]
            fd = os.open(slots._path(0), os.O_RDWR | os.O_CLOEXEC)  # what the workers will do
            try:
                ok = os.fstat(fd).st_ino == first.ino
            finally:
                os.close(fd)
        except (OSError, AttributeError, ValueError):
            slots.close()
            return None
        if not ok:
            slots.close()
            return None
        slots.free.append(0)
        return slots

    def _path(self, index: int) -> str:
        return f"/proc/{self.pid}/fd/{self.slots[index].fd}"

    def _new(self) -> int:
        self.slots.append(_Slot())
        return len(self.slots) - 1

    def _ref(self, index: int) -> tuple:
        return (self.gen, index, self._path(index), self.slots[index].ino)

    def acquire(self, make_room=None) -> tuple | None:
        """A free slot's reference for a task, waiting for one when all are taken: ``make_room()``
        must let the writer give some back, and returns False when nothing will (then, as when
        the slots are disabled, None: use the pipe)."""
        waited = False
        while True:
            with self.cond:
                if self.closed:
                    return None
                if self.limbo:
                    self._recheck()
                if self.free:
                    return self._ref(self.free.pop())
                if len(self.slots) < self.count:
                    try:
                        return self._ref(self._new())
                    except OSError:
                        self.closed = True
                        return None
            if not waited:
                self.waits += 1
                waited = True
            # again after each wait: what holds the slots may have changed
            if make_room is None or not make_room():
                return None
            with self.cond:
                if not self.free and not self.closed:
                    self.cond.wait(0.05)

    def receive(self, index: int, res):
        """A task's result: when its tables came in slot ``index``, make them Arrow buffers over
        the mapping (the slot stays taken until ``release``); otherwise give the slot back now."""
        import pyarrow as pa

        where = getattr(res, "slot_tables", None)
        if not where:
            if getattr(res, "slot_error", None):
                self.disable()  # the workers cannot use the slots: the pipe from now on
            self._give_back(index)
            return res
        slot = self.slots[index]
        end = res.slot_end
        if slot.mm is None or len(slot.mm) < end:
            size = os.fstat(slot.fd).st_size
            if size < _rounded(end):  # room to grow, so that the next tasks need no new mapping
                size = _rounded(end)
                os.ftruncate(slot.fd, size)
            slot.mm = None
            slot.mm = mmap.mmap(slot.fd, size, flags=_populate(), prot=mmap.PROT_READ)
        slot.view = memoryview(slot.mm)
        whole = pa.py_buffer(slot.view)
        res.tables = {name: whole.slice(off, n) for name, (off, n) in where.items()}
        res.slot_tables = None
        res.slot = index
        self.used += 1
        return res

    def in_use(self) -> int:
        """Slots whose memory results received here still refer to (``receive`` to ``release``)."""
        with self.cond:
            return sum(1 for slot in self.slots if slot.view is not None)

    def release(self, res) -> None:
        """The writer is done with ``res``: drop its buffers and give its slot back (to limbo
        while something still refers to the slot's memory)."""
        index = res.slot
        if index is None:
            return
        res.tables = {}
        res.slot = None
        with self.cond:
            if self._unmap(index):
                self.free.append(index)
                self.cond.notify()
            else:
                self.retired += 1
                self.limbo.append(index)

    def _unmap(self, index: int) -> bool:
        """Release the slot's memoryview; False while an Arrow buffer (or DuckDB) still refers to it."""
        slot = self.slots[index]
        try:
            slot.view.release()
        except BufferError:
            return False
        slot.view = None
        if slot.mm is not None and len(slot.mm) > KEEP:
            slot.mm = None
            try:
                os.ftruncate(slot.fd, 0)
            except OSError:
                pass
        return True

    def _recheck(self) -> None:
        """Slots in limbo whose last reference has gone are free again."""
        for index in list(self.limbo):
            if self._unmap(index):
                self.limbo.remove(index)
                self.free.append(index)

    def _give_back(self, index: int) -> None:
        with self.cond:
            self.free.append(index)
            self.cond.notify()

    def disable(self) -> None:
        """No more slots handed out (acquire returns None); the ones in use stay valid."""
        with self.cond:
            self.closed = True
            self.cond.notify_all()

    def close(self) -> None:
        """End of the ingest: close the memfds. Mappings still referred to stay valid until their
        last buffer goes; the kernel frees each memfd when no process holds it any more."""
        self.disable()
        for slot in self.slots:
            if slot.view is None and slot.mm is not None:
                slot.mm.close()  # (it holds a duplicate of the fd)
            try:
                os.close(slot.fd)
            except OSError:
                pass
        self.slots = []
