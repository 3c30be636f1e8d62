"""The folder an ingest is given must be a run store's ``runs/`` folder: checked before anything
is opened or created (``groundwork ingest`` and ``groundwork nightly`` call it before the
warehouse, ``ingest_archive`` again), so that a job that cannot start leaves nothing behind."""

from __future__ import annotations

import os
from pathlib import Path

from groundwork.core.errors import GroundworkError
from groundwork.core.pathtext import checked_path
from groundwork.ingest.parse import ENVELOPE, GROUNDING, REQUEST, SOURCES, SPANS

RUNS = "runs"  # the run store's folder of run folders, inside its root (beside snapshots/, sources.yaml)
_RUN_FILES = (SPANS, ENVELOPE, REQUEST, GROUNDING, SOURCES)


def _holds_run_files(folder: str) -> bool:
    return any(os.path.lexists(os.path.join(folder, name)) for name in _RUN_FILES)


def looks_like_store_root(runs_dir: str | os.PathLike) -> bool:
    """True when ``runs_dir`` is a run store's root rather than its runs/ folder: it holds a
    folder ``runs`` that is no run folder (none of a run's files), and no other folder of it is
    a run folder either (a runs/ folder that happens to hold a stray ``runs`` folder is not)."""
    root = os.fspath(runs_dir)
    inner = os.path.join(root, RUNS)
    if not os.path.isdir(inner) or _holds_run_files(inner):
        return False
    try:
        with os.scandir(root) as entries:
            for entry in entries:
                if entry.name != RUNS and entry.is_dir() and _holds_run_files(entry.path):
                    return False
    except OSError:
        return False
    return True


def check_runs_dir(runs_dir: str | os.PathLike) -> Path:
    """``runs_dir`` as a Path, or a one-line GroundworkError when it cannot be ingested: missing,
    not a directory, unreadable, or a run store's root (then: did you mean ROOT/runs?)."""
    root = Path(checked_path(runs_dir, "RUNS_DIR"))
    if not root.exists():
        raise GroundworkError(f"{runs_dir} does not exist (expected the run store's runs/ folder)")
    if not root.is_dir():
        raise GroundworkError(f"{runs_dir} is not a directory (expected the run store's runs/ folder)")
    try:
        os.scandir(root).close()  # readable; not listed (a quick scan lists no more than it must)
    except OSError as exc:
        raise GroundworkError(f"cannot list {runs_dir}: {exc.strerror or exc}") from None
    if looks_like_store_root(root):
        raise GroundworkError(f"{runs_dir} is a run store's root, not its runs/ folder: "
                              f"did you mean {os.path.join(os.fspath(runs_dir), RUNS)}?")
    return root
