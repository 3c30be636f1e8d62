"""The optional C extensions in tests.

A test module of a C fast path calls ``built(module)`` at import: the module is skipped when the
extension is not built (no C compiler at install time), unless GROUNDWORK_REQUIRE_NATIVE=1 (CI
sets it), where its absence fails.
"""

from __future__ import annotations

import importlib
import os

import pytest


def built(module: str):
    """The C extension ``module`` (dotted name), imported whatever GROUNDWORK_NATIVE says."""
    try:
        return importlib.import_module(module)
    except ImportError:
        reason = f"{module} is not built (pip install -e . with a C compiler)"
        if os.environ.get("GROUNDWORK_REQUIRE_NATIVE") == "1":
            pytest.fail(f"GROUNDWORK_REQUIRE_NATIVE=1 but {reason}", pytrace=False)
        pytest.skip(reason, allow_module_level=True)
