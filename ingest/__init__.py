"""Ingest a workbench run archive into the DuckDB warehouse (complete, incremental, nothing lost).

Entry points:

* ``ingest_archive(con, runs_dir, *, progress=None) -> IngestResult`` — every run folder of a
  run store's ``runs/`` folder, plus ``invocations.jsonl`` and ``schemas/``;
* ``parsers(workers=None)`` — a context manager starting the parser processes early (pass it
  as ``ingest_archive(..., parsers=...)``);
* ``load_single(con, spans_path, envelope_path, request_path=None) -> str`` — one spans file and
  envelope from anywhere (drop-in lint); returns the run's key.
"""

from .load import IngestResult, current_issue_counts, ingest_archive, load_single, parsers
from .parse import PARSER_VERSION

__all__ = ["IngestResult", "ingest_archive", "load_single", "parsers", "current_issue_counts", "PARSER_VERSION"]
