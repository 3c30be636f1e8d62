"""The nightly's reports from a Spark pass, with the local nightly's renderer (groundwork.reports).

OUT's Parquet (the flat tables, OUT/verdicts/, OUT/violations/) is loaded into an in-memory
DuckDB warehouse with the warehouse schema; the Spark verdicts are recorded there as one lint and
one verify pass by the checks' own history writers (lint.record_lint, verify.record_history),
a nightlies row names them, and reports.build.nightly_reports (the local nightly's report
phase) renders every file of the nightly: fleet.html, failing pages, run pages, summary.md/json,
junit.xml, the Prometheus textfile (once the nightlies row is finished) and violations.jsonl. A fresh warehouse has no earlier nightly, so every failing run is new (as in a
first local nightly).
"""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from groundwork import __version__
from groundwork.checks import lint, rules as rules_mod, verify
from groundwork.core.warehouse import connect
from groundwork.ingest.tables import RUN_TABLES, column_list
from groundwork.reports import data as rdata
from groundwork.reports.build import ReportResult, nightly_reports
from groundwork.spark import tables as S
from groundwork.spark.archive import ARCHIVE_TABLES, read_archive_table
from groundwork.spark.ingest import SparkIngest, read_table


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


def _insert(con, table: str, data: pa.Table, columns: str) -> None:
    con.register("_gw_spark_rows", data)
    try:
        con.execute(f"INSERT INTO {table} ({columns}) SELECT {columns} FROM _gw_spark_rows")
    finally:
        con.unregister("_gw_spark_rows")


def load_warehouse(spark, out: str):
    """An in-memory warehouse holding OUT's flat tables and archive-level tables."""
    con = connect(":memory:")
    for table in RUN_TABLES:
        data = read_table(spark, out, table).drop(S.DATE).toArrow()
        if data.num_rows:
            _insert(con, table, data, column_list(table))
    for table in ARCHIVE_TABLES:
        data = read_archive_table(spark, out, table).toArrow()
        if data.num_rows:
            _insert(con, table, data, column_list(table))
    return con


def _lint_result(verdicts: pa.Table, violations: pa.Table, started: dt.datetime) -> lint.LintResult:
    """The Spark pass's grounding verdicts as a lint pass (what lint.record_lint writes)."""
    grounding = violations.filter(pc.equal(violations.column("check"), "grounding"))
    summary = pc.utf8_slice_codeunits(verdicts.column("grounding_txt"), 0, -1)
    n = verdicts.num_rows
    batch = lint.FreshBatch(
        base=pa.table({"invocation_id": verdicts.column("invocation_id"), "mode": verdicts.column("mode"),
                       "reason": verdicts.column("lint_reason"), "ingest_id": verdicts.column("ingest_id"),
                       "context_key": pa.nulls(n, pa.string())}),
        status=verdicts.column("lint_status").combine_chunks(),
        retrieval_count=verdicts.column("retrieval_count").combine_chunks(),
        chat_count=verdicts.column("chat_count").combine_chunks(),
        summary=summary.combine_chunks(),
        violations=grounding.select(["invocation_id", "seq", "code", "message", "finding"]))
    counts = batch.counts()
    chosen = rules_mod.load_rules()
    return lint.LintResult(batch=batch, rules=chosen, ruleset_hash=lint.ruleset_hash(chosen),
                           counts={s: counts[s] for s in (lint.PASSED, lint.FAILED, lint.UNLINTABLE)},
                           findings_count=batch.findings_count(), started_at=started.replace(tzinfo=dt.timezone.utc),
                           finished_at=_now().replace(tzinfo=dt.timezone.utc))


def _verify_result(con, verdicts: pa.Table, violations: pa.Table, sources) -> verify.VerifyResult:
    """The Spark pass's source-check verdicts as a verify pass (what verify.record_history writes)."""
    loaded = verify.load_into_warehouse(con, sources)
    src = violations.filter(pc.equal(violations.column("check"), "sources")).sort_by([("invocation_id", "ascending"),
                                                                                    ("seq", "ascending")])
    by_run: dict[str, list] = {}
    for i, code, message in zip(*(src.column(c).to_pylist() for c in ("invocation_id", "code", "message"))):
        by_run.setdefault(i, []).append((code, message))
    runs = []
    for i, status, verified, unresolved, reason, text in zip(*(verdicts.column(c).to_pylist() for c in (
            "invocation_id", "sources_status", "verified", "unresolved", "sources_reason", "sources_txt"))):
        found = by_run.get(i, [])
        runs.append(verify.RunVerdict(i, status, verified or 0, list(unresolved or []), [m for _, m in found],
                                      [c for c, _ in found], reason, text))
    return verify.VerifyResult(sources_path=str(sources), config_id=loaded.config_id, fresh=runs, loaded=loaded)


def build(spark, out: str, report_dir, *, runs_dir: str, sources=None, ingest: SparkIngest | None = None,
          started_epoch: float | None = None) -> ReportResult:
    """Render the nightly's reports of the Spark pass in ``out`` into ``report_dir``."""
    started = _now()
    con = load_warehouse(spark, out)
    try:
        verdicts = spark.read.parquet(f"{out.rstrip('/')}/{S.VERDICTS_DIR}").toArrow().sort_by("invocation_id")
        violations = spark.read.parquet(f"{out.rstrip('/')}/{S.VIOLATIONS_DIR}").toArrow()
        ingest_id = ingest.ingest_id if ingest is not None else (pc.max(verdicts.column("ingest_id")).as_py() or 1)
        con.execute("INSERT INTO ingests (ingest_id, runs_dir, started_at, finished_at, folders_seen, runs_loaded, "
                    "runs_unchanged, runs_rejected, runs_missing, issues, tool_version, scan) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, (SELECT count(*) FROM ingest_issues), ?, 'full')",
                    [ingest_id, runs_dir, started, started, ingest.folders_seen if ingest else verdicts.num_rows,
                     ingest.runs_parsed if ingest else 0, ingest.runs_unchanged if ingest else verdicts.num_rows,
                     ingest.runs_missing if ingest else 0, __version__])
        lint_id = lint.record_lint(con, _lint_result(verdicts, violations, started), all_rules=True)
        verify_id = None
        if sources is not None:
            result = _verify_result(con, verdicts, violations, sources)
            verify_id = verify.record_history(con, result, started_at=started.replace(tzinfo=dt.timezone.utc),
                                              ruleset=verify.ruleset_hash(verify.source_rules()))
        nid = 1
        con.execute("INSERT INTO nightlies (nightly_id, started_at, runs_dir, out_dir, ingest_id, lint_id, verify_id) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)", [nid, started, runs_dir, str(report_dir), ingest_id, lint_id, verify_id])
        reports = nightly_reports(con, Path(report_dir), nightly_id=nid, ingest_id=ingest_id, generated_at=started,
                                  runs_dir=runs_dir, warehouse=out,
                                  sources=None if sources is None else str(Path(sources).resolve()),
                                  started_epoch=started_epoch or time.time(),
                                  severities=rdata.finding_severities())  # the defaults
        con.execute("UPDATE nightlies SET finished_at = ?, exit_status = ? WHERE nightly_id = ?",
                    [_now(), 1 if reports.totals["new_failing"] else 0, nid])
        reports.publish_metrics()
        return reports
    finally:
        con.close()
