"""`groundwork example build|check`: the committed warehouse.duckdb.example, built from examples/archive."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    sub = typer.Typer(help="Build or check warehouse.duckdb.example (from examples/archive).", no_args_is_help=True)

    @sub.command("build")
    def build_command(
        out: str = typer.Option(None, "--out", show_default="warehouse.duckdb.example in the checkout",
                                help="Where to write the example warehouse."),
    ) -> None:
        """Ingest, lint and verify examples/archive into a small, compact warehouse file."""
        from groundwork.jobs import example  # imports every layer: not for --help

        path = example.build(out or example.EXAMPLE_PATH)
        print(f"built {path} ({path.stat().st_size // 1024} KiB)")

    @sub.command("check")
    def check_command() -> None:
        """Exit 1 when warehouse.duckdb.example differs from a fresh build (content, not bytes)."""
        from groundwork.jobs import example

        diff = example.stale()
        if diff:
            print(f"{example.EXAMPLE_PATH.name} is stale ({', '.join(diff)}); run: groundwork example build")
            raise typer.Exit(1)
        print(f"{example.EXAMPLE_PATH.name} is current")

    app.add_typer(sub, name="example")
