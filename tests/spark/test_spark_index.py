"""runs/invocations.jsonl on Spark is read as lines split across tasks (an index of 10^8 runs is
hundreds of GB: no one task may hold it, as Spark's binaryFile source would, up to its 2 GiB
limit). Split into many small splits here, every line keeps its number and every bad line its
issue: the same index rows and issues as the local ingest's reading of the same bytes."""

from __future__ import annotations

import json

import pytest

from groundwork.core.jsontext import MAX_LINE
from groundwork.ingest.archive import index_blocks
from groundwork.ingest.scan import INDEX_FILE, split_lines
from groundwork.ingest.work import process_index_lines
from spark_support import require_spark


def index_bytes() -> bytes:
    def line(i: int) -> bytes:
        return json.dumps({"invocation_id": f"01a0-{i:04d}", "agent_id": f"agent.{i % 7}",
                           "outcome": {"status": "succeeded" if i % 3 else "failed"},
                           "completed_at": f"2026-11-{1 + i % 28:02d}T10:{i % 60:02d}:00Z"}).encode() + b"\n"

    out = [line(i) for i in range(300)]
    out[17] = b"\n"                                              # an empty line keeps its number
    out[40] = out[40][:-1] + b"\r\n"                             # a CR stays in its line
    out[77] = b'{"invocation_id": "caf\xe9", "agent_id": "x"}\n'  # not UTF-8
    out[120] = b'{"invocation_id": "01a0-0121", \n'              # malformed JSON
    out[150] = b"[1, 2, 3]\n"                                    # not an object
    out[200] = line(5)                                           # a repeated id (its issue comes from SQL)
    out[250] = b'{"agent_id": "' + b"a" * (MAX_LINE + 10) + b'"}\n'  # over the line bound
    out[-1] = out[-1][:-1]                                       # no newline at the end
    return b"".join(out)


def local_reading(data: bytes) -> tuple[list[tuple], list[tuple]]:
    """The local ingest's reading of the index's bytes (ingest/load.py: split_lines, index_blocks,
    process_index_lines)."""
    rows, issues = [], []
    for block in index_blocks(split_lines([data[i:i + (1 << 20)] for i in range(0, len(data), 1 << 20)]), 1, issues):
        found, problems = process_index_lines(block)
        rows += found
        issues += problems
    return rows, issues


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    require_spark()
    from groundwork.spark.session import session

    s = session("local[2]", local_dir=str(tmp_path_factory.mktemp("spark-index") / "warehouse"))
    try:
        yield s
    finally:
        s.stop()


def test_an_index_split_across_many_tasks_reads_as_the_local_ingest_reads_it(spark, tmp_path):
    from groundwork.spark.archive import _index, _index_lines
    from groundwork.spark.fs import Store, glob_escaped

    runs = tmp_path / "runs"
    runs.mkdir()
    data = index_bytes()
    (runs / INDEX_FILE).write_bytes(data)
    spark.conf.set("spark.sql.files.maxPartitionBytes", "4096")  # ~4 KB splits: dozens of tasks
    spark.conf.set("spark.sql.files.openCostInBytes", "0")
    try:
        archive = Store(spark, str(runs))
        assert _index_lines(spark, glob_escaped(archive.path(INDEX_FILE))).rdd.getNumPartitions() > 10
        _rows, issues, items = _index(spark, archive)
        got_rows = [x[1] for x in items.collect() if x[0] == "row"]
        items.unpersist()
    finally:
        spark.conf.unset("spark.sql.files.maxPartitionBytes")
        spark.conf.unset("spark.sql.files.openCostInBytes")
    want_rows, want_issues = local_reading(data)
    assert sorted(got_rows, key=lambda r: r[0]) == want_rows
    assert sorted(issues, key=lambda i: (i[1], i[2])) == sorted(want_issues, key=lambda i: (i[1], i[2]))
    # the bad lines are where they are in the file (1-based), whatever split they fell in
    assert {(i[1], i[2]) for i in want_issues} >= {(78, "non-utf8"), (121, "malformed-json"),
                                                   (151, "wrong-type"), (251, "line-too-long")}
    assert [r[0] for r in want_rows][-1] == 300 and 18 not in {r[0] for r in want_rows}
