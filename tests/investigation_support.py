"""Helpers shared by the investigation tests (sql, query, views, export, docs, example)."""

from __future__ import annotations

import sys
from pathlib import Path

from groundwork.cli import main


def gw(monkeypatch, capsys, *args: str) -> tuple[int, str, str]:
    """Run the groundwork CLI in-process; return (exit code, stdout, stderr)."""
    monkeypatch.setattr(sys, "argv", ["groundwork", *args])
    code = 0
    try:
        main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    out, err = capsys.readouterr()
    return code, out, err


def build_corpus_warehouse(path: Path, corpus: Path) -> Path:
    """Ingest, lint and verify the archive ``corpus`` (runs/ + sources.yaml) into the warehouse ``path``."""
    import ingest
    from groundwork.lint import lint_warehouse
    from groundwork.verify import verify_warehouse
    from groundwork.warehouse import connect

    con = connect(path)
    try:
        ingest.ingest_archive(con, corpus / "runs")
        lint_warehouse(con)
        verify_warehouse(con, corpus / "sources.yaml")
    finally:
        con.close()
    return path
