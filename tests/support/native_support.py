"""The optional C extensions in tests.

A test module of a C fast path calls ``built(module)`` at import: the module is skipped when the
extension is not built (no C compiler at install time), unless GROUNDWORK_REQUIRE_NATIVE=1 (CI
sets it), where its absence fails. Under GROUNDWORK_NATIVE=off (CI's run of the ingest and rule
tests on the Python path alone) the C paths are switched off and their tests skip.
"""

from __future__ import annotations

import importlib
import os

import pytest

from groundwork.core import native


def built(module: str):
    """The C extension ``module`` (dotted name); the test skips under GROUNDWORK_NATIVE=off."""
    if not native.enabled():
        pytest.skip("GROUNDWORK_NATIVE=off: the C paths are switched off", allow_module_level=True)
    try:
        return importlib.import_module(module)
    except ImportError:
        reason = f"{module} is not built (pip install -e . with a C compiler)"
        if os.environ.get("GROUNDWORK_REQUIRE_NATIVE") == "1":
            pytest.fail(f"GROUNDWORK_REQUIRE_NATIVE=1 but {reason}", pytrace=False)
        pytest.skip(reason, allow_module_level=True)
