"""The switch for groundwork's optional C fast paths (built by pip install when a C compiler is
available): GROUNDWORK_NATIVE=off (or 0 / no / false) makes every one of them fall back to its
pure-Python path, which gives the same results."""

from __future__ import annotations

import importlib
import os
import warnings

OFF = ("off", "0", "no", "false")


def enabled() -> bool:
    """False when GROUNDWORK_NATIVE switches the C fast paths off."""
    return os.environ.get("GROUNDWORK_NATIVE", "").strip().lower() not in OFF


def load(module: str, configure=None):
    """The C extension ``module`` (dotted name), or None when it is not built or switched off.

    ``configure(extension)`` hands it the constant tables defined in Python (column order, keys,
    ...), once. When it raises ValueError or TypeError, the C file is out of step with them: a
    warning says so and None is returned, so the Python path runs instead of wrong rows."""
    if not enabled():
        return None
    try:
        extension = importlib.import_module(module)
    except ImportError:
        return None
    if configure is not None:
        try:
            configure(extension)
        except (ValueError, TypeError) as exc:
            warnings.warn(f"{module} does not match this groundwork ({exc}); its Python path runs instead "
                          "(reinstall to rebuild it)", RuntimeWarning, stacklevel=2)
            return None
    return extension
