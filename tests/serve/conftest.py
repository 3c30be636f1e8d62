"""Fixtures of the `groundwork serve` tests."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from groundwork.serve.app import create_app
from serve_support import EXAMPLE_WAREHOUSE, hostile_warehouse, nightly_warehouse


@pytest.fixture(scope="session")
def nightly(tmp_path_factory):
    """(warehouse, reports folder) of the example archive after one nightly."""
    return nightly_warehouse(tmp_path_factory.mktemp("serve-nightly"))


@pytest.fixture(scope="module")
def example_client():
    with TestClient(create_app(EXAMPLE_WAREHOUSE, time_limit=2.0, row_limit=50)) as client:
        yield client


@pytest.fixture(scope="module")
def nightly_client(nightly):
    with TestClient(create_app(nightly[0])) as client:
        yield client


@pytest.fixture(scope="module")
def hostile_client(tmp_path_factory):
    path = hostile_warehouse(tmp_path_factory.mktemp("serve-hostile") / "w.duckdb")
    with TestClient(create_app(path)) as client:
        yield client
