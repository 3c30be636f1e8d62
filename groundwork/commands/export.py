"""`groundwork export --parquet DIR`: the warehouse as Parquet, Hive-partitioned, with a manifest."""

from __future__ import annotations

import typer

from groundwork.commands import options
from groundwork.core.errors import GroundworkError
from groundwork.investigate.export import export_parquet
from groundwork.core.warehouse import connect


def register(app: typer.Typer) -> None:
    @app.command("export")
    def export_command(
        parquet: str = typer.Option(None, "--parquet", help="Directory to write (Hive layout: runs/completed_date=YYYY-MM-DD/...)."),
        warehouse: str = options.warehouse_option(", opened read-only"),
        overwrite: bool = typer.Option(False, "--overwrite", help="Write into the directory of an earlier export, replacing its tables' files (never a directory of another kind)."),
        config: str = options.config_option(),
    ) -> None:
        """Export every table as Parquet for DuckDB, Spark or Trino; see DIR/manifest.json."""
        warehouse = options.warehouse(warehouse, options.settings(config))
        if not parquet:
            raise GroundworkError("name the target directory: groundwork export --parquet DIR")
        con = connect(warehouse, read_only=True)
        try:
            manifest = export_parquet(con, parquet, overwrite=overwrite)
        finally:
            con.close()
        total = sum(t["rows"] for t in manifest["tables"].values())
        print(f"exported {len(manifest['tables'])} tables ({total} rows) to {parquet}; manifest: {parquet}/manifest.json")
