"""Command-line entry point: a thin typer app; every command lives in groundwork/commands/.

Exit codes: 0 clean, 1 violations, 2 the job could not be done. No traceback reaches a user
(set GROUNDWORK_DEBUG=1 to see one).
"""

from __future__ import annotations

import os
import sys

import typer

from groundwork.commands import drift, example, export, ingest, lint, nightly, query, spark, sql, synth, verify
from groundwork.core.errors import GroundworkError

app = typer.Typer(
    name="groundwork",
    help="Audit a workbench run archive: ingest it into DuckDB, lint and verify it with SQL rules, report.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# In this order in `groundwork --help`.
for _command in (ingest, lint, verify, drift, nightly, spark, synth, sql, query, export, example):
    _command.register(app)


def fail(message: str) -> None:
    """Print a one-line error to stderr and exit 2."""
    print(f"groundwork: error: {message}", file=sys.stderr)
    raise SystemExit(2)


def main() -> None:
    """Run the CLI, turning every failure into a one-line message and exit code 2."""
    try:
        app()
    except SystemExit:
        raise
    except GroundworkError as exc:
        fail(str(exc))
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise SystemExit(1)
    except KeyboardInterrupt:
        print("groundwork: interrupted", file=sys.stderr)
        raise SystemExit(2)
    except Exception as exc:  # noqa: BLE001 - the last line of defence: never a traceback
        if os.environ.get("GROUNDWORK_DEBUG"):
            raise
        fail(f"internal error: {type(exc).__name__}: {exc} (set GROUNDWORK_DEBUG=1 for a traceback)")


if __name__ == "__main__":
    main()
