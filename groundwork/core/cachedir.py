"""groundwork's per-user cache folders (compiled templates, the empty-warehouse template).

A cache lives in ``$XDG_CACHE_HOME/groundwork/<name>`` (else ``~/.cache/groundwork/<name>``), or
in the folder an environment variable names; the value ``off`` switches it off. A folder is used
only when it belongs to this user and nobody else can write to it (what is cached is loaded
back); otherwise there is no cache, never an error.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


def private_dir(path: Path) -> bool:
    """Create ``path`` (mode 0700) when missing; True when it is a directory of this user that
    nobody else can write."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o022


def cache_dir(env: str, name: str, directory: str | os.PathLike | None = None) -> Path | None:
    """The cache folder ``name`` (``directory`` if given, else $``env``, else the default), or
    None when it is switched off ("off") or cannot be used."""
    if directory is None:
        directory = os.environ.get(env)
        if directory is None:
            xdg, home = os.environ.get("XDG_CACHE_HOME", ""), os.path.expanduser("~")
            if os.path.isabs(xdg):
                base = xdg
            elif os.path.isabs(home):
                base = os.path.join(home, ".cache")
            else:  # no home directory known: no cache (never one below the working directory)
                return None
            directory = os.path.join(base, "groundwork", name)
    if not str(directory) or str(directory).lower() == "off":
        return None
    path = Path(directory)
    if not hasattr(os, "getuid") or not private_dir(path):
        return None
    return path
