"""The lint pass's private workspace: the derived relations it builds for the rules never leak
into the warehouse, and a warehouse file with quotes in its name lints like any other."""

from __future__ import annotations

import json
import shutil

import pytest

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


@pytest.mark.parametrize("copy_fraction, kind", [(1.0, "BASE TABLE"), (0.0, "VIEW")])
def test_a_pass_over_some_runs_reads_their_rows_of_the_run_tables_only(tmp_path, monkeypatch, copy_fraction, kind):
    """In a pass over some runs, spans, payload_refs, evidence and delegations name the scope's
    rows only (copied when they are few, else views over the warehouse's tables, by rowid), and
    the pass judges as a pass over every run does."""
    from groundwork.checks import derived

    monkeypatch.setattr(derived, "_COPY_FRACTION", copy_fraction)

    runs = tmp_path / "runs"
    for d in EXPECTED.values():
        shutil.copytree(CORPUS / "runs" / d["invocation_id"], runs / d["invocation_id"], dirs_exist_ok=True)
    con = connect(tmp_path / "w.duckdb")
    ingest.ingest_archive(con, runs)
    some = sorted(d["invocation_id"] for d in EXPECTED.values())[::3]
    with derived.materialised(con, some) as workspace:
        for table in derived.NARROWED:
            mine = con.execute(f"SELECT * FROM {workspace.schema}.{table} ORDER BY ALL").fetchall()
            want = con.execute(f"SELECT * FROM main.{table} WHERE invocation_id IN (SELECT unnest($r)) ORDER BY ALL",
                               {"r": some}).fetchall()
            assert mine == want and (table != "spans" or mine), table
            assert con.execute("SELECT table_type FROM information_schema.tables WHERE table_catalog = $db "
                               "AND table_name = $t", {"db": workspace.schema.split(".")[0], "t": table}
                               ).fetchall() == [(kind,)], table
    everything = lint_warehouse(con, record=False, reuse=False).by_id()
    scoped = lint_warehouse(con, runs=some, record=False, reuse=False).by_id()
    assert scoped == {run: everything[run] for run in some}


def test_a_query_whose_input_was_cancelled_fails_instead_of_waiting_and_logs_nothing(caplog):
    """An interrupt leaves the workspace early and cancels the queries not started yet, among
    them the derived relations others wait for: the callback of such a waiting query asked the
    cancelled input for its exception, which raised inside the callback (concurrent.futures
    logged its traceback under the command's one line) and left the query waiting for ever."""
    import logging
    import queue
    from concurrent.futures import Future, ThreadPoolExecutor

    from groundwork.checks import derived

    pool = ThreadPoolExecutor(1)
    try:
        workspace = derived.Workspace(pool, queue.SimpleQueue())
        name = sorted(derived.NAMES)[0]
        workspace._ready[name] = source = Future()
        waiting = workspace._submit(f"SELECT * FROM {name}", lambda cur: "ran")
        caplog.set_level(logging.ERROR, logger="concurrent.futures")
        source.cancel()
        assert waiting.done() and isinstance(waiting.exception(timeout=0), RuntimeError)
        # and a query cancelled before its input ends: the input's outcome is set on nothing
        other = Future()
        workspace._ready[name] = other
        gone = workspace._submit(f"SELECT * FROM {name}", lambda cur: "ran")
        gone.cancel()
        other.set_exception(ValueError("boom"))
        assert gone.cancelled()
        assert caplog.records == []
    finally:
        pool.shutdown()
