"""A job's memory is bounded whatever the archive's size (README.md#resources): the nightly's
checks and reports run under DuckDB's memory limit GROUNDWORK_MEMORY (else 256MB), not DuckDB's
default of 80 % of RAM, which let a fresh nightly grow with the archive (1.1 GB at 100,000 runs),
and the nightly lets go of each pass's verdicts once they are recorded."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import groundwork.jobs.nightly as nightly_job
from groundwork.core.warehouse import connect, size_bytes
from ingest_support import EXAMPLE


def _limit(con) -> float:
    return size_bytes(con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0])


def test_connect_sets_the_memory_limit_of_a_file_warehouse_only(tmp_path):
    con = connect(tmp_path / "w.duckdb", memory="64MB")
    try:
        assert abs(_limit(con) - 64e6) < 1e6
    finally:
        con.close()
    con = connect(":memory:", memory="64MB")   # its data counts against the limit: DuckDB's default kept
    try:
        assert _limit(con) > 1e9
    finally:
        con.close()


@pytest.mark.parametrize("env, expected", [(None, 256e6), ("100MB", 100e6)])
def test_the_nightlys_checks_run_under_the_job_memory(tmp_path, monkeypatch, env, expected):
    if env is None:
        monkeypatch.delenv("GROUNDWORK_MEMORY", raising=False)
    else:
        monkeypatch.setenv("GROUNDWORK_MEMORY", env)
    archive = tmp_path / "archive"
    shutil.copytree(EXAMPLE, archive)
    seen = {}
    real_lint, real_verify = nightly_job.lint_warehouse, nightly_job.verify_warehouse

    def lint(con, **kw):
        seen["lint"] = _limit(con)
        return real_lint(con, **kw)

    def verify(con, *a, **kw):
        seen["verify"] = _limit(con)
        return real_verify(con, *a, **kw)

    monkeypatch.setattr(nightly_job, "lint_warehouse", lint)
    monkeypatch.setattr(nightly_job, "verify_warehouse", verify)
    result = nightly_job.run_nightly(archive / "runs", out=tmp_path / "out", warehouse=tmp_path / "w.duckdb",
                                     sources=archive / "sources.yaml")
    assert result.exit_status == 1
    assert set(seen) == {"lint", "verify"} and all(abs(v - expected) < 1e6 for v in seen.values()), seen


def test_a_released_pass_keeps_its_counts_but_not_its_verdicts(tmp_path):
    archive = tmp_path / "archive"
    shutil.copytree(EXAMPLE, archive)
    wh = tmp_path / "w.duckdb"
    from groundwork.checks.lint import lint_warehouse
    from groundwork.checks.verify import verify_warehouse
    from groundwork.ingest import ingest_archive

    con = connect(wh)
    try:
        ingest_archive(con, archive / "runs", workers=0)
        lint = lint_warehouse(con)
        verify = verify_warehouse(con, archive / "sources.yaml")
        lint_line, verify_line = lint.totals_line(), verify.totals_line()
        failed = (lint.counts["failed"], verify.count("failed"), verify.count("passed"), verify.exit_code)
        assert failed[0] > 0 and failed[2] > 0 and len(verify.runs) == 99
        lint.release()
        verify.release()
        assert (lint.totals_line(), verify.totals_line()) == (lint_line, verify_line)
        assert (lint.counts["failed"], verify.count("failed"), verify.count("passed"), verify.exit_code) == failed
        for held in (lambda: lint.verdicts, lambda: lint.not_passed(), lambda: verify.runs):
            with pytest.raises(RuntimeError, match="released"):
                held()
    finally:
        con.close()
