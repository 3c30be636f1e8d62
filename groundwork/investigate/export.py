"""Export the warehouse as Parquet in a Hive layout that DuckDB, Spark and Trino read directly.

    DIR/manifest.json
    DIR/runs/completed_date=2026-09-25/data_0.parquet       run-keyed tables: by completion date
    DIR/lint_verdicts/lint_date=2026-11-30/data_0.parquet   check history: by the pass's date
    DIR/ingests/data_0.parquet                              everything else: one file

A table is run-keyed when it has an invocation_id column, history when it has a lint_id column
(lint_id wins: a verdict belongs to its pass). Rows whose date is unknown go to the partition
``__HIVE_DEFAULT_PARTITION__`` (read back as NULL). Timestamps are written as microsecond
UTC-adjusted Parquet timestamps (never nanoseconds, which Spark cannot read as timestamps) and
JSON columns as strings.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

from groundwork import __version__
from groundwork.core.engine import duckdb
from groundwork.core.errors import GroundworkError
from groundwork.investigate.schemadoc import columns, relations

MANIFEST = "manifest.json"
FORMAT = "groundwork-parquet-export"   # the manifest's "format"
EMPTY_PARTITION = "__HIVE_DEFAULT_PARTITION__"


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _sql_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Return the warehouse's base tables in schema order."""
    return [name for kind, name, _ in relations(con) if kind == "table"]


def _select(table: str, cols: list[tuple[str, str]]) -> tuple[str, str | None, list[tuple[str, str]]]:
    """Return (SELECT statement, partition column or None, exported columns with types)."""
    names = {c for c, _ in cols}
    items, out_cols = [], []
    for name, ctype in cols:
        expr = f"t.{_quote(name)}"
        if ctype == "TIMESTAMP":
            expr, ctype = f"CAST({expr} AS TIMESTAMPTZ)", "TIMESTAMP WITH TIME ZONE"
        elif ctype == "JSON":
            expr, ctype = f"CAST({expr} AS VARCHAR)", "VARCHAR"
        items.append(f"{expr} AS {_quote(name)}")
        out_cols.append((name, ctype))
    select = ", ".join(items)
    if table == "lints":
        return f"SELECT {select}, CAST(t.started_at AS DATE) AS lint_date FROM lints t", "lint_date", out_cols
    if "lint_id" in names:
        return (f"SELECT {select}, CAST(l.started_at AS DATE) AS lint_date FROM {_quote(table)} t "
                f"LEFT JOIN lints l ON l.lint_id = t.lint_id", "lint_date", out_cols)
    if table == "runs":
        return f"SELECT {select}, CAST(t.completed_at AS DATE) AS completed_date FROM runs t", "completed_date", out_cols
    if "invocation_id" in names:
        return (f"SELECT {select}, CAST(r.completed_at AS DATE) AS completed_date FROM {_quote(table)} t "
                f"LEFT JOIN runs r ON r.invocation_id = t.invocation_id", "completed_date", out_cols)
    return f"SELECT {select} FROM {_quote(table)} t", None, out_cols


def export_parquet(con: duckdb.DuckDBPyConnection, out_dir: str | Path, *, overwrite: bool = False) -> dict:
    """Write every table of the warehouse under ``out_dir`` as Parquet; return the manifest.

    Raises GroundworkError when ``out_dir`` holds files and ``overwrite`` is false.
    """
    out = Path(out_dir)
    try:
        str(out).encode("utf-8")
    except UnicodeEncodeError:
        raise GroundworkError(f"export directory {str(out)!r} is not a UTF-8 path, which DuckDB cannot write to") from None
    if out.exists() and not out.is_dir():
        raise GroundworkError(f"export target {out} is a file, not a directory")
    if out.exists() and any(out.iterdir()):
        if not overwrite:
            raise GroundworkError(f"export directory {out} is not empty; choose another or pass --overwrite")
        if not is_export(out):
            # --overwrite replaces a table's folder: never one of another kind (a run archive's runs/)
            raise GroundworkError(f"export directory {out} holds no earlier groundwork export (no {MANIFEST} of one); "
                                  "--overwrite replaces an export only: choose another directory")
    created = not out.exists()
    try:
        out.mkdir(parents=True, exist_ok=True)
        return _export(con, out)
    except (OSError, duckdb.Error) as exc:
        if created:   # nothing half-written left behind
            shutil.rmtree(out, ignore_errors=True)
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc).splitlines()[0]
        raise GroundworkError(f"cannot write the export to {out}: {why}") from None


def is_export(folder: Path) -> bool:
    """Whether ``folder`` holds a groundwork export: its manifest, written first (with no table
    while the export runs) and again once every table is written."""
    try:
        doc = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(doc, dict) and doc.get("format") == FORMAT


def _export(con: duckdb.DuckDBPyConnection, out: Path) -> dict:
    con.execute("SET TimeZone = 'UTC'")  # TIMESTAMP -> TIMESTAMPTZ must read the stored values as UTC
    manifest = {
        "format": FORMAT,
        "tool_version": __version__,
        "schema_version": _schema_version(con),
        "exported_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "layout": "hive",
        "tables": {},
    }
    # First, with no table: the folder is an export's from now on (an interrupted one too, which
    # the next --overwrite may then replace).
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    for table in tables(con):
        select, partition, cols = _select(table, [(c, t) for c, t, _ in columns(con, table)])
        target = out / table
        if target.exists():  # --overwrite: replace the table's files, never mix two exports
            shutil.rmtree(target)
        rows = con.execute(f"SELECT count(*) FROM {_quote(table)}").fetchone()[0]
        if partition and rows:
            options = f"FORMAT parquet, PARTITION_BY ({partition})"
            con.execute(f"COPY ({select}) TO {_sql_string(str(target))} ({options})")
        else:
            # An empty table still gets one (empty) file, so every reader finds its columns.
            folder = target / f"{partition}={EMPTY_PARTITION}" if partition else target
            folder.mkdir(parents=True, exist_ok=True)
            names = ", ".join(_quote(n) for n, _ in cols)
            con.execute(f"COPY (SELECT {names} FROM ({select})) TO {_sql_string(str(folder / 'data_0.parquet'))} (FORMAT parquet)")
        manifest["tables"][table] = {
            "path": table,
            "rows": rows,
            "partition_by": partition,
            "columns": [{"name": n, "type": t} for n, t in cols]
                       + ([{"name": partition, "type": "DATE", "partition": True}] if partition else []),
        }
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest


def _schema_version(con: duckdb.DuckDBPyConnection) -> str | None:
    row = con.execute("SELECT value FROM schema_info WHERE key = 'schema_version'").fetchone()
    return row[0] if row else None
