"""`groundwork ingest RUNS_DIR [--warehouse PATH]`: load a run archive into the warehouse.

Incremental: unchanged runs are skipped, changed runs replaced whole, new runs added, runs
whose folder disappeared kept and marked missing. By default a quick scan: only new run folders,
new index lines and runs written shortly before the last ingest are read (no other folder is
opened); `--full-scan` lists every run folder and compares every file (size, mtime, content
hash), so it also finds a run edited in place. Every problem found in the input is recorded
in `ingest_issues` and summarised on stderr.

Exit 0: the archive loaded cleanly; 1: it has ingest issues (see the summary / the
`ingest_issues` table); 2: the job could not be done (missing folder, locked warehouse, ...).
"""

from __future__ import annotations

import os
import shlex
import sys
import time

import typer

from groundwork.commands import options
from groundwork.core.warehouse import DEFAULT_PATH, connect


class _Progress:
    """A bar with runs/s on a terminal, a plain line every few seconds otherwise, or nothing."""

    def __init__(self, quiet: bool, stream=None):
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self.tty = self.stream.isatty()
        self.total = None
        self.t0 = time.monotonic()
        self.last = 0.0
        self.printed = -1

    def __call__(self, done: int, total: int | None) -> None:
        if self.quiet:
            return
        if total is not None:
            self.total = total
        now = time.monotonic()
        rate = done / (now - self.t0) if now > self.t0 else 0.0
        if self.tty:
            if now - self.last < 0.1 and done != self.total:
                return
            self.last = now
            width = 30
            frac = done / self.total if self.total else 1.0
            fill = int(width * frac)
            self.stream.write(f"\ringest [{'#' * fill}{'.' * (width - fill)}] {done}/{self.total} runs  {rate:,.0f} runs/s ")
            self.stream.flush()
        elif total is not None and done == 0:
            self.stream.write(f"ingest: {self.total} run folders\n")
        elif (now - self.last >= 5.0 or done == self.total) and done != self.printed:
            self.last = now
            self.printed = done
            self.stream.write(f"ingest: {done}/{self.total} runs ({rate:,.0f} runs/s)\n")
            self.stream.flush()

    def close(self) -> None:
        if self.tty and not self.quiet:
            self.stream.write("\n")


def summary_lines(result, warehouse: str = DEFAULT_PATH, program: str = "groundwork") -> list[str]:
    """The stderr summary: counts that reconcile, then issues by kind, then the command that
    lists them, runnable as pasted: ``program`` as the user called it, the warehouse path
    shell-quoted."""
    lines = [f"ingest: {result.folders_seen} folders seen = {result.runs_loaded} loaded + "
             f"{result.runs_unchanged} unchanged + {result.runs_rejected} rejected; "
             f"{result.runs_missing} missing from disk; {result.elapsed:.1f} s"]
    if result.issues_by_kind:
        total = result.issues_total
        kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(result.issues_by_kind.items()))
        lines.append(f"ingest: {total} issue{'s' if total != 1 else ''} ({result.issues_new} new): {kinds}")
        lines.append(f"ingest: details: {shlex.quote(program)} sql \"SELECT * FROM ingest_issues\" --warehouse {shlex.quote(warehouse)}")
    return lines


def summary_json(result, warehouse: str) -> dict:
    """`groundwork ingest --json`: the counts of ``summary_lines``, the exit reason, the warehouse."""
    return {
        "command": "ingest",
        "exit_status": result.exit_code,
        "exit_reason": "input issues recorded (table ingest_issues)" if result.exit_code else "clean",
        "warehouse": warehouse,
        "runs_dir": result.runs_dir,
        "ingest_id": result.ingest_id,
        "scan": result.scan,
        "folders_seen": result.folders_seen,
        "runs_loaded": result.runs_loaded,
        "runs_unchanged": result.runs_unchanged,
        "runs_rejected": result.runs_rejected,
        "runs_missing": result.runs_missing,
        "issues_total": result.issues_total,
        "issues_new": result.issues_new,
        "issues_by_kind": dict(sorted(result.issues_by_kind.items())),
        "seconds": round(result.elapsed, 3),
    }


def _ingest(runs_dir: str, warehouse: str, quiet: bool, rehash: bool, workers, full_scan: bool):
    from groundwork.ingest import ingest_archive, ingest_memory, parsers
    from groundwork.ingest.runs_folder import check_runs_dir

    check_runs_dir(runs_dir)  # before the warehouse: a job that cannot start creates nothing
    ingest_memory()
    # The parser processes start while the warehouse opens, when many runs will be parsed
    # (a quick scan starts them itself if it finds many).
    early = full_scan or rehash or warehouse == ":memory:" or not os.path.exists(warehouse)
    with parsers(workers if early else 0, runs_dir) as pool:
        con = connect(warehouse)
        progress = _Progress(quiet)
        try:
            return ingest_archive(con, runs_dir, progress=progress, rehash=rehash, full_scan=full_scan,
                                  parsers=pool if early else None, workers=workers)
        finally:
            progress.close()
            con.close()


def register(app: typer.Typer) -> None:
    @app.command("ingest")
    def ingest_cmd(
        runs_dir: str = typer.Argument(..., metavar="RUNS_DIR", help="The run store's runs/ folder (holds <invocation_id>/ folders)."),
        warehouse: str = options.warehouse_option(),
        quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress output; only problems (for cron)."),
        rehash: bool = typer.Option(False, "--rehash", help="Compare content hashes even when size and mtime are unchanged."),
        workers: int = typer.Option(None, "--workers", min=0, metavar="N", help="Parser processes (default: up to 4, one per CPU; 0: parse in this process)."),
        full_scan: bool = typer.Option(False, "--full-scan", help="List every run folder and compare every file (finds runs edited in place); default: only what is new."),
        as_json: bool = options.json_option(),
        config: str = options.config_option(),
    ) -> None:
        """Load (incrementally) every run folder of RUNS_DIR into the warehouse."""
        with options.json_errors("ingest", as_json):  # a bad settings file too
            warehouse = options.warehouse(warehouse, options.settings(config))
            result = _ingest(runs_dir, warehouse, quiet, rehash, workers, full_scan)
        if as_json:
            options.print_json(summary_json(result, warehouse))
            raise typer.Exit(result.exit_code)
        for line in summary_lines(result, warehouse, options.called()):
            if quiet and not result.issues_by_kind:
                break
            print(line, file=sys.stderr)
        raise typer.Exit(result.exit_code)
