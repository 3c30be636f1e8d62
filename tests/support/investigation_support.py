"""Helpers shared by the investigation tests (sql, query, views, export, docs, example)."""

from __future__ import annotations

from pathlib import Path

from cli_support import run_cli as gw  # noqa: F401  (re-exported: the investigation tests' CLI runner)


def build_corpus_warehouse(path: Path, corpus: Path) -> Path:
    """Ingest, lint and verify the archive ``corpus`` (runs/ + sources.yaml) into the warehouse ``path``."""
    import groundwork.ingest as ingest
    from groundwork.checks.lint import lint_warehouse
    from groundwork.checks.verify import verify_warehouse
    from groundwork.core.warehouse import connect

    con = connect(path)
    try:
        ingest.ingest_archive(con, corpus / "runs")
        lint_warehouse(con)
        verify_warehouse(con, corpus / "sources.yaml")
    finally:
        con.close()
    return path
