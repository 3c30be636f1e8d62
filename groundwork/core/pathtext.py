"""A path given on the command line, in a settings file or in the environment, checked before
any work: the warehouse stores paths as UTF-8 text (ingests.runs_dir, nightlies.out_dir) and
the operating system takes no NUL in a name, so either would fail deep inside a job."""

from __future__ import annotations

import os

from groundwork.core.errors import GroundworkError
from groundwork.core.escape import visible


def checked_path(value, what: str):
    """``value`` (a str or os.PathLike) unchanged, or a one-line GroundworkError naming ``what``
    when it holds a NUL or is not valid UTF-8 (a name's undecodable bytes, which Python keeps
    as lone surrogates)."""
    text = os.fspath(value)
    if not isinstance(text, str):
        return value
    if "\x00" in text:
        raise GroundworkError(f"{what} {visible(text)} holds a NUL character, which no file name can")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        shown = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        raise GroundworkError(f"{what} {visible(shown)} is not valid UTF-8 (groundwork keeps paths as UTF-8 text); "
                              "rename it or give it through a symlink whose path is") from None
    return value
