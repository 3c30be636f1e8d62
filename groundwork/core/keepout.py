"""Keep pandas out of a process that never uses it.

pyarrow imports pandas, when it is installed (the ``spark`` extra installs it), the first time it
builds an array from a Python list (to ask whether the list is a pandas object): 0.2-0.3 s of
imports, more than a drop-in lint of one run costs, and a tenth of a nightly over an unchanged
archive. No command but `groundwork spark` uses pandas, so the process entry
(``groundwork.cli.script``) refuses it to the others: pyarrow and DuckDB then behave as where
pandas is not installed. Only a whole process may do this (it changes what pyarrow believes
about pandas until the process ends); code called in-process, tests included, never does.
"""

from __future__ import annotations

import sys


class _RefusePandas:
    """A meta path finder (duck-typed: importing importlib.abc costs ~10 ms) that makes
    ``import pandas`` fail as if pandas were not installed."""

    def find_spec(self, name, path=None, target=None):
        if name == "pandas" or name.startswith("pandas."):
            raise ModuleNotFoundError(f"No module named {name!r} (groundwork keeps it out of this process)",
                                      name=name)
        return None


def keep_pandas_out() -> None:
    """From now on ``import pandas`` fails in this process (unless pandas is imported already)."""
    if "pandas" in sys.modules or any(isinstance(f, _RefusePandas) for f in sys.meta_path):
        return
    sys.meta_path.insert(0, _RefusePandas())
