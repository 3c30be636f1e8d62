"""`groundwork sql`: run SQL on a read-only connection to the warehouse and print the result."""

from __future__ import annotations

import sys

import typer

from groundwork.investigate.formats import Format, write
from groundwork.investigate.session import run
from groundwork.core.warehouse import DEFAULT_PATH, connect


def register(app: typer.Typer) -> None:
    @app.command("sql")
    def sql_command(
        query: str = typer.Argument(..., help="SQL to run (several statements: the last one's result is shown); - reads stdin."),
        warehouse: str = typer.Option(DEFAULT_PATH, "--warehouse", "-w", help="Warehouse file (opened read-only)."),
        fmt: Format = typer.Option(Format.table, "--format", "-f", help="Output format."),
        max_width: int = typer.Option(40, "--max-width", help="table format: cut cells longer than this."),
    ) -> None:
        """Run ad-hoc SQL on the warehouse, read-only.

        Example: groundwork sql "SELECT agent_id, count(*) FROM run_summary GROUP BY ALL" --format markdown
        """
        if query == "-":
            query = sys.stdin.read()
        con = connect(warehouse, read_only=True)
        try:
            write(run(con, query), fmt, sys.stdout, max_width)
        finally:
            con.close()
