"""The folder a command writes its files into (--out): made ready before the job, so that a
folder that cannot be written is one line before any work, not an error after it."""

from __future__ import annotations

import os
from pathlib import Path

from groundwork.core.errors import GroundworkError
from groundwork.core.pathtext import checked_path


def make_dirs(folder: Path) -> list[Path]:
    """Create ``folder`` and its missing parents; return the folders created, deepest first."""
    missing, p = [], folder
    while not p.exists() and p != p.parent:
        missing.append(p)
        p = p.parent
    folder.mkdir(parents=True, exist_ok=True)
    return missing


def ready_dir(out: Path, what: str = "output directory") -> list[Path]:
    """Make ``out`` (given as --out) an existing, writable folder; return the folders created,
    deepest first. GroundworkError, in one line, when it cannot be."""
    checked_path(out, "--out")
    if out.exists() and not out.is_dir():
        raise GroundworkError(f"--out {out} exists and is not a directory")
    try:
        created = make_dirs(out)
    except OSError as exc:
        raise GroundworkError(f"cannot create the {what} {out}: {exc.strerror or exc}") from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise GroundworkError(f"the {what} {out} is not writable")
    return created


def write_bytes(path: Path, data: bytes) -> None:
    """Write one output file (its folder made first); GroundworkError, in one line, when it
    cannot be (a disk full, a name taken by a file)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    except OSError as exc:
        raise GroundworkError(f"cannot write {path}: {exc.strerror or exc}") from None
