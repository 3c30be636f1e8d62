"""Shared pytest fixtures and hypothesis profiles (keep small; others may add fixtures)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

FIXTURES = Path(__file__).parent / "fixtures"
CORPUS = FIXTURES / "corpus"

# Hypothesis profiles: `ci` (default) keeps the property tests well under a minute;
# `thorough` is for local soak runs: GROUNDWORK_HYPOTHESIS=thorough pytest tests/test_property_*.py
_SUPPRESS = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture]
settings.register_profile("ci", max_examples=20, deadline=None, suppress_health_check=_SUPPRESS,
                          derandomize=True, print_blob=True)
settings.register_profile("dev", max_examples=40, deadline=None, suppress_health_check=_SUPPRESS,
                          print_blob=True)
settings.register_profile("thorough", max_examples=600, deadline=None, suppress_health_check=_SUPPRESS,
                          print_blob=True)
settings.load_profile(os.environ.get("GROUNDWORK_HYPOTHESIS", "ci"))


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    """tests/fixtures/corpus: real workbench runs with the workbench's own verdicts."""
    return CORPUS
