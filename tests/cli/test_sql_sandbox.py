"""`groundwork sql` and `groundwork query` touch nothing but the warehouse unless --allow-files is
given: file reads and writes, ATTACH, INSTALL / LOAD, PREPARE / EXECUTE and SET are refused with one line (exit 2),
and nothing is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_support import run_cli
from groundwork.core.warehouse import connect
from groundwork.investigate import queries


@pytest.fixture(scope="module")
def place(tmp_path_factory):
    """A warehouse, a file beside it that SQL could read, and the folder watched for writes."""
    tmp_path = tmp_path_factory.mktemp("sandbox")
    w = tmp_path / "w.duckdb"
    con = connect(w)
    con.execute("INSERT INTO runs (invocation_id, agent_id) VALUES ('run-1', 'a')")
    con.close()
    (tmp_path / "secret.csv").write_text("user,password\nroot,hunter2\n")
    con = connect(":memory:")
    con.execute(f"COPY (SELECT 1 AS x) TO '{tmp_path / 'data.parquet'}' (FORMAT parquet)")
    con.close()
    return tmp_path, w


def refused_statements(d) -> dict[str, str]:
    return {
        "read_text": f"SELECT content FROM read_text('{d / 'secret.csv'}')",
        "read_csv": f"SELECT * FROM read_csv('{d / 'secret.csv'}')",
        "read_parquet": f"SELECT * FROM read_parquet('{d / 'data.parquet'}')",
        "a file as a table": f"SELECT * FROM '{d / 'secret.csv'}'",
        "glob": f"SELECT * FROM glob('{d}/*')",
        "COPY TO": f"COPY (SELECT * FROM runs) TO '{d / 'out.csv'}'",
        "EXPORT DATABASE": f"EXPORT DATABASE '{d / 'exported'}'",
        "ATTACH": f"ATTACH '{d / 'other.duckdb'}' AS other",
        "INSTALL": "INSTALL httpfs",
        "LOAD": "LOAD httpfs",
        "SET": "SET threads = 1; SELECT 1",
        "SET a path": f"SET temp_directory = '{d / 'spill'}'",
        "PRAGMA": "PRAGMA enable_profiling",
        # DuckDB's own switch lets these through: the warehouse file itself and its spill folder
        "ATTACH the warehouse again": f"ATTACH '{d / 'w.duckdb'}' AS again",
        "COPY into the spill folder": f"SELECT 1; COPY (SELECT * FROM runs) TO '{d / 'w.duckdb.tmp' / 'x.csv'}'",
        "DETACH": "DETACH again",
        "COPY prepared, then executed": f"PREPARE p AS COPY (SELECT * FROM runs) TO '{d / 'w.duckdb.tmp' / 'y.csv'}'; "
                                        "EXECUTE p",
        "EXECUTE": "EXECUTE p",
        # EXPLAIN ANALYZE runs the statement it explains
        "COPY inside EXPLAIN ANALYZE": f"EXPLAIN ANALYZE COPY (SELECT * FROM runs) TO '{d / 'w.duckdb.tmp' / 'z.csv'}'",
        "COPY inside EXPLAIN (options), after comments": (
            f"/* a */ explain -- b\n (ANALYZE, FORMAT json) copy (SELECT * FROM runs) TO '{d / 'w.duckdb.tmp' / 'z.csv'}'"),
        "COPY inside an EXPLAIN whose options cannot be read": (
            f"EXPLAIN (ANALYZE, FORMAT ')') COPY (SELECT * FROM runs) TO '{d / 'w.duckdb.tmp' / 'z.csv'}'"),
    }


NAMES = sorted(refused_statements(Path("/")))


def listing(d):
    return sorted((p.relative_to(d), p.stat().st_size) for p in d.rglob("*"))


@pytest.mark.parametrize("name", NAMES)
def test_sql_refuses_what_reaches_outside_the_warehouse(place, monkeypatch, capsys, name):
    d, w = place
    (d / "w.duckdb.tmp").mkdir(exist_ok=True)   # DuckDB makes it when it spills
    before = listing(d)
    code, out, err = run_cli(monkeypatch, capsys, "sql", refused_statements(d)[name], "-w", str(w))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("groundwork: error: ") and "--allow-files" in err, err
    assert "hunter2" not in err
    assert listing(d) == before


@pytest.mark.parametrize("name", ["read_text", "COPY TO", "SET"])
def test_a_saved_query_is_confined_too(place, tmp_path_factory, monkeypatch, capsys, name):
    d, w = place
    folder = tmp_path_factory.mktemp("queries")
    (folder / "sneaky.sql").write_text(f"-- title: Looks harmless\n{refused_statements(d)[name]}\n")
    monkeypatch.setattr(queries, "QUERIES_DIR", folder)
    before = listing(d)
    code, out, err = run_cli(monkeypatch, capsys, "query", "sneaky", "-w", str(w))
    assert code == 2 and err.count("\n") == 1 and "sneaky.sql" in err and "--allow-files" in err, err
    assert listing(d) == before


def test_the_warehouse_itself_and_temporary_views_stay_usable(place, monkeypatch, capsys):
    d, w = place
    code, out, err = run_cli(monkeypatch, capsys, "sql", "CREATE TEMP VIEW v AS SELECT agent_id FROM runs; "
                             "SELECT agent_id, count(*) AS n FROM v GROUP BY ALL", "-w", str(w), "-f", "csv")
    assert code == 0, err
    assert out == "agent_id,n\na,1\n"


def test_allow_files_lets_sql_read_and_write_files(place, tmp_path, monkeypatch, capsys):
    d, w = place
    code, out, err = run_cli(monkeypatch, capsys, "sql", f"SELECT password FROM read_csv('{d / 'secret.csv'}')",
                             "-w", str(w), "-f", "csv", "--allow-files")
    assert (code, out) == (0, "password\nhunter2\n"), err
    code, out, err = run_cli(monkeypatch, capsys, "sql", f"COPY (SELECT agent_id FROM runs) TO '{tmp_path / 'out.csv'}'",
                             "-w", str(w), "--allow-files")
    assert code == 0, err
    assert (tmp_path / "out.csv").read_text() == "agent_id\na\n"
