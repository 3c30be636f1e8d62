"""Build warehouse.duckdb.example from the bundled example archive, and tell whether it is stale.

The example is built by the real pipeline (ingest, lint, verify) from examples/archive. Paths
under the repository are stored relative to it, and the file is compacted (16 KiB blocks) so
that it stays small enough to commit. Staleness is judged on content, not bytes: the columns
that record when or on which machine it was built are left out of the comparison (VOLATILE).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import duckdb

from groundwork import ingest
from groundwork.checks.lint import lint_warehouse
from groundwork.checks.verify import verify_warehouse
from groundwork.core.errors import GroundworkError
from groundwork.core.paths import ROOT
from groundwork.core.warehouse import STORAGE_VERSION, connect

EXAMPLE_PATH = ROOT / "warehouse.duckdb.example"
ARCHIVE_DIR = ROOT / "examples" / "archive"
BLOCK_SIZE = 16384
PATH_COLUMNS = {"ingests": ("runs_dir",), "lints": ("sources_path",), "source_configs": ("path",),
                "source_refs": ("file",)}
VOLATILE = {
    "ingests": ("started_at", "finished_at", "tool_version", "dir_mtime_ns"),  # runs/ mtime: a checkout sets it anew
    "lints": ("started_at", "finished_at", "ruleset_hash", "tool_version"),
    "run_files": ("mtime_ns",),
    "archive_files": ("mtime_ns",),
    "runs": ("files_fingerprint",),  # covers mtimes, which a fresh checkout sets anew
    "source_configs": ("loaded_at",),
    "source_copies": ("loaded_at",),
    "nightlies": ("started_at", "finished_at"),
}


def build(out: Path = EXAMPLE_PATH, archive: Path = ARCHIVE_DIR) -> Path:
    """Ingest, lint and verify ``archive`` into a fresh compact warehouse at ``out`` (replaced atomically)."""
    out, archive = Path(out).resolve(), Path(archive).resolve()
    if out.is_dir():
        raise GroundworkError(f"--out {out} is a directory; give the file to write")
    if not out.parent.is_dir():
        raise GroundworkError(f"the folder of --out {out} does not exist")
    if out.exists() and out != Path(EXAMPLE_PATH).resolve():
        # only the bundled example is replaced: another file may be anything (a warehouse's history)
        raise GroundworkError(f"--out {out} exists; example build writes a new file: give another name or remove it")
    con = connect(":memory:", comments=True)  # copied into the example file, which documents itself
    try:
        ingest.ingest_archive(con, archive / "runs")
        lint_warehouse(con)
        verify_warehouse(con, archive / "sources.yaml")
        _relative_paths(con, archive)
        try:
            with tempfile.TemporaryDirectory(dir=out.parent, prefix=".example-") as tmp:
                compact = Path(tmp) / "compact.duckdb"
                _compact(con, compact)
                os.replace(compact, out)
        except (OSError, duckdb.IOException) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc).splitlines()[0]
            raise GroundworkError(f"cannot write {out}: {why}") from None
    finally:
        con.close()
    return out


def _relative_paths(con: duckdb.DuckDBPyConnection, archive: Path) -> None:
    """Store paths under the repository (or the archive) relative to it, not as this machine's paths."""
    base = ROOT if archive.is_relative_to(ROOT) else archive.parent
    prefix = str(base) + os.sep
    for table, cols in PATH_COLUMNS.items():
        for col in cols:
            con.execute(f'UPDATE "{table}" SET "{col}" = substr("{col}", ?) WHERE starts_with("{col}", ?)',
                        [len(prefix) + 1, prefix])


def _compact(con: duckdb.DuckDBPyConnection, dst: Path) -> None:
    """Copy the database of ``con`` into a new file with small blocks, in the storage format of
    every warehouse groundwork creates (STORAGE_VERSION: the registry's DuckDB shell opens it)."""
    source = con.execute("SELECT current_database()").fetchone()[0]
    con.execute(f"ATTACH $dst AS example_out (BLOCK_SIZE {BLOCK_SIZE}, STORAGE_VERSION '{STORAGE_VERSION}')", {"dst": str(dst)})
    try:
        con.execute(f'COPY FROM DATABASE "{source}" TO example_out')
        con.execute("CHECKPOINT example_out")
    finally:
        con.execute("DETACH example_out")


def _content(con: duckdb.DuckDBPyConnection) -> dict[str, object]:
    """Everything a reader sees, minus the VOLATILE columns: schema, comments, views, rows."""
    out: dict[str, object] = {
        "columns": con.execute("""SELECT table_name, column_name, data_type, comment FROM duckdb_columns()
                                  WHERE schema_name = 'main' AND database_name = current_database() ORDER BY ALL""").fetchall(),
        "views": con.execute("""SELECT view_name, sql, comment FROM duckdb_views()
                                WHERE NOT internal AND database_name = current_database() ORDER BY ALL""").fetchall(),
    }
    tables = [r[0] for r in con.execute("""SELECT table_name FROM duckdb_tables()
                                           WHERE database_name = current_database() ORDER BY 1""").fetchall()]
    for table in tables:
        cols = [r[0] for r in con.execute("""SELECT column_name FROM duckdb_columns() WHERE table_name = ?
                                             AND database_name = current_database() ORDER BY column_index""", [table]).fetchall()
                if r[0] not in VOLATILE.get(table, ())]
        select = ", ".join(f'CAST("{c}" AS VARCHAR)' for c in cols)
        out[f"table {table}"] = con.execute(f'SELECT {select} FROM "{table}" ORDER BY ALL').fetchall()
    return out


def differences(a: Path, b: Path) -> list[str]:
    """Return what differs between the warehouses ``a`` and ``b`` (empty when they are equivalent)."""
    left, right = (duckdb.connect(str(p), read_only=True) for p in (a, b))
    try:
        ca, cb = _content(left), _content(right)
    finally:
        left.close()
        right.close()
    return [key for key in sorted(set(ca) | set(cb)) if ca.get(key) != cb.get(key)]


def stale(example: Path = EXAMPLE_PATH, archive: Path = ARCHIVE_DIR) -> list[str]:
    """Rebuild into a temporary file and return what differs from ``example`` (empty when current)."""
    if not Path(example).exists():
        return [f"{example} does not exist"]
    with tempfile.TemporaryDirectory() as tmp:
        fresh = build(Path(tmp) / "fresh.duckdb", archive)
        return differences(Path(example), fresh)
