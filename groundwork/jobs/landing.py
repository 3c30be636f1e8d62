"""When a run has landed: the complete run folder (docs/rules.md#complete-run-folders), the
index tail that names runs as the workbench stores them, and the bounded set of named runs still
being written.

Filesystem only (no warehouse). Nothing here remembers a run once it is complete: the watch's
memory stays flat however long it runs and however large the archive grows.
"""

from __future__ import annotations

import os

import orjson

from groundwork.core.regular import open_regular
from groundwork.ingest.scan import INDEX_FILE, SCHEMAS_DIR

# The last file the workbench writes that a check compares with (docs/rules.md#complete-run-folders).
LAST_FILE = "sources.txt"
SETTLE = 10.0        # seconds without any change after which a folder counts as complete as it stands
RECHECK = 0.5        # seconds between two looks at a waiting folder's files (for SETTLE)
MAX_WAITING = 10_000  # runs waiting at once; past it the watch forgets them and scans the archive
MAX_READ = 16 << 20  # bytes of invocations.jsonl read at a time


def run_name_ok(name) -> bool:
    """A plain folder name of the archive root that can be a run (never a path)."""
    return (isinstance(name, str) and name not in ("", ".", "..", SCHEMAS_DIR, INDEX_FILE)
            and "/" not in name and "\0" not in name and os.sep not in name)


def is_complete(folder: str) -> bool:
    """The folder holds LAST_FILE, a regular file, ending with its newline: the workbench wrote it
    last (docs/rules.md#complete-run-folders). A FIFO, device or folder in its place is never
    opened for a blocking read (core.regular): the folder is then complete only once it settles."""
    try:
        fd, st = open_regular(os.path.join(folder, LAST_FILE))
    except OSError:
        return False
    try:
        size = st.st_size
        return size > 0 and os.pread(fd, 1, size - 1) == b"\n"
    except OSError:
        return False
    finally:
        os.close(fd)


def signature(folder: str) -> tuple | None:
    """(name, size, mtime) of every entry at the top of the folder; None when it is not there."""
    try:
        with os.scandir(folder) as it:
            out = []
            for entry in it:
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                out.append((entry.name, st.st_size, st.st_mtime_ns))
    except OSError:
        return None
    return tuple(sorted(out))


class Waiting:
    """Runs named (by the index or a file event) whose folder is not complete yet, by name:
    (signature, time it last changed, time it was last looked at). At most ``limit``; a name
    that does not fit sets ``overflowed`` (the watch then scans the archive instead)."""

    def __init__(self, root: str, settle: float = SETTLE, limit: int = MAX_WAITING):
        self.root = root
        self.settle = settle
        self.limit = limit
        self.runs: dict[str, list] = {}
        self.overflowed = False

    def __len__(self) -> int:
        return len(self.runs)

    def add(self, name: str, now: float) -> None:
        if name in self.runs:
            return
        if len(self.runs) >= self.limit:
            self.overflowed = True
            return
        self.runs[name] = [signature(os.path.join(self.root, name)), now, now]

    def forget(self) -> None:
        self.runs.clear()

    def landed(self, now: float) -> list[str]:
        """The waiting runs that are complete now (no longer waiting), and those whose folder has
        not changed for ``settle`` seconds (complete as they stand); a folder that is gone after
        ``settle`` seconds is dropped."""
        out, gone = [], []
        for name, state in self.runs.items():
            folder = os.path.join(self.root, name)
            if is_complete(folder):
                out.append(name)
                continue
            if now - state[2] < RECHECK:
                continue
            state[2] = now
            sig = signature(folder)
            if sig != state[0]:
                state[0], state[1] = sig, now
            elif now - state[1] >= self.settle:
                (out if sig is not None else gone).append(name)
        for name in out + gone:
            del self.runs[name]
        return out


class IndexTail:
    """The new lines of runs/invocations.jsonl: the workbench appends one per run it stores,
    before the run's spans.jsonl, grounding.txt and sources.txt (docs/rules.md#run-folder).

    Remembers where it has read up to (an offset into the file and the file's identity), never
    the names. A line still being appended (no newline yet) is read when it is whole. A file
    replaced or cut shorter is not read again: ``read`` then says so (the watch scans the
    archive instead)."""

    def __init__(self, root: str):
        self.path = os.path.join(root, INDEX_FILE)
        self.offset = 0
        self.ident: tuple | None = None

    def _stat(self):
        try:
            return os.stat(self.path)
        except OSError:
            return None

    def skip_to_end(self) -> None:
        """Start after what the file holds now."""
        st = self._stat()
        self.offset, self.ident = (st.st_size, (st.st_dev, st.st_ino)) if st else (0, None)

    def read(self) -> tuple[list[str], bool]:
        """(names of the runs indexed since the last call, whether the file was replaced or cut)."""
        st = self._stat()
        if st is None:
            lost, self.offset, self.ident = self.ident is not None, 0, None
            return [], lost
        ident = (st.st_dev, st.st_ino)
        if self.ident is None and self.offset == 0:
            self.ident = ident  # created since: read it from its start
        if ident != self.ident or st.st_size < self.offset:
            self.offset, self.ident = st.st_size, ident
            return [], True
        if st.st_size == self.offset:
            return [], False
        try:
            fd, _ = open_regular(self.path)   # never a blocking open of a FIFO or device
        except OSError:
            return [], False
        try:
            block = os.pread(fd, min(st.st_size - self.offset, MAX_READ), self.offset)
        except OSError:
            return [], False
        finally:
            os.close(fd)
        end = block.rfind(b"\n") + 1
        if end == 0:
            if len(block) < MAX_READ:
                return [], False  # a line still being written
            self.offset += len(block)  # a line longer than MAX_READ: skipped, the archive is scanned
            return [], True
        self.offset += end
        names = []
        for line in block[:end].split(b"\n"):
            if not line.strip():
                continue
            try:
                doc = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            name = doc.get("invocation_id") if isinstance(doc, dict) else None
            if run_name_ok(name):
                names.append(name)
        return names, False

