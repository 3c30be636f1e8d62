"""Ingest a workbench run archive into the DuckDB warehouse (complete, incremental, nothing lost).

Entry points:

* ``ingest_archive(con, runs_dir, *, progress=None) -> IngestResult`` — every run folder of a
  run store's ``runs/`` folder, plus ``invocations.jsonl`` and ``schemas/``;
* ``parsers(workers=None)`` — a context manager starting the parser processes early (pass it
  as ``ingest_archive(..., parsers=...)``);
* ``load_single(con, spans_path, envelope_path, request_path=None) -> str`` — one spans file and
  envelope from anywhere (drop-in lint); returns the run's key.

The names from ``ingest.load`` are imported on first use: parser processes import only
``ingest.work`` and what it needs, never DuckDB.
"""

from groundwork.ingest.parse import PARSER_VERSION

_FROM_LOAD = ("IngestResult", "ingest_archive", "load_single", "parsers", "current_issue_counts", "ingest_memory")
__all__ = [*_FROM_LOAD, "PARSER_VERSION"]


def __getattr__(name: str):
    if name in _FROM_LOAD:
        from groundwork.ingest import load
        return getattr(load, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
