"""Walk the archive: classify root entries, list and fingerprint run folders, read their files.

Runs in worker processes; no warehouse access. Every entry seen ends up somewhere: a run, a
rejected folder, the index, the schemas folder, or an ``unexpected-entry`` issue.
"""

from __future__ import annotations

import hashlib
import os
import stat as stat_mod
from dataclasses import dataclass, field
from operator import attrgetter

from groundwork.core.jsontext import MAX_LINE
from groundwork.core.regular import NotRegularFile, open_regular

from groundwork.ingest import issues as K

INDEX_FILE = "invocations.jsonl"
SCHEMAS_DIR = "schemas"
MAX_DEPTH = 8  # nested folders inside a run folder (crate/ is one level)

# The files of a run folder the parser reads (docs/rules.md#run-folder). spans.jsonl is read
# line by line; the others are documents, each stored whole as one value.
SPANS_FILE = "spans.jsonl"
DOCUMENTS = ("envelope.json", "request.json", "grounding.txt", "sources.txt")
RUN_FILES = (SPANS_FILE, *DOCUMENTS)
# Memory bounds (docs/rules.md#too-large-runs): no file is ever held whole past these, whatever
# its size; a larger one is hashed as it streams by, and recorded as too large.
MAX_DOCUMENT = MAX_LINE           # a document (envelope.json, ...) is one stored value: 16 MiB at most
MAX_SPANS = 64 * 1024 * 1024      # the lines of a spans.jsonl kept (over-long lines dropped): 64 MiB at most
BLOCK = 1 << 20                   # bytes read at a time from a file larger than MAX_LINE


def display_name(name: str) -> str:
    """A file name made printable/storable (undecodable bytes shown as \\xNN)."""
    try:
        name.encode("utf-8")
        return name
    except UnicodeEncodeError:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def name_ok(name: str) -> bool:
    try:
        name.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def inside(root_real: str, path: str) -> bool:
    target = os.path.realpath(path)
    return target == root_real or target.startswith(root_real.rstrip(os.sep) + os.sep)


@dataclass(slots=True)
class FileEntry:
    rel: str                       # path inside the run folder, '/'-separated
    size: int | None = None
    mtime_ns: int | None = None
    data: bytes | None = None
    sha256: str | None = None
    error: tuple[str, str] | None = None   # (kind, message) when the file could not be read
    listed_size: int | None = None
    # spans.jsonl lines over MAX_LINE bytes, dropped while reading (never held whole): (offset
    # in ``data`` of the empty line left in their place, their length in bytes)
    long_lines: list[tuple[int, int]] | None = None


@dataclass(slots=True)
class RunListing:
    name: str
    files: dict[str, FileEntry] = field(default_factory=dict)
    problems: list[tuple[str, str, str]] = field(default_factory=list)  # (rel, kind, message), effect none
    reject: tuple[str, str] | None = None    # (kind, message) when the folder itself is unusable

    def files_fingerprint(self) -> str:
        """Over (path, size, mtime) of every file, and the entries not read (``problems``):
        equal -> the run is skipped unread."""
        files = self.files
        return hashlib.sha256(("".join([
            f"{rel}\0{f.size}\0{f.mtime_ns}\0{f.error[0] if f.error else ''}\n"
            for rel, f in sorted(files.items())]) + self._problems_text()).encode("utf-8")).hexdigest()

    def _problems_text(self) -> str:
        """The entries listed but not read (a symlinked folder, a name that is not UTF-8, ...):
        one changes the run's issues though no file changed. Empty when there are none, so the
        fingerprints of the other runs stay what they were."""
        return "".join(f"\1{rel}\0{kind}\0{message}\n" for rel, kind, message in sorted(self.problems))

    def sizes_unchanged(self) -> bool:
        """True when every file read had the size it was listed with (so the listing's
        files_fingerprint still describes what was read)."""
        return all(f.sha256 is None or f.size == f.listed_size for f in self.files.values())

    def content_fingerprint(self) -> str:
        """Over (path, SHA-256 of the bytes) of every file: equal -> unchanged even if touched."""
        return hashlib.sha256(("".join([
            f"{rel}\0{f.sha256}\0{f.error[0] if f.error else ''}\n"
            for rel, f in sorted(self.files.items())]) + self._problems_text()).encode("utf-8")).hexdigest()


def list_run(root: str, root_real: str, name: str) -> RunListing:
    """List every file of a run folder with size and mtime (no reading yet)."""
    listing = RunListing(name)
    top = os.path.join(root, name)
    if os.path.islink(top) and not inside(root_real, top):
        listing.reject = (K.SYMLINK_OUTSIDE, f"run folder is a symlink to {display_name(os.path.realpath(top))}, outside the archive")
        return listing
    _walk(top, "", root_real, listing, 0)
    return listing


def list_and_read(root: str, root_real: str, name: str, may_be_link: bool = True) -> RunListing:
    """``list_run`` followed by ``read_files``, with the same result, in fewer system calls.

    The run folder is opened once and listed through that descriptor; regular files at its top
    (nearly all of them) are opened relative to it (no path lookup from /), their size and mtime
    come from fstat on the open file, and the bytes are read with os.read (no stat by path, no
    buffered file object). Any other entry is listed as ``list_run`` lists it and read by
    ``read_files``, so its issues are exactly theirs. ``may_be_link=False`` (the archive listing
    said the folder is no symlink) saves the lstat.
    """
    listing = RunListing(name)
    top = os.path.join(root, name)
    if may_be_link and os.path.islink(top) and not inside(root_real, top):
        listing.reject = (K.SYMLINK_OUTSIDE, f"run folder is a symlink to {display_name(os.path.realpath(top))}, outside the archive")
        return listing
    try:
        dfd = os.open(top, _O_DIR)
    except OSError:  # list_run words the reject
        _walk(top, "", root_real, listing, 0)
        read_files(root, listing)
        return listing
    try:
        try:
            with os.scandir(dfd) as it:
                entries = sorted(it, key=_NAME)
        except OSError:
            _walk(top, "", root_real, listing, 0)
            read_files(root, listing)
            return listing
        files = listing.files
        rest = False  # an entry read_files must read
        for entry in entries:
            rel = entry.name
            if not rel.isascii() and not name_ok(rel):
                listing.problems.append((display_name(rel), K.BAD_NAME, "file name is not valid UTF-8; not read"))
                continue
            try:
                plain = entry.is_file(follow_symlinks=False)
            except OSError:
                plain = False
            if plain:
                f = _read_at(rel, dfd)
                if f is not None:
                    files[rel] = f
                    continue
            rest = True
            _list_entry(entry, os.path.join(top, rel), rel, root_real, listing, 0)
    finally:
        os.close(dfd)
    if rest:
        read_files(root, listing)
    return listing


_O_DIR = os.O_RDONLY | os.O_DIRECTORY
_O_FILE = os.O_RDONLY | os.O_NOFOLLOW
_NAME = attrgetter("name")
_sha256 = hashlib.sha256


def _read_at(name: str, dfd: int) -> FileEntry | None:
    """The FileEntry (size, mtime, bytes, hash) of the regular file ``name`` in the folder open
    as ``dfd``, through one open file; None on any trouble (the caller then lists the entry as
    list_run does, and read_files words the issue)."""
    try:
        fd = os.open(name, _O_FILE, dir_fd=dfd)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat_mod.S_ISREG(st.st_mode):
            return None
        f = FileEntry(name, mtime_ns=st.st_mtime_ns, listed_size=st.st_size)
        _read_fd(fd, f, st.st_size)
    except OSError:
        return None
    finally:
        os.close(fd)
    return f


def _read_fd(fd: int, f: FileEntry, size: int) -> None:
    """Read the open regular file ``fd`` (``size`` bytes when listed) into ``f``: its bytes, hash
    and size, held whole only within the memory bounds above (``f.rel`` says how to read it)."""
    data = os.read(fd, min(size, MAX_LINE) + 1)
    if len(data) <= size <= MAX_LINE:  # the whole file, read at once (nearly every file)
        f.data, f.sha256, f.size = data, _sha256(data).hexdigest(), len(data)
        return
    # large, or growing while we read: stream it in blocks
    h = _sha256()
    blocks = _blocks(fd, data, h)
    if f.rel == SPANS_FILE:
        _read_lines(blocks, f)
    else:
        parts, kept = [], 0
        for block in blocks:
            if parts is not None:
                kept += len(block)
                if kept <= MAX_DOCUMENT:
                    parts.append(block)
                else:
                    parts = None  # over the bound: hashed on, never held
        f.data = b"".join(parts) if parts is not None else None
        if parts is None and f.rel in DOCUMENTS:
            f.error = (K.TOO_LARGE, f"{f.rel} is {{size:,}} bytes, over the {MAX_DOCUMENT // (1 << 20)} MiB "
                                    "a stored document may hold; not read")
    f.sha256, f.size = h.hexdigest(), blocks.total
    if f.error is not None:
        f.error = (f.error[0], f.error[1].format(size=f.size))


class _blocks:
    """The blocks of an open file, ``first`` (already read) first, hashed into ``h`` as they go;
    ``total`` counts the bytes, ``ends_newline`` whether the last block ends with b"\\n"."""

    def __init__(self, fd: int, first: bytes, h):
        self.fd, self.first, self.h, self.total = fd, first, h, 0
        self.ends_newline = False

    def __iter__(self):
        block = self.first
        self.first = None
        while block:
            self.h.update(block)
            self.total += len(block)
            self.ends_newline = block.endswith(b"\n")
            yield block
            block = os.read(self.fd, BLOCK)


def split_lines(blocks):
    """The lines of a stream of byte ``blocks``, split on b"\\n" as line iteration does (each
    without its newline; the last one only when the stream does not end with a newline). A
    line over MAX_LINE bytes is never held whole: its length (an int) is yielded instead.
    (The one bounded line splitter: spans.jsonl here, runs/invocations.jsonl in ingest/load.py.)"""
    rest: list[bytes] | None = []  # the pieces of the current line, None once it is too long
    rest_len = 0
    for block in blocks:
        first = block.find(b"\n")
        if first < 0:
            rest_len += len(block)
            if rest is not None:
                if rest_len <= MAX_LINE:
                    rest.append(block)
                else:
                    rest = None  # over the bound: not held
            continue
        parts = block.split(b"\n")
        head = parts[0]
        rest_len += len(head)
        yield b"".join(rest) + head if rest is not None and rest_len <= MAX_LINE else rest_len
        yield from parts[1:-1]  # each shorter than the block
        rest, rest_len = [parts[-1]], len(parts[-1])
    if rest_len:
        yield b"".join(rest) if rest is not None and rest_len <= MAX_LINE else rest_len


def _read_lines(blocks: _blocks, f: FileEntry) -> None:
    """spans.jsonl read block by block (``split_lines``): lines up to MAX_LINE bytes are kept, a
    longer one is dropped as it streams by (an empty line, which the reader skips, keeps its
    place and the line numbers after it) and noted in ``f.long_lines``; more than MAX_SPANS
    bytes kept -> none are (``f.error``)."""
    out: list[bytes] | None = []
    kept = 0
    long: list[tuple[int, int]] = []
    for line in split_lines(blocks):
        if isinstance(line, int):
            long.append((kept, line))
            line = b""
        if out is not None:
            out.append(line)
            out.append(b"\n")
        kept += len(line) + 1
        if out is not None and kept > MAX_SPANS + 1:
            out = None
    if kept and not blocks.ends_newline:  # the last line has no newline
        kept -= 1
        if out is not None:
            out.pop()
    if out is not None and kept > MAX_SPANS:
        out = None
    f.long_lines = long or None
    if out is None:
        f.error = (K.TOO_LARGE, f"spans.jsonl holds {kept:,} bytes of lines (of {{size:,}} bytes), over the "
                                f"{MAX_SPANS // (1 << 20)} MiB a run's spans may take; not read")
        f.long_lines = None
    else:
        f.data = b"".join(out)


def _walk(folder: str, prefix: str, root_real: str, listing: RunListing, depth: int) -> None:
    try:
        it = os.scandir(folder)
    except OSError as exc:
        if depth == 0:
            listing.reject = (K.UNREADABLE, f"cannot list the run folder: {exc.strerror or exc}")
        else:
            listing.problems.append((prefix.rstrip("/"), K.UNREADABLE, f"cannot list the folder: {exc.strerror or exc}"))
        return
    with it:
        entries = sorted(it, key=_NAME)
    if not entries and depth > 0:
        listing.problems.append((prefix.rstrip("/"), K.UNEXPECTED_ENTRY, "empty folder inside a run folder; nothing to read"))
    for entry in entries:
        rel = prefix + entry.name
        if not name_ok(entry.name):
            listing.problems.append((display_name(rel), K.BAD_NAME, "file name is not valid UTF-8; not read"))
            continue
        _list_entry(entry, entry.path, rel, root_real, listing, depth)


def _list_entry(entry: os.DirEntry, path: str, rel: str, root_real: str, listing: RunListing, depth: int) -> None:
    """List one entry (``path`` its path, ``rel`` its name inside the run folder)."""
    try:
        is_link = entry.is_symlink()
        if is_link and not inside(root_real, path):
            listing.files[rel] = FileEntry(rel, error=(
                K.SYMLINK_OUTSIDE, f"symlink to {display_name(os.path.realpath(path))}, outside the archive; not read"))
            return
        st = entry.stat(follow_symlinks=True)
    except OSError as exc:
        listing.files[rel] = FileEntry(rel, error=(K.UNREADABLE, f"cannot stat: {exc.strerror or exc}"))
        return
    if stat_mod.S_ISDIR(st.st_mode):
        if depth == 0 and rel in RUN_FILES:
            listing.files[rel] = FileEntry(rel, error=(K.UNREADABLE, "a folder, not a file; not read"))
        elif is_link or depth >= MAX_DEPTH:
            listing.problems.append((rel, K.UNEXPECTED_ENTRY,
                                     "symlinked or deeply nested folder inside a run folder; not read"))
        else:
            _walk(path, rel + "/", root_real, listing, depth + 1)
        return
    if not stat_mod.S_ISREG(st.st_mode):
        listing.files[rel] = FileEntry(rel, error=(K.UNREADABLE, "not a regular file; not read"))
        return
    listing.files[rel] = FileEntry(rel, st.st_size, st.st_mtime_ns, listed_size=st.st_size)


def read_files(root: str, listing: RunListing) -> None:
    """Read the bytes of every listed file and hash them (errors recorded on the entry)."""
    base = os.path.join(root, listing.name)
    for f in listing.files.values():
        if f.error is not None or f.sha256 is not None:  # (a large file read already has no data)
            continue
        read_entry(os.path.join(base, f.rel), f)


def read_entry(path: str, f: FileEntry) -> None:
    """Read the file at ``path`` into ``f`` as the listing's files are read (memory bounds and
    all); an error is recorded on ``f``. A FIFO, device or socket is never opened for reading."""
    try:
        fd, st = open_regular(path)
    except NotRegularFile:
        f.error = (K.UNREADABLE, "not a regular file; not read")
        return
    except OSError as exc:
        f.error = (K.UNREADABLE, f"cannot read: {exc.strerror or exc}")
        return
    try:
        _read_fd(fd, f, st.st_size)
    except OSError as exc:
        f.data = None
        f.error = (K.UNREADABLE, f"cannot read: {exc.strerror or exc}")
    finally:
        os.close(fd)


def classify_root(root: str):
    """Yield (kind, name) for each entry of the archive root.

    kind: ``run`` (a folder to load), ``run-link`` (a symlink to a folder, loaded only when it
    stays inside the archive), ``index`` (invocations.jsonl), ``schemas``,
    ``bad-name`` (a folder whose name is not UTF-8), ``unexpected`` (anything else).
    """
    with os.scandir(root) as it:
        for entry in it:
            name = entry.name
            # nearly every entry: a plain folder (the listing's file type, no stat) with an
            # ASCII name (so valid UTF-8), told apart at the least cost per entry
            if name.isascii() and entry.is_dir(follow_symlinks=False) and name != SCHEMAS_DIR:
                yield "run", name
                continue
            try:
                is_dir = entry.is_dir(follow_symlinks=True)
            except OSError:
                is_dir = False
            if is_dir:
                if not name_ok(name):
                    yield "bad-name", name
                elif name == SCHEMAS_DIR:
                    yield "schemas", name
                else:
                    yield "run-link" if entry.is_symlink() else "run", name
            elif name == INDEX_FILE:
                yield "index", name
            elif entry.is_symlink() and not os.path.exists(entry.path):
                yield "broken-link", name
            else:
                yield "unexpected", name
