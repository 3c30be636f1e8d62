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

from groundwork.ingest import issues as K

INDEX_FILE = "invocations.jsonl"
SCHEMAS_DIR = "schemas"
MAX_DEPTH = 8  # nested folders inside a run folder (crate/ is one level)


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


@dataclass(slots=True)
class RunListing:
    name: str
    files: dict[str, FileEntry] = field(default_factory=dict)
    problems: list[tuple[str, str, str]] = field(default_factory=list)  # (rel, kind, message), effect none
    reject: tuple[str, str] | None = None    # (kind, message) when the folder itself is unusable

    def files_fingerprint(self) -> str:
        """Over (path, size, mtime) of every file: equal -> the run is skipped unread."""
        files = self.files
        return hashlib.sha256("".join([
            f"{rel}\0{f.size}\0{f.mtime_ns}\0{f.error[0] if f.error else ''}\n"
            for rel, f in sorted(files.items())]).encode("utf-8")).hexdigest()

    def sizes_unchanged(self) -> bool:
        """True when every file read had the size it was listed with (so the listing's
        files_fingerprint still describes what was read)."""
        return all(f.data is None or len(f.data) == f.listed_size for f in self.files.values())

    def content_fingerprint(self) -> str:
        """Over (path, SHA-256 of the bytes) of every file: equal -> unchanged even if touched."""
        return hashlib.sha256("".join([
            f"{rel}\0{f.sha256}\0{f.error[0] if f.error else ''}\n"
            for rel, f in sorted(self.files.items())]).encode("utf-8")).hexdigest()


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
        size = st.st_size
        data = os.read(fd, size + 1)
        if len(data) > size:  # growing while we read: take everything there is
            parts = [data]
            while chunk := os.read(fd, 1 << 20):
                parts.append(chunk)
            data = b"".join(parts)
    except OSError:
        return None
    finally:
        os.close(fd)
    return FileEntry(name, len(data), st.st_mtime_ns, data, _sha256(data).hexdigest(), None, size)


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
        if is_link or depth >= MAX_DEPTH:
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
        if f.error is not None or f.data is not None:
            continue
        try:
            with open(os.path.join(base, f.rel), "rb") as fh:
                f.data = fh.read()
        except OSError as exc:
            f.error = (K.UNREADABLE, f"cannot read: {exc.strerror or exc}")
            continue
        f.sha256 = hashlib.sha256(f.data).hexdigest()
        f.size = len(f.data)


def classify_root(root: str):
    """Yield (kind, name) for each entry of the archive root.

    kind: ``run`` (a folder to load), ``run-link`` (a symlink to a folder, loaded only when it
    stays inside the archive), ``index`` (invocations.jsonl), ``schemas``,
    ``bad-name`` (a folder whose name is not UTF-8), ``unexpected`` (anything else).
    """
    with os.scandir(root) as it:
        for entry in it:
            name = entry.name
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
