"""The lint pass's private workspace: the derived relations it builds for the rules never leak
into the warehouse, and a warehouse file with quotes in its name lints like any other."""

from __future__ import annotations

import json
import shutil

import groundwork.ingest as ingest
from groundwork.checks.lint import lint_warehouse
from groundwork.checks.store import keep_derived
from groundwork.core.warehouse import connect
from ingest_support import CORPUS

EXPECTED = {d["scenario"]: d for d in map(json.loads, (CORPUS / "expected.jsonl").read_text(encoding="utf-8").splitlines())}
N1 = EXPECTED["violation/N1/none-calls-a-model"]
R3 = EXPECTED["violation/R3/input_only-no-evidence"]


def test_a_warehouse_named_with_quotes_lints_and_keeps_no_workspace(tmp_path):
    runs = tmp_path / "runs"
    for d in (N1, R3):
        shutil.copytree(CORPUS / "runs" / d["invocation_id"], runs / d["invocation_id"])
    con = connect(tmp_path / "it's a \"warehouse\".duckdb")
    ingest.ingest_archive(con, runs)
    databases = con.execute("SELECT database_name FROM duckdb_databases()").fetchall()

    result = lint_warehouse(con)
    keep_derived(con)

    by_id = result.by_id()
    for d in (N1, R3):
        assert by_id[d["invocation_id"]].violations == d["lint"]["violations"]
    # The in-memory database the pass attached is gone again, and the connection still reads
    # the warehouse's own (view) lint_judged, not a leftover table; the copy kept for the next
    # lint lives apart, in schema lint_store.
    assert con.execute("SELECT database_name FROM duckdb_databases()").fetchall() == databases
    assert con.execute("SELECT table_schema, table_type FROM information_schema.tables WHERE table_name = 'lint_judged'"
                       " ORDER BY ALL").fetchall() == [("lint_store", "BASE TABLE"), ("main", "VIEW")]
    assert con.execute("SELECT count(*) FROM lint_judged").fetchall() == con.execute(
        "SELECT count(*) FROM lint_store.lint_judged").fetchall()
    assert lint_warehouse(con, reuse=False).by_id() == by_id  # read back from lint_store
