"""Command-line entry point: a thin typer app; every command lives in groundwork/commands/.

Exit codes: 0 clean, 1 violations, 2 the job could not be done. No traceback reaches a user
(set GROUNDWORK_DEBUG=1 to see one).

The drop-in forms `groundwork lint SPANS ENVELOPE` and `groundwork verify ENVELOPE [--sources
FILE]` are recognised before the typer app is built (``drop_in``): a drop-in is started once per
run, and building the app (typer and its click) costs more than the lint itself. They run the
same functions as the typer commands; any other argument list (--help, an option, a usage error)
goes to typer. ``app`` (the typer app) is built on first use; its option values are coerced
without pydantic when plainly valid (groundwork.commands.coercion). ``script`` is the process
entry (the `groundwork` script, `python -m groundwork.cli`): it keeps pandas and numpy out of
every command but `spark` (groundwork.core.keepout).
"""

from __future__ import annotations

import gc
import os
import signal
import sys
from contextlib import contextmanager, nullcontext
from functools import lru_cache

from groundwork.core.errors import GroundworkError


def _plain_help() -> None:
    """Usage lines and option tables in click's conventional form: ``RUNS_DIR`` / ``[ENVELOPE]``
    instead of typer's ``{runs_dir}``, no ``<bool>`` beside a flag, ``TEXT`` instead of ``<str>``.
    (typer 0.2x renders them so; tests/cli/test_options.py reads every command's --help.)"""
    from typer import core

    def usage_name(self) -> str:
        name = self.metavar or self.name.upper()
        if self.metavar is None:
            name = f"{name}" if self.required else f"[{name}]"
            if self.nargs != 1:
                name += "..."
        return name

    plain = {"<str>": "TEXT", "<int>": "INTEGER", "<float>": "FLOAT", "<path>": "PATH"}

    def option_type(self, ctx):
        if getattr(self, "is_flag", False) or getattr(self, "count", False):
            return None
        if self.metavar is not None:
            return self.metavar
        label = original_type(self, ctx)
        if label in plain:
            return plain[label]
        return label[1:-1] if label and label.startswith("<") and label.endswith(">") else label

    def argument_name(self) -> str:
        return self.metavar or self.name.upper()

    original_type = core.TyperOption.display_type_rich
    if getattr(core.TyperArgument, "_usage_display_name", None) is not None:
        core.TyperArgument._usage_display_name = usage_name
    if hasattr(core.TyperArgument, "display_name_raw"):
        core.TyperArgument.display_name_raw = property(argument_name)
    core.TyperOption.display_type_rich = option_type
    if hasattr(core.TyperArgument, "display_type_rich"):
        core.TyperArgument.display_type_rich = lambda self, ctx: None


def print_version() -> None:
    from groundwork import __version__

    print(f"groundwork {__version__}")


@lru_cache(maxsize=1)
def build_app():
    """The typer app with every command registered."""

    import typer

    from groundwork.commands import (coercion, drift, example, export, ingest, lint, nightly, options, query, serve,
                                     spark, sql, synth, verify, watch)

    _plain_help()
    coercion.install()
    app = typer.Typer(
        name="groundwork",
        help="Audit a workbench run archive: ingest it into DuckDB, lint and verify it with SQL rules, report.",
        no_args_is_help=True,
        add_completion=True,
        pretty_exceptions_enable=False,
    )

    def version_callback(value: bool) -> None:
        if value:
            print_version()
            raise typer.Exit(0)

    @app.callback()
    def main_options(
        version: bool = typer.Option(False, "--version", is_eager=True, callback=version_callback,
                                     help="Print groundwork's version and exit."),
        config: str = typer.Option(None, "--config", metavar="FILE", show_default=False,
                                             help="Settings file for every command (default: ./groundwork.toml when there is one)."),
    ) -> None:
        options.GLOBAL["config"] = config

    # In this order in `groundwork --help`.
    for command in (ingest, lint, verify, drift, nightly, watch, spark, synth, sql, query, export, serve, example):
        command.register(app)
    return app


def __getattr__(name: str):
    if name == "app":
        return build_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _plain(arg: str) -> bool:
    """An argument typer would take as a value, never as an option."""
    return not arg.startswith("-")


@contextmanager
def _imports_without_gc():
    """The block's imports with the cyclic garbage collector off, then their objects frozen
    (gc.freeze: kept out of later collections). A drop-in imports DuckDB and the checks, tens
    of thousands of objects that live until the process ends; collecting while they are made
    traverses them again and again (~5-10 % of a drop-in's CPU). What the run itself allocates
    is collected as usual. For a process of its own (``script``): a long-lived caller of ``main``
    would keep the garbage of the moment frozen."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was_enabled:
            gc.enable()


def drop_in(args: list[str], importing=nullcontext):
    """The call that runs ``args`` (the command line after the program name) when it is one of
    the drop-in forms (or ``--version``), else None. Returns the exit code. The imports of a
    drop-in happen inside the context ``importing`` makes."""
    if args == ["--version"]:
        return lambda: print_version() or 0
    if len(args) == 3 and args[0] == "lint" and _plain(args[1]) and _plain(args[2]):
        with importing():
            from groundwork.commands.lint import lint_files
            from groundwork.checks import onerun  # noqa: F401 - what lint_files imports as it runs

        return lambda: lint_files(args[1], args[2])
    if args[:1] != ["verify"]:
        return None
    envelope = sources = None
    rest = args[1:]
    while rest:
        arg = rest.pop(0)
        if arg in ("--sources", "-s") and sources is None and rest and _plain(rest[0]):
            sources = rest.pop(0)
        elif arg.startswith("--sources=") and sources is None and len(arg) > len("--sources="):
            sources = arg[len("--sources="):]
        elif _plain(arg) and envelope is None:
            envelope = arg
        else:
            return None
    if envelope is None:
        return None
    with importing():
        from groundwork.commands.verify import verify_file
        from groundwork.checks import verify  # noqa: F401 - what verify_file imports as it runs

    return lambda: verify_file(envelope, sources)


MAX_ERROR = 2000  # characters of an error line: a message quoting a run's value (a 100 KB time) is cut
KEEP_TAIL = 400   # of which the last ones are kept: the cause is usually said after the value


def fail(message: str) -> None:
    """Print a one-line error to stderr and exit 2: run-controlled text in it is shown visibly
    (a newline or terminal escape becomes ``\\x0a``/``\\x1b``) and cut in the middle to MAX_ERROR
    characters."""
    from groundwork.core.escape import visible   # here: only a failing command needs it

    line = visible(message)
    if len(line) > MAX_ERROR:
        cut = len(line) - MAX_ERROR
        line = f"{line[:MAX_ERROR - KEEP_TAIL]}… [{cut:,} characters cut] …{line[-KEEP_TAIL:]}"
    print(f"groundwork: error: {line}", file=sys.stderr)
    raise SystemExit(2)


_SIGINT = []  # the SIGINTs (and SIGTERMs) this process took (``_note_sigint``)


def _note_sigint(signum, frame) -> None:
    """Python's SIGINT handler (raise KeyboardInterrupt), noting the signal first: DuckDB takes
    the KeyboardInterrupt of a query it was running and raises its own error instead
    (``RuntimeError('Query interrupted')``, or an error about whatever it was reading). A SIGTERM
    (systemd stopping a unit, `kill`) takes the same way, so the job ends as cleanly: its
    warehouse closed, DuckDB's spill files removed, one line."""
    _SIGINT.append(signum)
    signal.default_int_handler(signum, frame)


def _interrupt(exc: BaseException) -> bool:
    """Whether ``exc`` is how a Ctrl-C (SIGINT) ended the command: a KeyboardInterrupt, typer's
    exit 130 raised from one, or any error after this process took a SIGINT (``_note_sigint``)."""
    if _SIGINT:
        return True
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, KeyboardInterrupt):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def interrupted() -> None:
    """End an interrupted command: one line, exit code 2 (the job was not done)."""
    how = " (SIGTERM)" if signal.SIGTERM in _SIGINT else ""
    print(f"groundwork: interrupted{how}", file=sys.stderr)
    raise SystemExit(2)


def main(importing=nullcontext) -> None:
    """Run the CLI, turning every failure into a one-line message and exit code 2 (``importing``:
    see ``drop_in``); a Ctrl-C too (``_interrupt``)."""
    try:
        call = drop_in(sys.argv[1:], importing)
        if call is not None:
            raise SystemExit(call())
        build_app()()
    except SystemExit as exc:
        if exc.code == 130 and _interrupt(exc):
            interrupted()
        raise
    except GroundworkError as exc:
        fail(_out_of_memory(exc) or str(exc))
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise SystemExit(1)
    except KeyboardInterrupt:
        interrupted()
    except Exception as exc:  # noqa: BLE001 - the last line of defence: never a traceback
        if _interrupt(exc):
            interrupted()
        if os.environ.get("GROUNDWORK_DEBUG"):
            raise
        fail(_out_of_memory(exc) or f"internal error: {type(exc).__name__}: {exc} (set GROUNDWORK_DEBUG=1 for a traceback)")


def _out_of_memory(exc: BaseException) -> str | None:
    """The line to print when ``exc`` (or an error it came from, e.g. a rule file's) is DuckDB
    running out of the memory groundwork gave it (README: GROUNDWORK_MEMORY), else None: a job that
    cannot be done under the limit, not an unexpected error, and no advice to `SET memory_limit`."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if type(exc).__name__ == "OutOfMemoryException":
            short = str(exc).splitlines()[0].removeprefix("Out of Memory Error: ")
            return (f"DuckDB ran out of memory ({short}); give it more: GROUNDWORK_MEMORY (the checks and "
                    "reports, default 256MB) or GROUNDWORK_INGEST_MEMORY (the ingest, default 128MB)")
        exc = exc.__cause__ or exc.__context__
    return None


# Container objects allocated (net) between two young collections of the cyclic garbage collector
# in a process of its own (Python's default: 700). A command makes tens of thousands of objects
# that live until it ends (modules, templates, rows); with the default, a nightly with nothing
# changed at 100,000 runs ran 121 collections (20-30 ms of its 0.6 s), with this 3 (8 ms).
# Cycles are still collected, in larger batches.
GC_THRESHOLD = 20_000


def script() -> None:
    """The process entry: ``main`` in a process of its own, which no command but `spark` lets
    import pandas or numpy (0.2-0.3 s and ~0.08 s that pyarrow would spend on them;
    groundwork.core.keepout), whose collector runs less often (GC_THRESHOLD), whose drop-in
    imports run without it (``_imports_without_gc``), and whose Ctrl-C or SIGTERM ends in one
    line however it reached the command (``_note_sigint``)."""
    gc.set_threshold(GC_THRESHOLD, *gc.get_threshold()[1:])
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _note_sigint)
    if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:   # (watch and serve stop on it themselves: exit 0)
        signal.signal(signal.SIGTERM, _note_sigint)
    if sys.argv[1:2] != ["spark"]:
        from groundwork.core.keepout import keep_out

        keep_out()
    main(_imports_without_gc)


if __name__ == "__main__":
    script()
