"""`groundwork serve`: the read-only web app over the warehouse (groundwork/serve/, README.md#serve)."""

from __future__ import annotations

import typer

from groundwork.commands import options


def register(app: typer.Typer) -> None:
    @app.command("serve")
    def serve_command(
        warehouse: str = options.warehouse_option(", read, never written"),
        host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on (loopback by default)."),
        port: int = typer.Option(8080, "--port", "-p", min=0, max=65535,
                                  help="Port to listen on (0: any free port; the line printed says which)."),
        config: str = options.config_option(),
    ) -> None:
        """Browse the warehouse in a web browser: the runs, a run, a rule, and SQL (read-only).

        Filter, sort and page the runs; open a run's page; see a rule's failing runs and trend; run
        SQL or a saved query. No script, no asset from the network. Ctrl-C (or SIGTERM) stops it.

        Example: groundwork serve --warehouse warehouse.duckdb.example
        """
        from groundwork.serve.server import serve

        serve(options.warehouse(warehouse, options.settings(config)), host, port)
