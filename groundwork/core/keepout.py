"""Keep pandas and numpy out of a process that never uses them.

pyarrow imports pandas, when it is installed (the ``spark`` extra installs it), the first time it
builds an array from a Python list (to ask whether the list is a pandas object): 0.2-0.3 s of
imports, more than a drop-in lint of one run costs, and a tenth of a nightly over an unchanged
archive. And ``import pyarrow`` imports numpy, when it is installed (pandas needs it), although
no groundwork code outside `groundwork spark` uses numpy: with it, importing pyarrow and
pyarrow.compute took 0.14-0.16 s on the benchmark machine, without it 0.07 s, in every command
that reads Arrow (the nightly, ingest, lint of a warehouse). pyarrow and DuckDB work without
either (pyarrow needs numpy only to convert to and from numpy arrays, which groundwork never
asks for). No command but `groundwork spark` uses them, so the process entry
(``groundwork.cli.script``) refuses them to the others: pyarrow and DuckDB then behave as where
they are not installed. Only a whole process may do this (it changes what pyarrow believes about
them until the process ends); code called in-process, tests included, never does.
"""

from __future__ import annotations

import sys

KEPT_OUT = ("pandas", "numpy")  # top-level packages ``keep_out`` refuses


class _Refuse:
    """A meta path finder (duck-typed: importing importlib.abc costs ~10 ms) that makes importing
    the packages of KEPT_OUT (and their submodules) fail as if they were not installed."""

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in KEPT_OUT:
            raise ModuleNotFoundError(f"No module named {name!r} (groundwork keeps it out of this process)",
                                      name=name)
        return None


def keep_out() -> None:
    """From now on importing pandas or numpy fails in this process (unless one of them is
    imported already: then nothing is refused, as pandas without its numpy cannot work)."""
    if any(p in sys.modules for p in KEPT_OUT) or any(isinstance(f, _Refuse) for f in sys.meta_path):
        return
    sys.meta_path.insert(0, _Refuse())
