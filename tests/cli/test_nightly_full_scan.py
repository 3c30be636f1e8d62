"""The nightly's ingest is a quick scan, a full scan every N nightlies (the count kept in the
warehouse) or with --full-scan; the reports say when the last full scan ran."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import duckdb
import pytest

from cli_support import run_cli
from groundwork.jobs.nightly import run_nightly
from groundwork.synth import generate
from ingest_support import span_lines, write_span_lines

OLD = time.time_ns() - 3600 * 10**9


@pytest.fixture(scope="module")
def synth(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("fullscan")
    generate(base / "a", 12, seed=21, violation_rate=0.3, workers=1)
    return base / "a" / "runs"


@pytest.fixture
def runs(tmp_path, synth) -> Path:
    """A copy whose files and folders carry mtimes of an hour ago (written during the day)."""
    runs = tmp_path / "archive" / "runs"
    shutil.copytree(synth, runs)
    for dirpath, dirnames, filenames in os.walk(runs, topdown=False):
        for name in filenames + dirnames:
            os.utime(os.path.join(dirpath, name), ns=(OLD, OLD))
    os.utime(runs, ns=(OLD, OLD))
    return runs


def edit_in_place(runs: Path, name: str = "edited in place") -> str:
    victim = sorted(p.name for p in runs.iterdir() if p.is_dir() and p.name != "schemas")[2]
    lines = span_lines(runs / victim)
    lines[0]["name"] = name
    write_span_lines(runs / victim, lines)
    return victim


def scans(warehouse: Path) -> list[tuple]:
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        return con.execute("SELECT i.scan, i.runs_loaded FROM nightlies n JOIN ingests i USING (ingest_id) "
                           "ORDER BY n.nightly_id").fetchall()
    finally:
        con.close()


def test_every_n_nightlies_a_full_scan_catches_an_in_place_edit(runs, tmp_path):
    wh, out = tmp_path / "w.duckdb", tmp_path / "out"
    first = run_nightly(runs, out=out, warehouse=wh, full_scan_every=3)
    victim = edit_in_place(runs)
    second = run_nightly(runs, out=out, warehouse=wh, full_scan_every=3)
    third = run_nightly(runs, out=out, warehouse=wh, full_scan_every=3)
    fourth = run_nightly(runs, out=out, warehouse=wh, full_scan_every=3)
    assert scans(wh) == [("full", 12), ("quick", 0), ("quick", 0), ("full", 1)]
    assert fourth.ingest.changed_runs == [victim]
    # the reports say when the last full scan ran: tonight's, then the first one's
    summary = json.loads((out / "summary.json").read_text())
    assert summary["passes"]["ingest"]["scan"] == "full"
    assert summary["passes"]["ingest"]["last_full_scan_at"] == summary["passes"]["ingest"]["started_at"]
    assert f"Last full scan of the archive: {summary['passes']['ingest']['started_at']} (tonight: full scan)." \
        in (out / "summary.md").read_text()
    assert first.ingest.scan == "full" and (second.ingest.scan, third.ingest.scan) == ("quick", "quick")


def test_the_reports_of_a_quick_nightly_name_the_last_full_scan(runs, tmp_path):
    wh, out = tmp_path / "w.duckdb", tmp_path / "out"
    first = run_nightly(runs, out=out, warehouse=wh)
    first_started = json.loads((out / "summary.json").read_text())["passes"]["ingest"]["started_at"]
    second = run_nightly(runs, out=out, warehouse=wh)
    assert (first.ingest.scan, second.ingest.scan) == ("full", "quick")
    ingest = json.loads((out / "summary.json").read_text())["passes"]["ingest"]
    assert (ingest["scan"], ingest["last_full_scan_at"]) == ("quick", first_started)
    assert ingest["started_at"] != first_started or second.ingest.ingest_id != first.ingest.ingest_id
    assert f"Last full scan of the archive: {first_started} (tonight: quick scan)." in (out / "summary.md").read_text()
    html = (out / "fleet.html").read_text()
    assert f'id="last-full-scan">{first_started} (tonight: quick scan)' in html


def test_nightly_and_ingest_full_scan_flags(runs, tmp_path, monkeypatch, capsys):
    wh, out = tmp_path / "w.duckdb", tmp_path / "out"
    assert run_cli(monkeypatch, capsys, "nightly", str(runs), "--warehouse", str(wh), "--out", str(out))[0] in (0, 1)
    edit_in_place(runs)
    code, _, err = run_cli(monkeypatch, capsys, "ingest", str(runs), "--warehouse", str(wh))
    assert "0 loaded" in err
    code, _, err = run_cli(monkeypatch, capsys, "nightly", str(runs), "--warehouse", str(wh), "--out", str(out),
                           "--full-scan-every", "0")
    assert code in (0, 1) and scans(wh)[-1] == ("quick", 0)
    code, _, err = run_cli(monkeypatch, capsys, "nightly", str(runs), "--warehouse", str(wh), "--out", str(out),
                           "--full-scan")
    assert code in (0, 1) and scans(wh)[-1] == ("full", 1)
    edit_in_place(runs, "edited again")
    code, _, err = run_cli(monkeypatch, capsys, "ingest", str(runs), "--warehouse", str(wh), "--full-scan")
    assert "1 loaded" in err
