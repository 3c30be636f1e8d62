"""`groundwork sql`: run SQL on a read-only connection to the warehouse, confined to it
(investigate.session.open_session), and print the result."""

from __future__ import annotations

import sys

import typer

from groundwork.commands import options
from groundwork.investigate.formats import Format, write
from groundwork.investigate.session import ALLOW_FILES_FLAG, ALLOW_FILES_HELP, open_session, run


def register(app: typer.Typer) -> None:
    @app.command("sql")
    def sql_command(
        query: str = typer.Argument(..., help="SQL to run (several statements: the last one's result is shown); - reads stdin."),
        warehouse: str = options.warehouse_option(", opened read-only"),
        fmt: Format = typer.Option(Format.table, "--format", "-f", help="Output format."),
        max_width: int = typer.Option(40, "--max-width", min=1, help="table format: cut cells longer than this."),
        allow_files: bool = typer.Option(False, ALLOW_FILES_FLAG, help=ALLOW_FILES_HELP),
        config: str = options.config_option(),
    ) -> None:
        """Run ad-hoc SQL on the warehouse, read-only and confined to it (no other file, extension or
        setting unless --allow-files).

        Example: groundwork sql "SELECT agent_id, count(*) FROM run_summary GROUP BY ALL" --format markdown
        """
        warehouse = options.warehouse(warehouse, options.settings(config))
        if query == "-":
            query = sys.stdin.read()
        con = open_session(warehouse, allow_files=allow_files)
        try:
            write(run(con, query), fmt, sys.stdout, max_width)
        finally:
            con.close()
