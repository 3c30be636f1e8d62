"""`groundwork export --parquet DIR`: Hive-partitioned Parquet that reads back to the same rows."""

from __future__ import annotations

import datetime as dt
import json

import duckdb
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from groundwork.investigate.export import export_parquet, tables
from groundwork.core.warehouse import connect
from investigation_support import build_corpus_warehouse, gw


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    """Three runs (one without completed_at), spans, and two lint passes on different days."""
    path = tmp_path_factory.mktemp("export") / "w.duckdb"
    con = connect(path)
    con.execute("""
        INSERT INTO runs (invocation_id, agent_id, completed_at, envelope_json) VALUES
            ('run-a', 'r3', TIMESTAMP '2026-09-25 23:59:59.999999', '{"k": [1, 2]}'),
            ('run-b', 'r3', TIMESTAMP '2026-09-26 00:00:00', NULL),
            ('run-c', 'hello', NULL, NULL);
        INSERT INTO spans (invocation_id, ord, name, span_id, start_time, end_time) VALUES
            ('run-a', 0, 'invoke_agent', 'aa', TIMESTAMP '2026-09-25 23:59:58.000001', TIMESTAMP '2026-09-25 23:59:59.5'),
            ('run-b', 0, 'invoke_agent', 'bb', TIMESTAMP '2026-09-25 23:59:59', TIMESTAMP '2026-09-26 00:00:00'),
            ('run-c', 0, 'invoke_agent', 'cc', NULL, NULL);
        INSERT INTO lints (lint_id, kind, started_at) VALUES
            (1, 'lint', TIMESTAMP '2026-11-29 02:00:00'), (2, 'lint', TIMESTAMP '2026-11-30 02:00:00');
        INSERT INTO lint_verdicts (lint_id, invocation_id, status, passed) VALUES
            (1, 'run-a', 'passed', true), (1, 'run-b', 'passed', true),
            (2, 'run-a', 'failed', false), (2, 'run-b', 'passed', true), (2, 'run-c', 'unlintable', false);
        INSERT INTO lint_violations VALUES (2, 'run-a', 0, 'G3', 'G3: evidence ''src:a'' hash 0123456789ab… not in trace');
    """)
    con.close()
    return path


def read(root, table):
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    return con, f"read_parquet('{root / table}/**/*.parquet', hive_partitioning = true)"


def test_every_table_is_exported_with_its_row_count(warehouse, tmp_path):
    out = tmp_path / "pq"
    con = connect(warehouse, read_only=True)
    manifest = export_parquet(con, out)
    names = tables(con)
    counts = {t: con.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in names}
    con.close()
    assert json.loads((out / "manifest.json").read_text()) == manifest
    assert set(manifest["tables"]) == set(names)
    for table in names:
        reader, rel = read(out, table)
        assert reader.execute(f"SELECT count(*) FROM {rel}").fetchone()[0] == counts[table], table
        assert manifest["tables"][table]["rows"] == counts[table]


def test_runs_are_partitioned_by_completion_date_and_verdicts_by_lint_date(warehouse, tmp_path):
    out = tmp_path / "pq"
    con = connect(warehouse, read_only=True)
    export_parquet(con, out)
    con.close()
    assert sorted(p.name for p in (out / "runs").iterdir()) == [
        "completed_date=2026-09-25", "completed_date=2026-09-26", "completed_date=__HIVE_DEFAULT_PARTITION__"]
    assert sorted(p.name for p in (out / "spans").iterdir()) == sorted(p.name for p in (out / "runs").iterdir())
    assert sorted(p.name for p in (out / "lint_verdicts").iterdir()) == ["lint_date=2026-11-29", "lint_date=2026-11-30"]
    reader, rel = read(out, "runs")
    assert reader.execute(f"SELECT invocation_id, completed_date FROM {rel} ORDER BY 1").fetchall() == [
        ("run-a", dt.date(2026, 9, 25)), ("run-b", dt.date(2026, 9, 26)), ("run-c", None)]
    reader, rel = read(out, "lint_verdicts")
    assert reader.execute(f"SELECT lint_id, invocation_id, status, lint_date FROM {rel} ORDER BY 1, 2").fetchall() == [
        (1, "run-a", "passed", dt.date(2026, 11, 29)), (1, "run-b", "passed", dt.date(2026, 11, 29)),
        (2, "run-a", "failed", dt.date(2026, 11, 30)), (2, "run-b", "passed", dt.date(2026, 11, 30)),
        (2, "run-c", "unlintable", dt.date(2026, 11, 30))]


def test_timestamps_are_utc_microseconds_and_json_is_text(warehouse, tmp_path):
    out = tmp_path / "pq"
    con = connect(warehouse, read_only=True)
    export_parquet(con, out)
    con.close()
    schema = pq.read_schema(next((out / "spans").glob("completed_date=2026-09-25/*.parquet")))
    assert str(schema.field("start_time").type) == "timestamp[us, tz=UTC]"
    assert "completed_date" not in schema.names  # the partition lives in the path only
    for file in out.rglob("*.parquet"):  # Spark reads neither nanosecond timestamps nor DuckDB's JSON type
        for field in pq.read_schema(file):
            assert "[ns" not in str(field.type), (file, field)
            assert not str(field.type).startswith("extension"), (file, field)
    rows = ds.dataset(out / "runs", format="parquet", partitioning="hive").to_table().to_pylist()
    run_a = next(r for r in rows if r["invocation_id"] == "run-a")
    assert run_a["completed_at"] == dt.datetime(2026, 9, 25, 23, 59, 59, 999999, tzinfo=dt.timezone.utc)
    assert json.loads(run_a["envelope_json"]) == {"k": [1, 2]}


def test_an_empty_table_still_has_a_readable_file(tmp_path):
    path = tmp_path / "empty.duckdb"
    connect(path).close()
    out = tmp_path / "pq"
    con = connect(path, read_only=True)
    export_parquet(con, out)
    con.close()
    reader, rel = read(out, "lint_violations")
    assert [c[0] for c in reader.execute(f"DESCRIBE SELECT * FROM {rel}").fetchall()][:5] == [
        "lint_id", "invocation_id", "seq", "code", "message"]
    assert reader.execute(f"SELECT count(*) FROM {rel}").fetchone() == (0,)


def test_cli_refuses_a_non_empty_directory_unless_overwrite(warehouse, tmp_path, monkeypatch, capsys):
    out = tmp_path / "pq"
    code, stdout, _ = gw(monkeypatch, capsys, "export", "--parquet", str(out), "-w", str(warehouse))
    assert code == 0 and f"to {out}" in stdout
    code, _, err = gw(monkeypatch, capsys, "export", "--parquet", str(out), "-w", str(warehouse))
    assert code == 2 and "is not empty" in err
    stale = out / "runs" / "completed_date=1999-01-01"
    stale.mkdir()
    code, _, _ = gw(monkeypatch, capsys, "export", "--parquet", str(out), "-w", str(warehouse), "--overwrite")
    assert code == 0 and not stale.exists()  # an overwrite never mixes two exports


def test_overwrite_replaces_only_an_earlier_export_never_a_folder_of_another_kind(warehouse, tmp_path, monkeypatch,
                                                                                   capsys):
    # a run store: its runs/ has a table's name; --overwrite once deleted it
    store = tmp_path / "store"
    (store / "runs" / "run-1").mkdir(parents=True)
    (store / "runs" / "run-1" / "grounding.txt").write_text("recorded\n")
    (store / "sources.yaml").write_text("sources: []\n")
    before = sorted(p.relative_to(store) for p in store.rglob("*"))
    code, out, err = gw(monkeypatch, capsys, "export", "--parquet", str(store), "-w", str(warehouse), "--overwrite")
    assert (code, out) == (2, "") and err.count("\n") == 1 and "holds no earlier groundwork export" in err
    assert sorted(p.relative_to(store) for p in store.rglob("*")) == before
    assert (store / "runs" / "run-1" / "grounding.txt").read_text() == "recorded\n"


def test_corpus_export_reads_back_with_the_same_verdicts(tmp_path, corpus_dir):
    path = build_corpus_warehouse(tmp_path / "corpus.duckdb", corpus_dir)
    out = tmp_path / "pq"
    con = connect(path, read_only=True)
    export_parquet(con, out)
    expected = {
        "runs": con.execute("SELECT count(*) FROM runs").fetchone()[0],
        "spans": con.execute("SELECT count(*) FROM spans").fetchone()[0],
        "lint": con.execute("SELECT lint_id, invocation_id, status, summary FROM lint_verdicts ORDER BY 1, 2").fetchall(),
        "verify": con.execute("SELECT lint_id, invocation_id, status, summary FROM verify_verdicts ORDER BY 1, 2").fetchall(),
        "violations": con.execute("SELECT lint_id, invocation_id, seq, code, message FROM lint_violations ORDER BY 1, 2, 3").fetchall(),
    }
    con.close()
    assert expected["runs"] == 99 and len(expected["lint"]) == 99
    reader, runs = read(out, "runs")
    assert reader.execute(f"SELECT count(*) FROM {runs}").fetchone()[0] == expected["runs"]
    _, spans = read(out, "spans")
    assert reader.execute(f"SELECT count(*) FROM {spans}").fetchone()[0] == expected["spans"]
    for table, key in (("lint_verdicts", "lint"), ("verify_verdicts", "verify")):
        _, rel = read(out, table)
        got = reader.execute(f"SELECT lint_id, invocation_id, status, summary FROM {rel} ORDER BY 1, 2").fetchall()
        assert got == expected[key]
    _, rel = read(out, "lint_violations")
    assert reader.execute(f"SELECT lint_id, invocation_id, seq, code, message FROM {rel} ORDER BY 1, 2, 3").fetchall() == expected["violations"]


def test_an_export_that_cannot_be_written_is_one_line_and_leaves_nothing(warehouse, tmp_path, monkeypatch, capsys):
    """A folder that cannot be made, or a path that is not UTF-8 (DuckDB's COPY cannot take it),
    once ended in "internal error" and the latter left a half-made folder behind."""
    blocked = tmp_path / "file"
    blocked.write_text("x")
    code, out, err = gw(monkeypatch, capsys, "export", "-w", str(warehouse), "--parquet", str(blocked / "sub" / "ex"))
    assert code == 2 and err.startswith("groundwork: error: cannot write the export to ") and err.count("\n") == 1, err
    bad = str(tmp_path / "ex") + "\udcff"   # a byte that is not UTF-8, as the shell hands it over
    code, out, err = gw(monkeypatch, capsys, "export", "-w", str(warehouse), "--parquet", bad)
    assert code == 2 and "is not a UTF-8 path" in err and err.count("\n") == 1, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]
