"""`groundwork ingest` progress output: a bar with runs/s on a terminal, plain lines otherwise,
nothing with --quiet; the summary reconciles the counts."""

from __future__ import annotations

import io

from groundwork.commands.ingest import _Progress, summary_lines
from groundwork.ingest import IngestResult


class _Stream(io.StringIO):
    def __init__(self, tty: bool):
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def _drive(progress):
    progress(0, 3)
    progress(1, None)
    progress(3, None)
    progress(3, 3)
    progress.close()


def test_terminal_gets_a_bar_with_runs_per_second():
    s = _Stream(True)
    _drive(_Progress(False, s))
    out = s.getvalue()
    assert "\ringest [" in out and "3/3 runs" in out and "runs/s" in out and out.endswith("\n")
    assert "##############################] 3/3" in out


def test_pipes_get_plain_lines_each_printed_once():
    s = _Stream(False)
    _drive(_Progress(False, s))
    lines = s.getvalue().splitlines()
    assert lines[0] == "ingest: 3 run folders"
    assert [line for line in lines if line.startswith("ingest: 3/3 runs")] == [lines[-1]]
    assert "\r" not in s.getvalue()


def test_quiet_prints_nothing():
    for tty in (True, False):
        s = _Stream(tty)
        _drive(_Progress(True, s))
        assert s.getvalue() == ""


def test_summary_reconciles_and_lists_issue_kinds():
    r = IngestResult(1, "/x", folders_seen=5, runs_loaded=3, runs_unchanged=1, runs_rejected=1, runs_missing=2,
                     issues_new=2, issues_by_kind={"bom": 1, "cycle": 2}, elapsed=1.25)
    assert summary_lines(r)[:2] == [
        "ingest: 5 folders seen = 3 loaded + 1 unchanged + 1 rejected; 2 missing from disk; 1.2 s",
        "ingest: 3 issues (2 new): bom 1, cycle 2",
    ]
    assert r.exit_code == 1
