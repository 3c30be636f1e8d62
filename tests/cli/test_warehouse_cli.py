"""Every command that takes --warehouse / -w: a warehouse of a newer groundwork and a file of another
application are refused with one line (exit 2), the file unchanged and nothing created beside
it; a warehouse written by the previous release (tests/fixtures/warehouse-v1.duckdb) is migrated
and then gives the verdicts it recorded."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import duckdb
import pytest

from cli_support import run_cli
from groundwork.core.warehouse import connect, schema_version
from ingest_support import EXAMPLE, PASS_RETRIEVAL, archive

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "warehouse-v1.duckdb"


def commands(w: Path, runs: Path, sources: Path, out: Path) -> dict[str, list[str]]:
    return {
        "ingest": ["ingest", str(runs), "-w", str(w)],
        "nightly": ["nightly", str(runs), "-w", str(w), "--sources", str(sources), "--out", str(out)],
        "lint": ["lint", "-w", str(w)],
        "verify": ["verify", "-w", str(w), "--sources", str(sources)],
        "drift": ["drift", "--sources", str(sources), "--from", "a", "--to", "b", "-w", str(w)],
        "sql": ["sql", "SELECT count(*) FROM runs", "-w", str(w)],
        "query": ["query", "runs_citing_source", "--param", "source_id=src:a", "-w", str(w)],
        "export": ["export", "--parquet", str(out), "-w", str(w)],
    }


COMMANDS = sorted(commands(Path(), Path(), Path(), Path()))


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    base = tmp_path_factory.mktemp("inputs")
    runs, _ = archive(base, PASS_RETRIEVAL)
    return runs, EXAMPLE / "sources.yaml"


def _newer(path: Path) -> None:
    connect(path).close()
    con = duckdb.connect(str(path))
    con.execute("UPDATE schema_info SET value = $v WHERE key = 'schema_version'", {"v": str(schema_version() + 1)})
    con.close()


def _foreign(path: Path) -> None:
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE x (a INTEGER); INSERT INTO x VALUES (42); CREATE VIEW runs AS SELECT a AS x FROM x")
    con.close()


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("kind, make, says", [("newer", _newer, "was written by a newer groundwork"),
                                              ("foreign", _foreign, "is not a groundwork warehouse")])
def test_a_warehouse_it_must_not_write_is_refused_in_one_line_untouched(tmp_path, monkeypatch, capsys, inputs,
                                                                       command, kind, make, says):
    runs, sources = inputs
    w = tmp_path / "given.duckdb"
    make(w)
    was = hashlib.sha256(w.read_bytes()).hexdigest()
    code, out, err = run_cli(monkeypatch, capsys, *commands(w, runs, sources, tmp_path / "out")[command])
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("groundwork: error: ") and says in err, err
    assert hashlib.sha256(w.read_bytes()).hexdigest() == was
    assert [p.name for p in tmp_path.iterdir()] == ["given.duckdb"]  # no .wal, no report folder


@pytest.fixture(scope="module")
def migrated(tmp_path_factory):
    """The v1 fixture, with what its lint recorded, then linted by this groundwork (which migrates it)."""
    base = tmp_path_factory.mktemp("migrated")
    w = base / "w.duckdb"
    shutil.copyfile(FIXTURE, w)
    con = duckdb.connect(str(w), read_only=True)
    recorded = con.execute("SELECT invocation_id, status, summary FROM latest_lint ORDER BY 1").fetchall()
    nightly = con.execute("SELECT runs_failing FROM nightlies").fetchall()
    con.close()
    return base, w, recorded, nightly[0][0]


def test_lint_on_a_migrated_v1_warehouse_gives_the_verdicts_it_recorded(migrated, monkeypatch, capsys):
    _, w, recorded, failing = migrated
    code, out, err = run_cli(monkeypatch, capsys, "lint", "-w", str(w), "--format", "jsonl")
    assert code == 1, err
    con = duckdb.connect(str(w), read_only=True)
    today = con.execute("SELECT invocation_id, status, summary FROM latest_lint ORDER BY 1").fetchall()
    version = con.execute("SELECT value FROM schema_info WHERE key = 'schema_version'").fetchall()
    con.close()
    assert version == [(str(schema_version()),)]
    assert len(today) == len(recorded) == 99 and today == recorded
    assert sum(1 for _, status, _ in today if status != "passed") == failing == 27


def test_a_nightly_on_a_migrated_v1_warehouse_finds_nothing_new(migrated, monkeypatch, capsys):
    base, w, _, failing = migrated
    shutil.copytree(EXAMPLE, base / "archive")
    code, out, err = run_cli(monkeypatch, capsys, "nightly", str(base / "archive" / "runs"), "-w", str(w),
                             "--sources", str(base / "archive" / "sources.yaml"), "--out", str(base / "reports"))
    assert code == 0, err
    assert f"since the previous nightly: 0 new failing, 0 resolved, {failing} still failing" in out
    summary = json.loads((base / "reports" / "summary.json").read_text(encoding="utf-8"))
    assert summary["totals"]["new_failing"] == 0
