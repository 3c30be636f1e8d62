"""`groundwork nightly`: the nightly compliance job (ingest, lint, verify, every report).

    groundwork nightly RUNS_DIR [-w PATH] [--sources FILE] [--out DIR] [--full-scan] [--full-scan-every N]
                      [--workers N] [--quiet] [--json] [--config FILE]

The ingest reads only what is new since the last nightly (a quick scan); every N-th nightly
(default 7), or with --full-scan, it lists and compares every run folder.

Exit 0: nothing new fails since the previous nightly; 1: new violations (a groundwork finding
of severity error counts as one); 2: the job could not be done. Prints where the reports are.
"""

from __future__ import annotations

import shlex
import sys
import time
from typing import Optional

import typer

from groundwork.commands import options
from groundwork.commands.ingest import summary_lines

DEFAULT_OUT = "reports-out"

PHASES = {
    "ingest": "ingest",
    "lint": "lint",
    "verify": "verify (source check)",
    "build_state": "compare with the previous nightly",
    "reports": "reports",
    "keep_derived": "keep the derived relations",
}


class _Progress:
    """On stderr: a line as each phase starts, and on a terminal the ingest's run count
    (cron and systemd logs get the phase lines only)."""

    def __init__(self, stream=None) -> None:
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.total = None
        self.last = 0.0
        self.open = False   # a \r counter line waits for its newline
        self.t0 = time.monotonic()

    def __call__(self, done, total=None) -> None:
        if not self.tty:
            return
        if total is not None:
            self.total = total
        now = time.monotonic()
        if now - self.last >= 0.5 or (self.total and done >= self.total):
            self.last = now
            of = f"/{self.total}" if self.total else ""
            self.stream.write(f"\ringest: {done}{of} run folders")
            self.stream.flush()
            self.open = True

    def phase(self, name: str) -> None:
        self.close()
        self.stream.write(f"nightly: {PHASES.get(name, name)} ({time.monotonic() - self.t0:.1f} s)\n")
        self.stream.flush()

    def close(self) -> None:
        if self.open:
            self.stream.write("\n")
            self.open = False


def _warning_lines(result, warehouse: str) -> list[str]:
    lines = []
    for w in result.warnings:
        query = (f"SELECT invocation_id, message FROM violation_messages WHERE code = '{w['code']}'")
        lines.append(f"warning: {w['code']} in {w['runs']} run{'s' if w['runs'] != 1 else ''} "
                     f"({w['findings']} finding{'s' if w['findings'] != 1 else ''}; severity warn: fails nothing)")
        lines.append(f"  list them: {shlex.quote(options.called())} sql {shlex.quote(query)} --warehouse {shlex.quote(warehouse)}")
    return lines


def _summary_json(result, warehouse: str, runs_dir: str) -> dict:
    t, r, ing = result.totals, result.reports, result.ingest
    out_dir = result.out_dir.resolve()
    return {
        "command": "nightly",
        "exit_status": result.exit_status,
        "exit_reason": (f"{t['new_failing']} runs fail a check they did not fail at the previous nightly"
                        if result.exit_status else "nothing new fails since the previous nightly"),
        "nightly_id": result.nightly_id,
        "warehouse": warehouse,
        "runs_dir": runs_dir,
        "has_baseline": t["has_baseline"],
        "runs_linted": t["runs_linted"],
        "runs_failing": t["runs_failing"],
        "new_failing": t["new_failing"],
        "resolved": t["resolved"],
        "still_failing": t["still_failing"],
        "gone": t.get("gone"),
        "ingest": None if ing is None else {
            "runs_loaded": ing.runs_loaded, "runs_unchanged": ing.runs_unchanged,
            "runs_rejected": ing.runs_rejected, "runs_missing": ing.runs_missing, "scan": ing.scan,
            "issues_total": ing.issues_total, "issues_new": ing.issues_new,
            "issues_by_kind": dict(sorted(ing.issues_by_kind.items())),
        },
        "severities": result.severities,
        "warnings": result.warnings,
        "written": {
            "out_dir": str(out_dir),
            "fleet_html": str(out_dir / "fleet.html"),
            "summary_md": str(out_dir / "summary.md"),
            "summary_json": str(out_dir / "summary.json"),
            "failing_pages": str(out_dir / "failing" / "index.html"),
            "run_pages_written": r.runs.pages_written,
            "run_pages_unchanged": r.runs.pages_kept,
            "junit_xml": str(out_dir / "junit.xml"),
            "metrics": str(out_dir / "metrics" / "groundwork.prom"),
            "violations_jsonl": str(out_dir / "violations.jsonl"),
        },
        "seconds": {k: round(v, 3) for k, v in result.seconds.items()},
    }


def register(app: typer.Typer) -> None:
    @app.command("nightly")
    def nightly(
        runs_dir: str = typer.Argument(..., metavar="RUNS_DIR", help="Archive root: the run store's runs/ folder."),
        warehouse: str = options.warehouse_option(", created if missing"),
        sources: Optional[str] = options.sources_option(
            "sources.yaml for the source check (S1/S2) (else $GROUNDWORK_SOURCES, then groundwork.toml's sources); "
            "without one the source check is skipped."),
        out: Optional[str] = typer.Option(None, "--out", metavar="DIR", show_default=False,
                                          help=f"Report directory, never inside the archive (else $GROUNDWORK_REPORTS, "
                                               f"then groundwork.toml's reports, then {DEFAULT_OUT})."),
        full_scan: bool = typer.Option(False, "--full-scan", help="List every run folder and compare every file tonight (finds runs edited in place)."),
        full_scan_every: Optional[int] = typer.Option(None, "--full-scan-every", min=0, metavar="N",
                                                      help="A full scan every N nightlies, counted in the warehouse (default: 7); 0: only with --full-scan."),
        workers: Optional[int] = typer.Option(None, "--workers", min=0, metavar="N",
                                              help="The ingest's parser processes (default: up to 4, one per CPU; 0: parse in this process)."),
        quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress on stderr (the summary and problems only)."),
        as_json: bool = options.json_option(),
        config: str = options.config_option(),
    ) -> None:
        """Ingest what is new or changed, lint, verify, and render every report.

        Exit 0 when nothing new fails since the previous nightly, 1 when there are new violations
        (groundwork findings of severity error included), 2 when the job could not be done.
        """
        from groundwork.core import config as gconfig
        from groundwork.jobs.nightly import run_nightly  # imports every layer: not for --help

        with options.json_errors("nightly", as_json):  # a bad settings file too
            cfg = options.settings(config)
            warehouse = options.warehouse(warehouse, cfg)
            sources = options.sources(sources, cfg)
            out = gconfig.resolve("reports", out, cfg, DEFAULT_OUT)
            progress = None if quiet else _Progress()
            try:
                result = run_nightly(runs_dir, warehouse=warehouse, sources=sources, out=out, progress=progress,
                                     full_scan=full_scan, full_scan_every=full_scan_every, workers=workers,
                                     config=cfg, on_phase=None if progress is None else progress.phase)
            finally:
                if progress is not None:
                    progress.close()
        if as_json:
            options.print_json(_summary_json(result, warehouse, runs_dir))
            raise typer.Exit(result.exit_status)
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
        if ing is not None:
            for issue_line in summary_lines(ing, warehouse, options.called())[1:]:
                typer.echo(issue_line)
        for warning in _warning_lines(result, warehouse):
            typer.echo(warning)
        out_dir = result.out_dir.resolve()
        typer.echo(f"reports: {out_dir}")
        typer.echo(f"  fleet report:  {out_dir / 'fleet.html'}")
        typer.echo(f"  summaries:     {out_dir / 'summary.md'}  {out_dir / 'summary.json'}")
        typer.echo(f"  failing runs:  {out_dir / 'failing' / 'index.html'} ({r.runs.pages_written} run pages written, {r.runs.pages_kept} unchanged)")
        typer.echo(f"  CI / metrics:  {out_dir / 'junit.xml'}  {out_dir / 'metrics' / 'groundwork.prom'}  {out_dir / 'violations.jsonl'}")
        raise typer.Exit(result.exit_status)
