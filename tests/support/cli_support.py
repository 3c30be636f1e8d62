"""Run the real CLI entry point (groundwork.cli.main) in-process and capture what a user sees."""

from __future__ import annotations

import sys

import pytest

from groundwork import cli


def run_cli(monkeypatch, capsys, *args) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of `groundwork ARGS...`."""
    monkeypatch.setattr(sys, "argv", ["groundwork", *args])
    with pytest.raises(SystemExit) as exc:
        cli.main()
    out, err = capsys.readouterr()
    return exc.value.code, out, err
