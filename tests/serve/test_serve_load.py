"""A bounded load on `groundwork serve` over loopback (benchmarks/serve_load.py): 200 requests
from 8 concurrent clients over every kind of page, with no error and a clean stop. Its speed is
measured in BENCHMARKS.md, not asserted here."""

from __future__ import annotations

import importlib.util

from serve_support import EXAMPLE_WAREHOUSE, ROOT


def _serve_load():
    spec = importlib.util.spec_from_file_location("serve_load", ROOT / "benchmarks" / "serve_load.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_200_requests_from_8_clients_without_an_error():
    result = _serve_load().measure(EXAMPLE_WAREHOUSE, requests=200, concurrency=8)
    assert result["errors"] == 0, result["error_examples"]
    assert result["requests"] == 200
    assert len(result["pages"]) == 8 and any(p.startswith("/runs/") for p in result["pages"])
    assert result["exit_status"] == 0
