"""`groundwork query`: run a saved investigation from sql/queries/ with typed `--param k=v` values."""

from __future__ import annotations

import sys

import typer

from groundwork.commands import options
from groundwork.investigate import queries
from groundwork.investigate.formats import Format, write
from groundwork.investigate.session import ALLOW_FILES_FLAG, ALLOW_FILES_HELP, SqlError, open_session, run


def print_list() -> None:
    """Print every saved query: name, title, description and parameters."""
    for q in queries.load().values():
        print(f"{q.name} — {q.title}")
        if q.description:
            print(f"    {q.description}")
        for p in q.params:
            need = "required" if p.required else f"default {p.default}" if p.default is not None else "optional"
            print(f"    --param {p.name}=<{p.type}>  ({need}) {p.description}".rstrip())


def register(app: typer.Typer) -> None:
    @app.command("query")
    def query_command(
        name: str = typer.Argument(None, help="Saved query name (file stem in sql/queries/)."),
        param: list[str] = typer.Option([], "--param", "-p", help="NAME=VALUE, typed by the query's header; repeatable."),
        list_: bool = typer.Option(False, "--list", help="List the saved queries and their parameters."),
        show: bool = typer.Option(False, "--show", help="Print the query's SQL instead of running it."),
        warehouse: str = options.warehouse_option(", opened read-only"),
        fmt: Format = typer.Option(Format.table, "--format", "-f", help="Output format."),
        max_width: int = typer.Option(40, "--max-width", min=1, help="table format: cut cells longer than this."),
        allow_files: bool = typer.Option(False, ALLOW_FILES_FLAG, help=ALLOW_FILES_HELP),
        config: str = options.config_option(),
    ) -> None:
        """Run a saved investigation, e.g. groundwork query runs_citing_source --param source_id=src:a"""
        warehouse = options.warehouse(warehouse, options.settings(config))
        if list_:
            print_list()
            return
        if not name:
            raise queries.QueryError("name a saved query, or use --list")
        saved = queries.get(name)
        values = queries.bind(saved, queries.parse_assignments(param))
        if show:
            sys.stdout.write(saved.sql)
            return
        con = open_session(warehouse, allow_files=allow_files)
        try:
            write(run(con, saved.sql, values), fmt, sys.stdout, max_width)
        except SqlError as exc:  # the position is inside the query file: name it
            raise SqlError(f"{saved.path.name}: {exc}") from None
        finally:
            con.close()
