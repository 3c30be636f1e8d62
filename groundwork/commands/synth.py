"""`groundwork synth OUT --runs N [--seed S] [--violation-rate R]`: a synthetic archive with truth."""

from __future__ import annotations

from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    @app.command()
    def synth(
        out: Path = typer.Argument(..., help="New directory for the archive (OUT/runs, OUT/sources.yaml, OUT/truth.jsonl)."),
        runs: int = typer.Option(1000, "--runs", help="Number of run folders to write (delegated children count)."),
        seed: int = typer.Option(0, "--seed", help="Random seed; the same seed gives byte-identical archives."),
        violation_rate: float = typer.Option(0.05, "--violation-rate",
                                             help="Share of run groups that break a rule (0..1)."),
        workers: int = typer.Option(2, "--workers", help="Worker processes."),
        records: int = typer.Option(400, "--records", help="Records in the pinned FAIRsharing snapshot copy."),
    ) -> None:
        """Write a synthetic run archive in the workbench's exact format, with the expected verdicts."""
        from groundwork.synth import generate

        res = generate(out, runs, seed=seed, violation_rate=violation_rate, workers=workers, records=records)
        typer.echo(f"synth: {res.runs} runs ({res.groups} groups, {res.violating_groups} violating) "
                   f"in {res.seconds:.2f} s = {res.runs_per_second:,.0f} runs/s -> {res.out}")
        typer.echo(f"archive: {res.out / 'runs'}  sources: {res.out / 'sources.yaml'}  truth: {res.out / 'truth.jsonl'}")
