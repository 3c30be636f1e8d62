"""`groundwork verify`: the workbench's source check (S1/S2) over the warehouse, or one envelope.

    groundwork verify --sources sources.yaml [--warehouse W] [--run ID ...] [--format text|jsonl|junit] [--out DIR]
    groundwork verify ENVELOPE --sources sources.yaml      # drop-in for `workbench verify`

Exit 0: every run passed (unresolved items never fail); 1: a violation, or a run that could not
be verified; 2: the job could not be done (bad sources.yaml, copy not matching its pin, ...).
"""

from __future__ import annotations

import enum
import os
import sys
from pathlib import Path

from groundwork.core.errors import GroundworkError
from groundwork.core.escape import slug
from groundwork.core.outdir import ready_dir, write_bytes
from groundwork.core.warehouse import connect, job_memory

WORKBENCH_DEFAULT_SOURCES = Path("workbench") / "sources.yaml"


class VerifyFormat(str, enum.Enum):
    text = "text"
    jsonl = "jsonl"
    junit = "junit"


SOURCES_HELP = ("(default: $GROUNDWORK_SOURCES, then groundwork.toml's sources, then $DD_SOURCES_CONFIG, "
                "then workbench/sources.yaml).")


def resolve_sources(sources: str | None) -> str:
    """--sources (or the setting resolved from it), else $DD_SOURCES_CONFIG, else
    workbench/sources.yaml (as the workbench does)."""
    if sources:
        return sources
    env = os.environ.get("DD_SOURCES_CONFIG")
    if env:
        return env
    if WORKBENCH_DEFAULT_SOURCES.exists():
        return str(WORKBENCH_DEFAULT_SOURCES)
    raise GroundworkError("no sources configuration: give --sources FILE or set DD_SOURCES_CONFIG")


def write_outputs(result, out: str | None) -> None:
    """Write DIR/<invocation_id>/sources.txt (the exact text) for every verified run."""
    if not out:
        return
    root = Path(out)
    for verdict in result.runs:
        if verdict.text is None:
            continue
        write_bytes(root / slug(verdict.invocation_id) / "sources.txt", verdict.text.encode("utf-8", "surrogateescape"))


def print_result(result, fmt: VerifyFormat, *, drop_in: bool, show_passed: bool = False) -> None:
    out = sys.stdout
    if fmt is VerifyFormat.jsonl:
        import orjson

        for verdict in result.runs:
            out.buffer.write(orjson.dumps(verdict.as_json()) + b"\n")
        out.flush()
    elif drop_in and fmt is VerifyFormat.text:
        out.buffer.write(result.runs[0].text.encode("utf-8", "surrogateescape"))
        out.flush()
        return
    elif fmt is VerifyFormat.text:
        from groundwork.reports.render import render

        out.write(render("verify/report.txt.j2", runs=result.runs, show_passed=show_passed,
                         totals=result.totals_line()))
        return
    else:
        from groundwork.reports.render import render

        out.write(render("verify/junit.xml.j2", runs=result.runs, failed=result.count("failed"),
                         unverifiable=result.count("unverifiable"), sources_path=result.sources_path,
                         seconds=result.seconds))
    if not drop_in:
        print(result.totals_line(), file=sys.stderr)


def verify_file(envelope: str, sources: str | None, fmt: VerifyFormat = VerifyFormat.text,
                out: str | None = None) -> int:
    """`workbench verify ENVELOPE`: the source check of one envelope, printed as the workbench
    prints it (text) or as one jsonl / junit report; returns the exit code (0 passed, 1 not)."""
    from groundwork.jobs.dropin import verify_envelope

    if out:
        ready_dir(Path(out))
    result = verify_envelope(envelope, resolve_sources(sources))
    write_outputs(result, out)
    print_result(result, fmt, drop_in=True)
    return result.exit_code


def summary_json(result, warehouse: str, out: str | None) -> dict:
    """`groundwork verify --json`: the counts of the totals line, the exit reason, the files written."""
    failed, unverifiable = result.count("failed"), result.count("unverifiable")
    return {
        "command": "verify",
        "exit_status": result.exit_code,
        "exit_reason": (f"{failed} runs failed, {unverifiable} unverifiable" if result.exit_code
                        else "every run passed"),
        "warehouse": warehouse,
        "sources": result.sources_path,
        "verify_id": result.lint_id,
        "runs": len(result.fresh) + result.reused,
        "reused": result.reused,
        "passed": result.count("passed"),
        "failed": failed,
        "unverifiable": unverifiable,
        "written": {"sources_txt_dir": out} if out else {},
    }


def register(app) -> None:
    """Add `groundwork verify` to the typer app (typer is imported only when the app is built)."""
    import typer

    from groundwork.commands import options

    @app.command("verify")
    def verify_command(
        envelope: str = typer.Argument(None, metavar="[ENVELOPE]",
                                       help="Check this one envelope.json instead of the warehouse (drop-in for `workbench verify`)."),
        sources: str = options.sources_option(
            "sources.yaml listing the pinned source copies " + SOURCES_HELP[:-2]
            + "; for ENVELOPE, as the workbench: $DD_SOURCES_CONFIG, then workbench/sources.yaml)."),
        warehouse: str = options.warehouse_option(),
        fmt: VerifyFormat = typer.Option(None, "--format", "-f",
                                         help="text (default), jsonl (one object per run) or junit."),
        run: list[str] = typer.Option(None, "--run", help="Only this run (invocation id); repeat for more."),
        out: str = typer.Option(None, "--out", help="Also write DIR/<invocation_id>/sources.txt for every run."),
        show_passed: bool = typer.Option(False, "--show-passed", help="text format: print passing runs too."),
        no_record: bool = typer.Option(False, "--no-record", help="Do not append the verdicts to the warehouse's check history."),
        as_json: bool = options.json_option(),
        config: str = options.config_option(),
    ) -> None:
        """Re-hash externally sourced evidence against pinned source copies (rules S1, S2).

        Evidence whose snapshot_ref has no copy in sources.yaml is "unresolved" and never fails.
        """
        from groundwork.checks.verify import verify_warehouse

        fmt = fmt or VerifyFormat.text
        if envelope is not None:
            if run:
                raise GroundworkError("--run applies to the warehouse, not to ENVELOPE")
            if as_json:
                raise GroundworkError("--json applies to the warehouse; for ENVELOPE use --format jsonl")
            raise typer.Exit(verify_file(envelope, resolve_sources(sources), fmt, out))
        if as_json and fmt is not VerifyFormat.text:
            raise GroundworkError("--json replaces the report: give --json or --format, not both")
        with options.json_errors("verify", as_json):  # a bad settings file too
            cfg = options.settings(config)
            warehouse = options.warehouse(warehouse, cfg)
            path = resolve_sources(options.sources(sources, cfg))
            if out:
                ready_dir(Path(out))   # before the pass: a folder that cannot be written is one line, nothing recorded
            con = connect(warehouse, create=False, memory=job_memory())
            try:
                result = verify_warehouse(con, path, runs=run or None, record=not no_record)
            finally:
                con.close()
        write_outputs(result, out)
        if as_json:
            options.print_json(summary_json(result, warehouse, out))
        else:
            print_result(result, fmt, drop_in=False, show_passed=show_passed)
        raise typer.Exit(result.exit_code)
