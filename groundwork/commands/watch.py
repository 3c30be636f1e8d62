"""`groundwork watch`: lint and verify each run as it lands (README.md#watch).

    groundwork watch RUNS_DIR [--warehouse W] [--sources FILE] [--metrics FILE] [--poll SECONDS] [--settle SECONDS]

Prints one line per failing run. Runs until SIGTERM or SIGINT, then exits 0; 2 (one line on
stderr) when the job cannot be done.
"""

from __future__ import annotations

from typing import Optional

import typer

from groundwork.commands import options


def register(app: typer.Typer) -> None:
    @app.command("watch")
    def watch_command(
        runs_dir: str = typer.Argument(..., metavar="RUNS_DIR", help="Archive root: the run store's runs/ folder."),
        warehouse: str = options.warehouse_option(", created if missing"),
        sources: Optional[str] = options.sources_option("sources.yaml for the source check (S1/S2) (else $GROUNDWORK_SOURCES, then groundwork.toml's sources); without one the source check is skipped."),
        metrics: Optional[str] = typer.Option(None, "--metrics", help="Keep this Prometheus textfile (node_exporter textfile collector) current."),
        poll: Optional[float] = typer.Option(None, "--poll", help="Poll the archive every SECONDS instead of using file events."),
        settle: Optional[float] = typer.Option(None, "--settle", help="A folder unchanged this many SECONDS counts as complete as it stands (a crashed writer, an archive without sources.txt); default 10."),
        config: str = options.config_option(),
    ) -> None:
        """Lint and verify each run as it lands; print one line per failing run.

        Stops cleanly on SIGTERM or SIGINT (exit 0).
        Holds the warehouse only while it writes a batch: sql, query and nightly keep working.
        """
        from groundwork.jobs.watch import run_watch  # imports every layer: not for --help

        cfg = options.settings(config)
        warehouse, sources = options.warehouse(warehouse, cfg), options.sources(sources, cfg)

        raise typer.Exit(run_watch(runs_dir, warehouse=warehouse, sources=sources, metrics=metrics,
                                   poll=poll, settle=settle))
