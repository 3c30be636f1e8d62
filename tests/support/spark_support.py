"""The Spark tests' one precondition: pyspark 4.1+ (recursive CTEs) and a Java runtime. Missing,
the test skips — or fails where Spark is required (CI sets GROUNDWORK_REQUIRE_SPARK=1)."""

from __future__ import annotations

import os
import shutil

import pytest


def require_spark() -> None:
    reason = None
    try:
        import pyspark
    except ImportError:
        reason = "pyspark is not installed (pip install -e '.[test,spark]')"
    else:
        if tuple(int(p) for p in pyspark.__version__.split(".")[:2]) < (4, 1):
            reason = f"pyspark {pyspark.__version__} has no recursive CTEs (4.1 or newer needed)"
        elif shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
            reason = "no Java runtime for Spark (java not on PATH, JAVA_HOME unset)"
    if reason is not None:
        if os.environ.get("GROUNDWORK_REQUIRE_SPARK") == "1":
            pytest.fail(f"GROUNDWORK_REQUIRE_SPARK=1 but {reason}")
        pytest.skip(reason)
