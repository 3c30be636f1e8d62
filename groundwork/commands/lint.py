"""`groundwork lint`: the workbench's grounding linter as SQL, over the warehouse or two files.

    groundwork lint [--warehouse W] [--rules G1,G2] [--run ID ...] [--format text|jsonl|junit] [--out DIR]
    groundwork lint SPANS ENVELOPE          # drop-in for `workbench lint SPANS ENVELOPE`

Exit 0: every selected run passed; 1: a run violates a rule or cannot be linted at all (the
workbench would crash or hang on it); 2: the job could not be done. The drop-in prints exactly
what `workbench lint` prints and exits 0/1 like it; where the workbench prints a traceback and
exits 1 (unreadable file, invalid JSON, span line missing a required key, ...) this prints one
line on stderr and exits 2.
"""

from __future__ import annotations

import enum
import sys
from pathlib import Path

from groundwork.core.errors import GroundworkError
from groundwork.core.escape import slug
from groundwork.core.outdir import ready_dir, write_bytes
from groundwork.core.warehouse import connect, job_memory


class LintFormat(str, enum.Enum):
    text = "text"
    jsonl = "jsonl"
    junit = "junit"


def write_outputs(result, out: str | None) -> int:
    """Write DIR/<invocation_id>/grounding.txt (the exact bytes) for every linted run."""
    if not out:
        return 0
    root = Path(out)
    written = 0
    for verdict in result.verdicts:
        text = verdict.grounding_txt
        if text is None:
            continue
        write_bytes(root / slug(verdict.invocation_id) / "grounding.txt", text.encode("utf-8", "surrogateescape"))
        written += 1
    return written


def print_result(result, fmt: LintFormat, *, show_passed: bool) -> None:
    from groundwork.reports.render import render

    if fmt is LintFormat.jsonl:
        import orjson

        out = sys.stdout.buffer
        for verdict in result.verdicts:
            out.write(orjson.dumps(verdict.report()) + b"\n")
        sys.stdout.flush()
        return
    if fmt is LintFormat.text:
        verdicts = result.verdicts if show_passed else result.not_passed()
        sys.stdout.write(render("lint/report.txt.j2", verdicts=verdicts, show_passed=show_passed,
                                totals=result.totals_line()))
        return
    titles: dict[str, list[str]] = {}
    for rule in result.rules:
        if rule.kind == "rule":
            titles.setdefault(rule.code, []).append(rule.title)
    hits: dict[str, list] = {code: [] for code in titles}
    findings = []
    for v in result.verdicts:
        for code, message in zip(v.codes, v.violations):
            hits[code].append((v.invocation_id, message))
        findings.extend((code, v.invocation_id, message) for code, message in v.findings)
    suites = [(code, "; ".join(titles[code]), hits[code]) for code in titles]
    unlintable = [v for v in result.verdicts if v.status == "unlintable"]
    sys.stdout.write(render("lint/junit.xml.j2", suites=suites, unlintable=unlintable, findings=findings))


def summary_json(result, warehouse: str, out: str | None, written: int) -> dict:
    """`groundwork lint --json`: the counts of the totals line, the exit reason, the files written."""
    from groundwork.checks.lint import FAILED, PASSED, UNLINTABLE

    c = result.counts
    return {
        "command": "lint",
        "exit_status": result.exit_code,
        "exit_reason": (f"{c[FAILED]} runs failed, {c[UNLINTABLE]} unlintable" if result.exit_code
                        else "every run passed"),
        "warehouse": warehouse,
        "lint_id": result.lint_id,
        "runs": sum(c.values()),
        "reused": result.reused,
        "passed": c[PASSED],
        "failed": c[FAILED],
        "unlintable": c[UNLINTABLE],
        "findings": result.findings_count,
        "written": {"grounding_txt_dir": out, "grounding_txt_files": written} if out else {},
    }


def lint_files(spans: str, envelope: str) -> int:
    """`workbench lint SPANS ENVELOPE`: same stdout, exit 0/1 (2 with one line when unlintable)."""
    from groundwork.jobs.dropin import lint_pair

    verdict = lint_pair(spans, envelope)
    sys.stdout.buffer.write(verdict.grounding_txt.encode("utf-8", "surrogateescape"))
    sys.stdout.flush()
    return 0 if verdict.passed else 1


def _refuse_archive(con, out: str) -> None:
    """--out never writes into an archive that was ingested (its grounding.txt files are evidence)."""
    target = Path(out).resolve()
    for (runs_dir,) in con.execute("SELECT DISTINCT runs_dir FROM ingests WHERE runs_dir IS NOT NULL").fetchall():
        root = Path(runs_dir).resolve()
        if target == root or root in target.parents:
            raise GroundworkError(f"--out {out} is inside the ingested archive {runs_dir}; choose a directory outside it")


def _codes(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    return [c for v in values for c in v.split(",") if c.strip()]


def register(app) -> None:
    """Add `groundwork lint` to the typer app (typer is imported only when the app is built)."""
    import typer

    from groundwork.commands import options

    @app.command("lint")
    def lint_command(
        files: list[str] = typer.Argument(None, metavar="[SPANS ENVELOPE]",
                                          help="Lint this spans.jsonl and envelope.json instead of the warehouse (drop-in for `workbench lint`)."),
        warehouse: str = options.warehouse_option(),
        rules: list[str] = typer.Option(None, "--rules", "-r", help="Only these rule codes (comma list or repeated), e.g. G1,G2."),
        run: list[str] = typer.Option(None, "--run", help="Only this run (invocation id); repeat for more."),
        fmt: LintFormat = typer.Option(LintFormat.text, "--format", "-f",
                                       help="text (failing runs; --show-passed for all), jsonl (one report object per run) or junit."),
        out: str = typer.Option(None, "--out", help="Also write DIR/<invocation_id>/grounding.txt for every linted run."),
        show_passed: bool = typer.Option(False, "--show-passed", help="text format: print passing runs too."),
        no_record: bool = typer.Option(False, "--no-record", help="Do not append this pass to the warehouse's lint history."),
        relint_all: bool = typer.Option(False, "--all", help="Re-lint every run, even those unchanged since their last lint with the same rules."),
        keep: bool = typer.Option(False, "--keep-derived",
                                  help="After printing, keep the runs' derived relations in the warehouse (schema lint_store), "
                                       "so later full lints (e.g. after a rule change) read them instead of deriving every run again."),
        as_json: bool = options.json_option(),
        config: str = options.config_option(),
    ) -> None:
        """Lint every run (grounding rules G0, E1, G1-G4, R1-R3, N1, D1-D3 as SQL) exactly as the workbench does.

        Prints the workbench's verdicts (grounding.txt texts) and groundwork-only findings
        (GW1 span-id cycle, GW2 duplicate span id, GW3 delegation hash mismatch, GW4 missing child).
        """
        if files:
            if len(files) != 2:
                raise GroundworkError("give both SPANS and ENVELOPE (or neither, to lint the warehouse)")
            if run or rules or as_json:
                raise GroundworkError("--run, --rules and --json apply to the warehouse, not to SPANS ENVELOPE")
            raise typer.Exit(lint_files(files[0], files[1]))
        from groundwork.checks.lint import lint_warehouse
        from groundwork.checks.store import keep_derived

        if as_json and fmt is not LintFormat.text:
            raise GroundworkError("--json replaces the report: give --json or --format, not both")
        with options.json_errors("lint", as_json):  # a bad settings file too
            warehouse = options.warehouse(warehouse, options.settings(config))
            con = connect(warehouse, create=False, memory=job_memory())
        try:
            if out:
                _refuse_archive(con, out)
                ready_dir(Path(out))   # before the pass: a folder that cannot be written is one line, nothing recorded
            result = lint_warehouse(con, codes=_codes(rules), runs=run or None, record=not no_record,
                                    reuse=not relint_all)
            written = write_outputs(result, out)  # reads reused verdicts from the warehouse: keep it open
            if as_json:
                options.print_json(summary_json(result, warehouse, out, written))
            else:
                print_result(result, fmt, show_passed=show_passed)
            if fmt is not LintFormat.text and not as_json:
                print(result.totals_line(), file=sys.stderr)
            if keep:
                # Answered: now keep the derived relations for the next full lint.
                sys.stdout.flush()
                sys.stderr.flush()
                keep_derived(con)
        finally:
            con.close()
        raise typer.Exit(result.exit_code)
