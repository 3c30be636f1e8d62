"""`groundwork nightly`: the nightly compliance job (ingest, lint, verify, every report).

    groundwork nightly RUNS_DIR [--warehouse PATH] [--sources FILE] [--out DIR] [--full-scan] [--full-scan-every N]

The ingest reads only what is new since the last nightly (a quick scan); every N-th nightly
(default 7), or with --full-scan, it lists and compares every run folder.

Exit 0: nothing new fails since the previous nightly; 1: new violations; 2: the job could not be
done. Prints where the reports are.
"""

from __future__ import annotations

import sys
import time
from typing import Optional

import typer

from groundwork.core.warehouse import DEFAULT_PATH

DEFAULT_OUT = "reports-out"


class _Progress:
    """Ingest progress on stderr, only for a terminal (cron and systemd logs stay clean)."""

    def __init__(self) -> None:
        self.total = None
        self.last = 0.0

    def __call__(self, done, total=None) -> None:
        if total is not None:
            self.total = total
        now = time.monotonic()
        if now - self.last >= 0.5 or (self.total and done >= self.total):
            self.last = now
            of = f"/{self.total}" if self.total else ""
            sys.stderr.write(f"\ringest: {done}{of} run folders")
            sys.stderr.flush()

    def close(self) -> None:
        if self.last:
            sys.stderr.write("\n")


def register(app: typer.Typer) -> None:
    @app.command("nightly")
    def nightly(
        runs_dir: str = typer.Argument(..., help="Archive root: the run store's runs/ folder."),
        warehouse: str = typer.Option(DEFAULT_PATH, "--warehouse", "-w", help="DuckDB warehouse file (created if missing)."),
        sources: Optional[str] = typer.Option(None, "--sources", help="sources.yaml for the source check (S1/S2); without it the source check is skipped."),
        out: str = typer.Option(DEFAULT_OUT, "--out", help="Report directory (never inside the archive)."),
        full_scan: bool = typer.Option(False, "--full-scan", help="List every run folder and compare every file tonight (finds runs edited in place)."),
        full_scan_every: Optional[int] = typer.Option(None, "--full-scan-every", min=0, help="A full scan every N nightlies, counted in the warehouse (default: 7); 0: only with --full-scan."),
    ) -> None:
        """Ingest what is new or changed, lint, verify, and render every report.

        Exit 0 when nothing new fails since the previous nightly, 1 when there are new violations,
        2 when the job could not be done.
        """
        from groundwork.jobs.nightly import run_nightly  # imports every layer: not for --help

        progress = _Progress() if sys.stderr.isatty() else None
        try:
            result = run_nightly(runs_dir, warehouse=warehouse, sources=sources, out=out, progress=progress,
                                 full_scan=full_scan, full_scan_every=full_scan_every)
        finally:
            if progress is not None:
                progress.close()
        t = result.totals
        r = result.reports
        ing = result.ingest
        loaded = getattr(ing, "runs_loaded", None)
        line = f"nightly #{result.nightly_id}: {t['runs_linted']} runs linted"
        if loaded is not None:
            line += f" ({loaded} new or changed)"
        line += f", {t['runs_failing']} failing"
        if t["has_verify"]:
            line += f" (grounding {t['lint_failed'] + t['lint_unlintable']}, sources {t['verify_failed'] + t['verify_unverifiable']})"
        typer.echo(line)
        base = "since the previous nightly" if t["has_baseline"] else "first nightly, every failing run is new"
        typer.echo(f"{base}: {t['new_failing']} new failing, {t['resolved']} resolved, {t['still_failing']} still failing")
        out_dir = result.out_dir.resolve()
        typer.echo(f"reports: {out_dir}")
        typer.echo(f"  fleet report:  {out_dir / 'fleet.html'}")
        typer.echo(f"  summaries:     {out_dir / 'summary.md'}  {out_dir / 'summary.json'}")
        typer.echo(f"  failing runs:  {out_dir / 'failing' / 'page-1.html'} ({r.runs.pages_written} run pages written, {r.runs.pages_kept} unchanged)")
        typer.echo(f"  CI / metrics:  {out_dir / 'junit.xml'}  {out_dir / 'metrics' / 'groundwork.prom'}  {out_dir / 'violations.jsonl'}")
        raise typer.Exit(result.exit_status)
