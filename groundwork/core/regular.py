"""Opening a file that must be a regular file: a FIFO, device or socket in its place is refused
at once, never opened for a blocking read (a FIFO would hang the reader until a writer comes,
a device could be read forever or change state when opened).

The check is done on the open file (``fstat``), and the open itself does not block
(``O_NONBLOCK``, cleared again once the file is known to be regular), so a FIFO swapped in
between a listing and the open is refused too.
"""

from __future__ import annotations

import errno
import os
import stat as stat_mod


class NotRegularFile(OSError):
    """The path names a FIFO, device, socket or folder. ``strerror`` (and ``str()``) say which,
    in the words every ``cannot read: {exc.strerror}`` message of the project already uses."""

    def __init__(self, what: str):
        super().__init__(errno.EINVAL, f"not a regular file ({what})")

    def __str__(self) -> str:
        return self.strerror


def kind_of(mode: int) -> str:
    """What a non-regular file is, in a word or two."""
    if stat_mod.S_ISDIR(mode):
        return "a folder"
    if stat_mod.S_ISFIFO(mode):
        return "a FIFO"
    if stat_mod.S_ISSOCK(mode):
        return "a socket"
    if stat_mod.S_ISCHR(mode) or stat_mod.S_ISBLK(mode):
        return "a device"
    return "not a plain file"


def open_regular(path, *, dir_fd: int | None = None, follow: bool = True) -> tuple[int, os.stat_result]:
    """``(fd, stat)`` of the regular file ``path`` opened for reading; NotRegularFile for anything
    else (a path that is not even openable raises its own OSError). ``follow=False`` refuses a
    symlink (ELOOP)."""
    try:
        st = os.stat(path, dir_fd=dir_fd, follow_symlinks=follow)
    except NotImplementedError:  # dir_fd unsupported: go by the open file alone
        st = None
    if st is not None and not stat_mod.S_ISREG(st.st_mode):
        raise NotRegularFile(kind_of(st.st_mode))
    flags = os.O_RDONLY | os.O_NONBLOCK | (0 if follow else os.O_NOFOLLOW)
    fd = os.open(path, flags, dir_fd=dir_fd)
    try:
        st = os.fstat(fd)
        if not stat_mod.S_ISREG(st.st_mode):
            raise NotRegularFile(kind_of(st.st_mode))
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def not_regular(path) -> str | None:
    """Why ``path`` cannot be read as a regular file, in words that follow its name ("does not
    exist", "is not a regular file (a FIFO)"); None when it can be."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return "does not exist"
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc}"
    return None if stat_mod.S_ISREG(st.st_mode) else f"is not a regular file ({kind_of(st.st_mode)})"


def open_regular_file(path, mode: str = "rb"):
    """A file object for the regular file ``path`` (``open_regular``'s checks), e.g. for yaml or
    json readers."""
    fd, _ = open_regular(path)
    return os.fdopen(fd, mode)


def read_regular(path) -> bytes:
    """The bytes of the regular file ``path`` (NotRegularFile for a FIFO, device, socket, folder)."""
    with open_regular_file(path) as fh:
        return fh.read()
