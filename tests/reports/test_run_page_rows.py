"""The run pages' queries (sql/reports/run_page_*.sql) pick their batch's rows of runs, spans,
payload_refs, evidence and delegations by rowid (a scan of invocation_id alone, then the rows
fetched), not by a join with report_batch, which read every column of every row. Either way
the rows must be the same: here against the join each query stands for, over every run of a
nightly on the example archive, in one batch and run by run.
"""

from __future__ import annotations

import pytest

from groundwork.core.warehouse import connect
from groundwork.jobs.nightly import run_nightly
from groundwork.reports import data
from ingest_support import EXAMPLE

# The query, its table and alias, and what the join form selects from: the definition by join.
_BY_ROWID = {
    "run_page_runs": ("runs", "r"),
    "run_page_spans": ("spans", "t"),
    "run_page_payload_refs": ("payload_refs", "r"),
    "run_page_evidence": ("evidence", "e"),
    "run_page_delegations": ("delegations", "d"),
}


def _by_join(name: str) -> str:
    """The query as a join with report_batch: its rowid pick replaced by the join."""
    table, alias = _BY_ROWID[name]
    sql = data.query(name)[0]
    pick = (f"WHERE {alias}.rowid IN (SELECT rowid FROM {table} WHERE invocation_id IN "
            "(SELECT invocation_id FROM report_batch))")
    assert pick in sql, name
    sql = sql.replace(pick, "")
    head = f"FROM {table} {alias}"
    assert head in sql, name
    return sql.replace(head, f"{head} JOIN report_batch b__ USING (invocation_id)", 1)


@pytest.fixture(scope="module")
def nightly_con(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("rowid")
    wh = tmp / "w.duckdb"
    run_nightly(EXAMPLE / "runs", out=tmp / "out", warehouse=wh, sources=EXAMPLE / "sources.yaml")
    con = connect(wh)
    p = data.nightly_passes(con, con.execute("SELECT max(nightly_id) FROM nightlies").fetchone()[0])
    data.build_state(con, p)
    yield con
    con.close()


def _rows(con, sql: str) -> list[tuple]:
    return con.execute(sql).fetchall()


@pytest.mark.parametrize("name", sorted(_BY_ROWID))
def test_rows_picked_by_rowid_are_the_joins(nightly_con, name):
    con = nightly_con
    ids = [r[0] for r in con.execute("SELECT invocation_id FROM runs ORDER BY invocation_id").fetchall()]
    assert len(ids) > 50
    batches = [ids, ids[::7], *([i] for i in ids[:10])]
    found = 0
    for batch in batches:
        con.execute("CREATE OR REPLACE TEMP TABLE report_batch AS SELECT UNNEST(?::VARCHAR[]) AS invocation_id", [batch])
        picked, joined = _rows(con, data.query(name)[0]), _rows(con, _by_join(name))
        # Same rows; each query's ORDER BY may leave ties between runs (grouped by run after).
        assert sorted(picked, key=repr) == sorted(joined, key=repr)
        per_run = lambda rows: {i: [r for r in rows if r[0] == i] for i in batch}   # noqa: E731
        assert per_run(picked) == per_run(joined)   # each run's rows in the same order
        found += len(picked)
    assert found > 0
    con.execute("DROP TABLE report_batch")
