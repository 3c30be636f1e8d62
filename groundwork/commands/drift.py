"""`groundwork drift`: evidence verified against an old source copy that a newer copy no longer matches.

    groundwork drift --sources sources.yaml --from OLD_REF --to NEW_REF [--warehouse W] [--format text|jsonl|markdown]

Exit 0: no drift; 1: some historical evidence no longer matches the newer copy; 2: the job
could not be done (bad sources.yaml, unknown ref, ...).
"""

from __future__ import annotations

import enum
import sys

import orjson
import typer

from groundwork.commands import options
from groundwork.commands.verify import SOURCES_HELP, resolve_sources
from groundwork.core.warehouse import connect


class DriftFormat(str, enum.Enum):
    text = "text"
    jsonl = "jsonl"
    markdown = "markdown"


def register(app: typer.Typer) -> None:
    @app.command("drift")
    def drift_command(
        sources: str = options.sources_option("sources.yaml listing both copies " + SOURCES_HELP),
        from_ref: str = typer.Option(..., "--from", help="snapshot_ref of the old copy the evidence was verified against."),
        to_ref: str = typer.Option(..., "--to", help="snapshot_ref of the newer copy."),
        warehouse: str = options.warehouse_option(),
        fmt: DriftFormat = typer.Option(DriftFormat.text, "--format", "-f",
                                        help="text, jsonl (one object per drifted evidence item) or markdown."),
        config: str = options.config_option(),
    ) -> None:
        """Which historical evidence, verified against an old copy, a newer copy no longer supports
        (record changed or gone): by source, by agent and by run."""
        from groundwork.checks.drift import drift
        from groundwork.reports.render import render

        cfg = options.settings(config)
        con = connect(options.warehouse(warehouse, cfg), create=False)
        try:
            result = drift(con, resolve_sources(options.sources(sources, cfg)), from_ref, to_ref)
        finally:
            con.close()
        if fmt is DriftFormat.jsonl:
            for item in result.items:
                sys.stdout.buffer.write(orjson.dumps(item) + b"\n")
            sys.stdout.flush()
        else:
            template = "verify/drift.txt.j2" if fmt is DriftFormat.text else "verify/drift.md.j2"
            sys.stdout.write(render(template, d=result))
        raise typer.Exit(1 if result.drifted else 0)
