"""The inputs of `groundwork spark run`, checked on the driver before pyspark is imported or Spark
starts: a wrong path is reported as itself whether or not pyspark is installed."""

from __future__ import annotations

import os
from pathlib import Path

from groundwork.core.errors import GroundworkError


def check_inputs(runs: str, sources, texts, reports) -> None:
    """Fail in one line, before Spark starts, on inputs the job cannot use."""
    if sources is not None and not Path(sources).is_file():
        raise GroundworkError(f"sources file {sources} does not exist (it is read on the driver)")
    for what, folder in (("--texts", texts), ("--reports", reports)):
        if folder is not None and Path(folder).exists() and not Path(folder).is_dir():
            raise GroundworkError(f"{what} {folder} exists and is not a directory")
    if "://" not in runs and not os.path.isdir(runs):
        raise GroundworkError(f"{runs} is not a directory (expected the run store's runs/ folder)")
