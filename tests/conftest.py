"""Shared pytest fixtures and hypothesis profiles (keep small; others may add fixtures)."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

FIXTURES = Path(__file__).parent / "fixtures"
CORPUS = FIXTURES / "corpus"

# Hypothesis profiles: `ci` (default) keeps the property tests well under a minute;
# `thorough` is for local soak runs: GROUNDWORK_HYPOTHESIS=thorough pytest tests/property
_SUPPRESS = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture]
settings.register_profile("ci", max_examples=20, deadline=None, suppress_health_check=_SUPPRESS,
                          derandomize=True, print_blob=True)
settings.register_profile("dev", max_examples=40, deadline=None, suppress_health_check=_SUPPRESS,
                          print_blob=True)
settings.register_profile("thorough", max_examples=600, deadline=None, suppress_health_check=_SUPPRESS,
                          print_blob=True)
settings.load_profile(os.environ.get("GROUNDWORK_HYPOTHESIS", "ci"))

# New warehouse files start as copies of a cached empty one (groundwork.core.warehouse): the tests
# (and the CLI processes they start) keep that cache in a folder of their own, removed at exit.
if "GROUNDWORK_SCHEMA_CACHE" not in os.environ:
    _schema_cache = tempfile.mkdtemp(prefix="gw-schema-cache-")
    os.environ["GROUNDWORK_SCHEMA_CACHE"] = _schema_cache
    atexit.register(shutil.rmtree, _schema_cache, True)


# An open waits for another process's lock (groundwork.core.warehouse.lock_wait, 10 s by default);
# the tests that hold a lock on purpose (and the CLI processes they start) wait half a second.
os.environ.setdefault("GROUNDWORK_LOCK_WAIT", "0.5")

@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    """tests/fixtures/corpus: real workbench runs with the workbench's own verdicts."""
    return CORPUS
