"""The switch for groundwork's optional C fast paths (built by pip install when a C compiler is
available): GROUNDWORK_NATIVE=off (or 0 / no / false) makes every one of them fall back to its
pure-Python path, which gives the same results."""

from __future__ import annotations

import importlib
import os

OFF = ("off", "0", "no", "false")


def enabled() -> bool:
    """False when GROUNDWORK_NATIVE switches the C fast paths off."""
    return os.environ.get("GROUNDWORK_NATIVE", "").strip().lower() not in OFF


def load(module: str):
    """The C extension ``module`` (dotted name), or None when it is not built or switched off."""
    if not enabled():
        return None
    try:
        return importlib.import_module(module)
    except ImportError:
        return None
