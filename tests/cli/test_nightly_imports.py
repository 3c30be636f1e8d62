"""A nightly that finds nothing new imports neither pyarrow, the duckdb package nor pydantic
(issue 16 point 1); no nightly imports numpy or pandas.

pyarrow is imported where Arrow tables are built or read (a lint or verify pass that judges
runs, an ingest that writes rows), not at module top, and with it the duckdb package's Python
layer (its relational API and Arrow sources; DuckDB's engine, _duckdb, is all the rest needs:
groundwork.core.engine); typer's option values are coerced without pydantic
(groundwork.commands.coercion). Together they were ~0.3-0.5 s of the start-up of every nightly. The nightly runs as the `groundwork` script does (groundwork.cli.script), in a
process of its own, over a synthetic archive with class schemas, an index and an entry the
root should not have (archive-level issues, kept by a quick scan), whose files are older than
the quick scan's settling time (a scan looks again at runs written just before the last one).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from ingest_support import synthetic_runs

WATCHED = ("pyarrow", "duckdb", "pydantic", "numpy", "pandas")
# The console script, reporting at exit which of WATCHED the process imported.
SCRIPT = r"""
import atexit, sys
atexit.register(lambda: print("imported:", *[m for m in %r if m in sys.modules], file=sys.stderr))
sys.argv = ["groundwork", *sys.argv[1:]]
from groundwork.cli import script
script()
""" % (WATCHED,)


def _age(root, seconds: float) -> None:
    """Every file and folder under ``root`` (and root) last modified ``seconds`` ago."""
    then = time.time() - seconds
    for folder, dirs, files in os.walk(root, topdown=False):
        for name in files:
            os.utime(os.path.join(folder, name), (then, then))
        os.utime(folder, (then, then))


def _nightly(archive, tmp_path):
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, "nightly", str(archive / "runs"), "-w", str(tmp_path / "wh.duckdb"),
         "--sources", str(archive / "sources.yaml"), "--out", str(tmp_path / "reports"), "--json", "--quiet"],
        capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert out.returncode in (0, 1), out.stderr
    imported = [line for line in out.stderr.splitlines() if line.startswith("imported:")]
    assert len(imported) == 1, out.stderr
    return json.loads(out.stdout), imported[0].split()[1:]


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    folder = tmp_path_factory.mktemp("imports")
    runs = synthetic_runs(folder, 40, seed=16)
    (runs / "notes.txt").write_text("not a run folder\n")
    assert (runs / "schemas").is_dir() and (runs / "invocations.jsonl").is_file()
    _age(runs.parent, 3600)
    return runs.parent


def test_a_nightly_with_nothing_new_imports_neither_pyarrow_duckdb_nor_pydantic(archive, tmp_path):
    first, imported = _nightly(archive, tmp_path)
    assert first["ingest"]["runs_loaded"] == 40
    assert {"pyarrow", "duckdb"} <= set(imported)   # the first nightly parses and judges every run
    # with pyarrow, but without numpy or pandas (installed with the spark extra), which no
    # command but `spark` uses: groundwork.core.keepout
    assert not {"numpy", "pandas"} & set(imported)
    assert first["ingest"]["issues_by_kind"].get("unexpected-entry") == 1

    second, imported = _nightly(archive, tmp_path)
    assert second["ingest"]["scan"] == "quick"
    assert second["ingest"]["runs_loaded"] == 0 and second["ingest"]["runs_unchanged"] == 40
    assert imported == []
    # the same verdicts and archive-level issues as the first nightly found
    for key in ("runs_linted", "runs_failing", "severities", "warnings"):
        assert second[key] == first[key]
    assert second["ingest"]["issues_by_kind"] == first["ingest"]["issues_by_kind"]
    assert second["new_failing"] == 0 and second["exit_status"] == 0
