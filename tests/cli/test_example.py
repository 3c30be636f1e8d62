"""warehouse.duckdb.example: current, small, portable, and the README's commands work on it."""

from __future__ import annotations

import re
import shlex
import shutil

import duckdb
import pytest

from groundwork.jobs import example
from groundwork.core.paths import ROOT
from investigation_support import gw

README = ROOT / "README.md"


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    return example.build(tmp_path_factory.mktemp("example") / "fresh.duckdb")


def test_the_committed_example_is_current(fresh):
    assert example.EXAMPLE_PATH.exists(), "run: groundwork example build"
    assert example.differences(example.EXAMPLE_PATH, fresh) == [], "warehouse.duckdb.example is stale: run `groundwork example build`"


def test_a_changed_verdict_makes_it_stale(fresh, tmp_path):
    changed = tmp_path / "changed.duckdb"
    shutil.copy(fresh, changed)
    con = duckdb.connect(str(changed))
    con.execute("UPDATE lint_verdicts SET status = 'passed' WHERE status = 'failed' AND invocation_id = (SELECT min(invocation_id) FROM lint_verdicts WHERE status = 'failed')")
    con.close()
    assert example.differences(fresh, changed) == ["table lint_verdicts"]


def test_build_times_do_not_count_as_staleness(fresh, tmp_path):
    rebuilt = tmp_path / "rebuilt.duckdb"
    shutil.copy(fresh, rebuilt)
    con = duckdb.connect(str(rebuilt))
    con.execute("UPDATE lints SET started_at = started_at + INTERVAL 1 DAY, finished_at = finished_at + INTERVAL 1 DAY")
    con.execute("UPDATE run_files SET mtime_ns = mtime_ns + 1")
    con.close()
    assert example.differences(fresh, rebuilt) == []


def test_the_example_holds_every_run_of_the_archive_and_no_machine_paths():
    folders = [p for p in (example.ARCHIVE_DIR / "runs").iterdir() if p.is_dir() and p.name != "schemas"]
    con = duckdb.connect(str(example.EXAMPLE_PATH), read_only=True)
    assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == len(folders)
    assert con.execute("SELECT count(*) FROM run_summary WHERE lint_status IS NULL OR verify_status IS NULL").fetchone() == (0,)
    assert con.execute("SELECT runs_dir FROM ingests").fetchall() == [("examples/archive/runs",)]
    for table, column in con.execute("""SELECT table_name, column_name FROM duckdb_columns()
                                        WHERE data_type IN ('VARCHAR', 'JSON') AND table_name IN (SELECT table_name FROM duckdb_tables())""").fetchall():
        hits = con.execute(f'SELECT count(*) FROM "{table}" WHERE CAST("{column}" AS VARCHAR) LIKE ?', [f"%{ROOT}%"]).fetchone()[0]
        assert hits == 0, f"{table}.{column} holds the build machine's path"
    con.close()
    assert example.EXAMPLE_PATH.stat().st_size < 2 * 1024 * 1024


def _readme_section() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("## Investigating with SQL")
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else len(text)]


def test_readme_groundwork_commands_run_on_the_example(monkeypatch, capsys):
    lines = [line for line in _readme_section().splitlines() if line.startswith("groundwork ")]
    assert any(" sql " in line for line in lines) and any(" query " in line for line in lines)
    for line in lines:
        code, out, err = gw(monkeypatch, capsys, *shlex.split(line)[1:])
        assert code == 0, f"{line}\n{err}"
        assert out.strip(), line


def test_readme_duckdb_shell_sql_runs_on_the_example():
    section = _readme_section()
    assert "duckdb -readonly warehouse.duckdb.example" in section
    blocks = re.findall(r"```sql\n(.*?)```", section, re.S)
    con = duckdb.connect(str(example.EXAMPLE_PATH), read_only=True)
    for sql in blocks:
        assert con.execute(sql).fetchall()
    con.close()


def test_build_never_replaces_another_file_and_names_what_it_cannot_write(tmp_path, monkeypatch, capsys):
    # --out an existing CSV or warehouse was replaced in silence; a folder or a missing folder
    # was an internal error
    (tmp_path / "mine.csv").write_text("a,b\n")
    cases = {tmp_path / "mine.csv": "exists; example build writes a new file",
             tmp_path: "is a directory",
             tmp_path / "nodir" / "x.duckdb": "does not exist"}
    for out, words in cases.items():
        code, stdout, err = gw(monkeypatch, capsys, "example", "build", "--out", str(out))
        assert (code, stdout) == (2, "") and words in err and err.count("\n") == 1, err
    assert (tmp_path / "mine.csv").read_text() == "a,b\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.csv"]
