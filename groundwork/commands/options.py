"""The options every command shares (--warehouse, --sources, --config, --json) and the settings
they resolve through groundwork.toml and the environment (groundwork.core.config: flag >
environment > file > default)."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

import orjson
import typer

from groundwork.core import config as _config
from groundwork.core.errors import GroundworkError
from groundwork.core.pathtext import checked_path
from groundwork.core.warehouse import DEFAULT_PATH

def warehouse_option(note: str = ""):
    """-w/--warehouse; ``note`` follows "Warehouse file" (e.g. ", opened read-only")."""
    return typer.Option(None, "--warehouse", "-w", metavar="PATH", show_default=False,
                        help=f"Warehouse file{note} (else $GROUNDWORK_WAREHOUSE, then groundwork.toml's warehouse, "
                             f"then {DEFAULT_PATH}).")


def sources_option(help: str):
    return typer.Option(None, "--sources", "-s", metavar="FILE", help=help, show_default=False)


def config_option():
    return typer.Option(None, "--config", metavar="FILE", show_default=False,
                        help="Settings file (default: ./groundwork.toml when there is one).")


def json_option():
    return typer.Option(False, "--json", help="Print one JSON document on stdout (counts, exit reason, files written) instead of the text.")


GLOBAL = {"config": None}  # `groundwork --config FILE CMD`: set by the app's callback (cli.build_app)


def settings(config: str | None) -> _config.Config:
    """The configuration of this command: its --config, else the global one (groundwork --config
    FILE CMD), else ./groundwork.toml."""
    return _config.load(config if config is not None else GLOBAL["config"])


def warehouse(flag: str | None, cfg: _config.Config) -> str:
    return checked_path(_config.resolve("warehouse", flag, cfg, DEFAULT_PATH), "warehouse")


def sources(flag: str | None, cfg: _config.Config, default=None):
    found = _config.resolve("sources", flag, cfg, default)
    return None if found is None else checked_path(found, "sources file")


def called() -> str:
    """The program as the user called it, for hint lines that work when pasted."""
    return sys.argv[0] if Path(sys.argv[0]).name == "groundwork" else "groundwork"


@contextlib.contextmanager
def json_errors(command: str, enabled: bool):
    """With --json, a job that cannot be done still prints its one JSON document (exit status 2
    and the reason) before the usual one line on stderr."""
    try:
        yield
    except GroundworkError as exc:
        if enabled:
            print_json({"command": command, "exit_status": 2, "exit_reason": str(exc)})
        raise


def print_json(doc: dict) -> None:
    """The one JSON document of --json, on stdout."""
    sys.stdout.buffer.write(orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS, default=str) + b"\n")
    sys.stdout.flush()
