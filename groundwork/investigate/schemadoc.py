"""Generate docs/schema.md (every table, view and column) from the comments of the schema files
(sql/schema/).

    python -m groundwork.investigate.schemadoc           rewrite docs/schema.md
    python -m groundwork.investigate.schemadoc --check   exit 1 when docs/schema.md is out of date
"""

from __future__ import annotations

import sys
from pathlib import Path

from groundwork.core.engine import duckdb
from groundwork.core.paths import ROOT
from groundwork.core.warehouse import apply_schema

DOC_PATH = ROOT / "docs" / "schema.md"

_INTRO = """\
# Warehouse schema

Every table and view of the groundwork warehouse, with every column. Generated from the
comments in the schema files (`sql/schema/`, applied in file name order: tables, the derived
relations the rule files read in `30_derived/`, history and investigation views) by
`python -m groundwork.investigate.schemadoc` — do not edit by hand; a test fails when this file
and the schema drift apart.

Open a warehouse read-only with `groundwork sql "SELECT ..." --warehouse PATH` or
`duckdb -readonly PATH`. In DuckDB the same text is available as
`SELECT table_name, column_name, comment FROM duckdb_columns()`.
"""


def _cell(text: str | None) -> str:
    if not text:
        return "—"
    return " ".join(text.split()).replace("|", "\\|")


def relations(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str, str | None]]:
    """Return (kind, name, comment) for every table and view, in schema order (tables first)."""
    tables = con.execute("""
        SELECT 'table', table_name, comment FROM duckdb_tables()
        WHERE database_name = current_database() AND schema_name = 'main' AND NOT temporary
        ORDER BY table_oid""").fetchall()
    views = con.execute("""
        SELECT 'view', view_name, comment FROM duckdb_views()
        WHERE database_name = current_database() AND schema_name = 'main' AND NOT internal AND NOT temporary
        ORDER BY view_oid""").fetchall()
    return tables + views


def columns(con: duckdb.DuckDBPyConnection, name: str) -> list[tuple[str, str, str | None]]:
    """Return (column, type, comment) of table or view ``name`` in column order."""
    return con.execute("""
        SELECT column_name, data_type, comment FROM duckdb_columns()
        WHERE database_name = current_database() AND schema_name = 'main' AND table_name = ?
        ORDER BY column_index""", [name]).fetchall()


def render(con: duckdb.DuckDBPyConnection | None = None) -> str:
    """Return the text of docs/schema.md for the schema applied to ``con`` (a fresh one by default)."""
    if con is None:
        con = duckdb.connect()
        apply_schema(con)
    rels = relations(con)
    out = [_INTRO]
    for kind, title in (("table", "Tables"), ("view", "Views")):
        names = [n for k, n, _ in rels if k == kind]
        out.append(f"**{title}:** " + ", ".join(f"[`{n}`](#{n})" for n in names) + "\n")
    for kind, title in (("table", "Tables"), ("view", "Views")):
        out.append(f"## {title}\n")
        for k, name, comment in rels:
            if k != kind:
                continue
            out.append(f"### {name}\n")
            out.append(_cell(comment) + "\n")
            out.append("| Column | Type | Description |\n|---|---|---|")
            for col, ctype, ccomment in columns(con, name):
                out.append(f"| `{col}` | {_cell(ctype)} | {_cell(ccomment)} |")
            out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    """Rewrite docs/schema.md, or with --check report whether it is current (exit 1 if not)."""
    argv = sys.argv[1:] if argv is None else argv
    text = render()
    current = DOC_PATH.read_text(encoding="utf-8") if DOC_PATH.exists() else ""
    if "--check" in argv:
        if current != text:
            print(f"{DOC_PATH} is out of date; run: python -m groundwork.investigate.schemadoc", file=sys.stderr)
            return 1
        return 0
    Path(DOC_PATH).parent.mkdir(parents=True, exist_ok=True)
    DOC_PATH.write_text(text, encoding="utf-8")
    print(f"wrote {DOC_PATH}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
