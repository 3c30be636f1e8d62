"""ingest.parse.parse_files (what the Spark executors call) gives the rows the local ingest
gives for the same run folder read from disk: the same parser over the same bytes."""

from __future__ import annotations

import os

import pytest

from groundwork.ingest.parse import parse_files, parse_run
from groundwork.ingest.scan import list_and_read

from ingest_support import CORPUS_RUNS, expected


def _entries(folder):
    out = []
    for dirpath, _, names in os.walk(folder):
        for name in names:
            path = os.path.join(dirpath, name)
            with open(path, "rb") as fh:
                data = fh.read()
            out.append((os.path.relpath(path, folder).replace(os.sep, "/"), data, len(data), os.stat(path).st_mtime_ns))
    return out


@pytest.mark.parametrize("inv", sorted(expected())[::9])
def test_rows_from_bytes_in_memory_are_the_rows_from_disk(inv):
    root = str(CORPUS_RUNS)
    local = parse_run(list_and_read(root, os.path.realpath(root), inv), 7)[0]
    spark = parse_files(inv, _entries(CORPUS_RUNS / inv), 7)
    assert spark.fields == local.fields
    assert spark.rows == local.rows


def test_a_parser_failure_becomes_an_internal_error_row_not_an_exception(monkeypatch):
    from groundwork.ingest import parse

    def broken(*args, **kwargs):
        raise KeyError("a bug")
    monkeypatch.setattr(parse, "parse_run", broken)
    rows = parse.parse_files("x", [("envelope.json", b"{}", 2, 0)], 1)
    (issue,) = rows.rows["ingest_issues"]
    assert issue[4] == "internal-error" and "KeyError" in issue[5]
    (run,) = rows.rows["runs"]
    assert run[rows.fields["runs"].index("lintable")] is False
