"""`groundwork sql`: read-only, streamed, five output formats, one-line DuckDB errors with positions."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import textwrap

import duckdb
import pytest

from groundwork.investigate.session import error_position
from groundwork.core.warehouse import connect
from investigation_support import gw


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    """A warehouse file with two hand-made runs (tests only read it)."""
    path = tmp_path_factory.mktemp("sql") / "w.duckdb"
    con = connect(path)
    con.execute("""
        INSERT INTO runs (invocation_id, agent_id, grounding_mode, completed_at, evidence_count, envelope_json)
        VALUES ('run-1', 'r3.advisor', 'retrieval', TIMESTAMP '2026-09-25 10:15:31.401901', 2, '{"a": [1, "x"]}'),
               ('run-2', 'hello|world', NULL, NULL, 0, NULL)
    """)
    con.close()
    return path


QUERY = "SELECT invocation_id, agent_id, grounding_mode, evidence_count, completed_at FROM runs ORDER BY 1"


def test_table_is_aligned_with_nulls_and_a_row_count(warehouse, monkeypatch, capsys):
    code, out, err = gw(monkeypatch, capsys, "sql", QUERY, "--warehouse", str(warehouse))
    assert code == 0, err
    assert out == textwrap.dedent("""\
        invocation_id | agent_id    | grounding_mode | evidence_count | completed_at
        --------------+-------------+----------------+----------------+---------------------------
        run-1         | r3.advisor  | retrieval      |              2 | 2026-09-25 10:15:31.401901
        run-2         | hello|world | NULL           |              0 | NULL
        (2 rows)
        """)


def test_table_cuts_long_cells_and_escapes_newlines(warehouse, monkeypatch, capsys):
    code, out, _ = gw(monkeypatch, capsys, "sql", "SELECT 'abcdefghij' AS s, 'a' || chr(10) || 'b' AS t",
                      "--warehouse", str(warehouse), "--max-width", "5")
    assert code == 0
    assert out.splitlines() == ["s     | t", "------+-----", "abcd… | a\\nb", "(1 row)"]


def test_csv(warehouse, monkeypatch, capsys):
    code, out, _ = gw(monkeypatch, capsys, "sql", QUERY, "-w", str(warehouse), "--format", "csv")
    assert code == 0
    assert out == ("invocation_id,agent_id,grounding_mode,evidence_count,completed_at\n"
                   "run-1,r3.advisor,retrieval,2,2026-09-25 10:15:31.401901\n"
                   "run-2,hello|world,,0,\n")


def test_json_and_jsonl_embed_json_columns_and_keep_types(warehouse, monkeypatch, capsys):
    sql = "SELECT invocation_id, evidence_count, envelope_json, completed_at FROM runs ORDER BY 1"
    code, out, _ = gw(monkeypatch, capsys, "sql", sql, "-w", str(warehouse), "--format", "json")
    assert code == 0
    rows = json.loads(out)
    assert rows == [
        {"invocation_id": "run-1", "evidence_count": 2, "envelope_json": {"a": [1, "x"]},
         "completed_at": "2026-09-25T10:15:31.401901"},
        {"invocation_id": "run-2", "evidence_count": 0, "envelope_json": None, "completed_at": None},
    ]
    code, out, _ = gw(monkeypatch, capsys, "sql", sql, "-w", str(warehouse), "--format", "jsonl")
    assert [json.loads(line) for line in out.splitlines()] == rows


def test_json_of_an_empty_result_is_an_empty_array(warehouse, monkeypatch, capsys):
    code, out, _ = gw(monkeypatch, capsys, "sql", "SELECT * FROM runs WHERE false", "-w", str(warehouse), "-f", "json")
    assert code == 0 and json.loads(out) == []


def test_markdown_escapes_pipes_and_right_aligns_numbers(warehouse, monkeypatch, capsys):
    code, out, _ = gw(monkeypatch, capsys, "sql", "SELECT agent_id, evidence_count FROM runs ORDER BY 1",
                      "-w", str(warehouse), "-f", "markdown")
    assert code == 0
    assert out == ("| agent\\_id | evidence\\_count |\n|---|---:|\n"
                   "| hello\\|world | 0 |\n| r3.advisor | 2 |\n")


def test_markdown_shows_a_runs_markup_as_text(warehouse, monkeypatch, capsys):
    """`--format markdown` is for pasting where Markdown is rendered: a run's string must not
    become HTML, a link, emphasis or an entity there (`&amp;` is shown as those five characters)."""
    code, out, _ = gw(monkeypatch, capsys, "sql", "SELECT '<script>x</script> [l](javascript:alert(1)) *b* &amp;' AS s",
                      "-w", str(warehouse), "-f", "markdown")
    assert code == 0
    assert out.splitlines()[2] == ("| \\<script\\>x\\</script\\> \\[l\\]\\(javascript\\:alert\\(1\\)\\) "
                                   "\\*b\\* \\&amp; |")


def test_several_statements_show_the_last_result(warehouse, monkeypatch, capsys):
    code, out, _ = gw(monkeypatch, capsys, "sql",
                      "CREATE TEMP VIEW v AS SELECT 41 AS x; SELECT x + 1 AS y FROM v", "-w", str(warehouse), "-f", "csv")
    assert (code, out) == (0, "y\n42\n")


def test_big_results_stream_in_batches(warehouse, monkeypatch, capsys):
    code, out, _ = gw(monkeypatch, capsys, "sql", "SELECT range AS i FROM range(50000)", "-w", str(warehouse), "-f", "jsonl")
    lines = out.splitlines()
    assert code == 0 and len(lines) == 50000 and json.loads(lines[-1]) == {"i": 49999}


def test_sql_error_is_one_line_with_its_position_and_exit_2(warehouse, monkeypatch, capsys):
    code, out, err = gw(monkeypatch, capsys, "sql", "SELECT 1;\nSELECT agent_id,\n  nonesuch FROM runs", "-w", str(warehouse))
    assert code == 2 and out == ""
    assert err.count("\n") == 1
    assert err.startswith('groundwork: error: Binder Error: Referenced column "nonesuch" not found')
    assert err.rstrip().endswith("(at line 3, column 3)")


def test_syntax_error_position(warehouse, monkeypatch, capsys):
    code, _, err = gw(monkeypatch, capsys, "sql", "SELECT * FORM runs", "-w", str(warehouse))
    assert code == 2
    assert err == 'groundwork: error: Parser Error: syntax error at or near "runs" (at line 1, column 15)\n'


def test_error_position_inside_a_line_duckdb_shortens():
    sql = "SELECT " + ", ".join(f"a AS c{i}" for i in range(40)) + ", zz, " + ", ".join(f"a AS d{i}" for i in range(40)) + " FROM t"
    con = duckdb.connect()
    con.execute("CREATE TABLE t (a INTEGER)")
    with pytest.raises(duckdb.BinderException) as info:
        con.execute(sql)
    assert "LINE 1: ..." in str(info.value)  # DuckDB printed only part of the line
    assert error_position(sql, str(info.value)) == (1, sql.index("zz") + 1)


def test_the_connection_is_read_only(warehouse, monkeypatch, capsys):
    code, _, err = gw(monkeypatch, capsys, "sql", "DELETE FROM runs", "-w", str(warehouse))
    assert code == 2 and "read-only" in err
    con = connect(warehouse, read_only=True)
    assert con.execute("SELECT count(*) FROM runs").fetchone() == (2,)
    con.close()


def test_missing_warehouse_is_a_clear_error(tmp_path, monkeypatch, capsys):
    code, _, err = gw(monkeypatch, capsys, "sql", "SELECT 1", "-w", str(tmp_path / "none.duckdb"))
    assert code == 2 and "does not exist" in err


def test_a_warehouse_held_by_a_writer_gets_a_clear_message(warehouse, monkeypatch, capsys):
    holder = subprocess.Popen(
        [sys.executable, "-c", "import duckdb, sys; c = duckdb.connect(sys.argv[1]); print('ready', flush=True); sys.stdin.read()",
         str(warehouse)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "ready"
        code, out, err = gw(monkeypatch, capsys, "sql", "SELECT 1", "-w", str(warehouse))
    finally:
        holder.communicate("")
    assert code == 2 and out == ""
    assert f"warehouse {warehouse} is locked by another process" in err
    assert f"(PID {holder.pid})" in err


def test_no_progress_bar_is_drawn_into_the_output(warehouse, monkeypatch, capsys):
    """DuckDB draws a progress bar for queries slower than 2 s; it must never mix with results."""
    code, out, _ = gw(monkeypatch, capsys, "sql", "SELECT current_setting('enable_progress_bar') AS bar", "-w", str(warehouse), "-f", "csv")
    assert (code, out) == (0, "bar\nfalse\n")


def test_sql_from_stdin(warehouse, monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.StringIO("SELECT count(*) AS n\nFROM runs"))
    code, out, _ = gw(monkeypatch, capsys, "sql", "-", "-w", str(warehouse), "-f", "csv")
    assert (code, out) == (0, "n\n2\n")


def test_json_handles_every_duckdb_type(warehouse, monkeypatch, capsys):
    sql = ("SELECT 170141183460469231731687303715884105727::HUGEINT AS big, 'nan'::DOUBLE AS nan, 2.50::DECIMAL(5, 2) AS dec, "
           "DATE '2026-01-02' AS day, MAP {'k': [1, 2]} AS m, {'s': 'x'} AS st, '{\"z\": [1]}'::JSON AS j")
    code, out, err = gw(monkeypatch, capsys, "sql", sql, "-w", str(warehouse), "-f", "jsonl")
    assert code == 0, err
    assert json.loads(out) == {"big": 170141183460469231731687303715884105727, "nan": None, "dec": 2.5,
                               "day": "2026-01-02", "m": {"k": [1, 2]}, "st": {"s": "x"}, "j": {"z": [1]}}


def test_json_keeps_every_digit_of_a_decimal(warehouse, monkeypatch, capsys):
    # a DECIMAL went through a float: 1.2345678901234567 for the 30 digits below
    sql = ("SELECT 1.234567890123456789012345678901::DECIMAL(38, 30) AS d, [0.1::DECIMAL(20, 19)] AS l, "
           "170141183460469231731687303715884105727::HUGEINT AS h, 2.50::DECIMAL(5, 2) AS two")
    for fmt in ("json", "jsonl"):
        code, out, err = gw(monkeypatch, capsys, "sql", sql, "-w", str(warehouse), "-f", fmt)
        assert code == 0, err
        assert ('"d":1.234567890123456789012345678901,"l":[0.1000000000000000000],'
                '"h":170141183460469231731687303715884105727,"two":2.50') in out


HOSTILE = ("SELECT 'a' || chr(27) || '[31m' || chr(13) || 'b' || chr(8238) || chr(7) AS s, 1 AS s, "
           "[1.5, 'nan'::DOUBLE, 'inf'::DOUBLE] AS l, 170141183460469231731687303715884105727::HUGEINT AS h")


def test_table_and_markdown_show_control_characters_never_send_them(warehouse, monkeypatch, capsys):
    """A run's strings reach the terminal through `groundwork sql`: an escape sequence, a CR, a
    bidi override or a bell must be shown, not acted on (they once passed through raw)."""
    code, out, _ = gw(monkeypatch, capsys, "sql", HOSTILE, "-w", str(warehouse), "--max-width", "60")
    assert code == 0
    assert out.splitlines()[2].startswith("a\\x1b[31m\\rb\\u202e\\x07 | 1 |")
    code, out, _ = gw(monkeypatch, capsys, "sql", HOSTILE, "-w", str(warehouse), "--format", "markdown")
    assert code == 0
    assert out.splitlines()[2].startswith("| a\\\\x1b\\[31m<br>b\\\\u202e\\\\x07 | 1 |")
    assert "\x1b" not in out and "\r" not in out and "\u202e" not in out and "\x07" not in out


def test_csv_and_json_keep_every_value_and_column(warehouse, monkeypatch, capsys):
    """A CR inside a field is quoted (it once broke the row); json keeps both columns named s
    (one was lost) and writes NaN/infinity inside a list as null even on the exact path a
    128-bit integer takes (it wrote NaN, which is not JSON)."""
    import csv as csv_mod

    code, out, _ = gw(monkeypatch, capsys, "sql", HOSTILE, "-w", str(warehouse), "--format", "csv")
    assert code == 0
    rows = list(csv_mod.reader(io.StringIO(out, newline="")))
    assert rows == [["s", "s", "l", "h"],
                    ["a\x1b[31m\rb\u202e\x07", "1", "[1.5, nan, inf]", "170141183460469231731687303715884105727"]]
    for fmt in ("json", "jsonl"):
        code, out, _ = gw(monkeypatch, capsys, "sql", HOSTILE, "-w", str(warehouse), "--format", fmt)
        assert code == 0
        doc = json.loads(out) if fmt == "json" else [json.loads(line) for line in out.splitlines()]
        assert doc == [{"s": "a\x1b[31m\rb\u202e\x07", "s_2": 1, "l": [1.5, None, None],
                        "h": 170141183460469231731687303715884105727}]


def test_sql_that_is_not_utf8_is_one_clear_line(warehouse, monkeypatch, capsys):
    """Bytes that are not UTF-8 (in an argument, decoded with surrogateescape) once ended in
    "internal error: TypeError"."""
    code, out, err = gw(monkeypatch, capsys, "sql", "SELECT 1 AS \udcff", "-w", str(warehouse))
    assert (code, out) == (2, "")
    assert err == "groundwork: error: the SQL is not valid UTF-8 text (character 13)\n"


@pytest.mark.parametrize("command", [["sql", "SELECT 'abcdef' AS x"], ["query", "--list"]])
@pytest.mark.parametrize("width", ["0", "-5"])
def test_a_max_width_below_one_is_refused(warehouse, monkeypatch, capsys, command, width):
    """A cell cut to nothing (every value shown as "…") is no table: the width is refused."""
    code, out, _ = gw(monkeypatch, capsys, *command, "-w", str(warehouse), "--max-width", width)
    assert code == 2 and out == ""
