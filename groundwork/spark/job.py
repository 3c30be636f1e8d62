"""`groundwork spark run`: run folders -> OUT/tables, OUT/verdicts, OUT/violations (and the
per-run texts and the nightly's reports), on any Spark master, or under spark-submit.

Layout of OUT (any path Spark writes: local, hdfs://, s3a://):
    tables/<table>/completed_date=<day>/   the flat run tables (Parquet)
    state/runs/                            what was parsed: a fingerprint per run folder
    archive/<table>/                       invocation_index, class_schemas and the archive-level
                                           ingest_issues (index, schemas/, ids claimed twice)
    verdicts/                              one row per run: lint_status, grounding_txt,
                                           sources_status, sources_txt, ...
    violations/                            one row per violation: invocation_id, check
                                           (grounding | sources), seq, code, message, finding
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from pyspark.sql import functions as F

from groundwork.core.errors import GroundworkError
from groundwork.spark import tables as S
from groundwork.spark.checks import check
from groundwork.spark.fs import Store
from groundwork.spark.inputs import check_inputs
from groundwork.spark.ingest import SparkIngest, ingest_archive
from groundwork.spark.reports import build


@dataclass
class SparkRun:
    ingest: SparkIngest
    runs: int = 0
    lint: dict = field(default_factory=dict)      # status -> runs
    sources: dict = field(default_factory=dict)   # status -> runs (empty without --sources)
    findings: int = 0
    reports: object = None
    seconds: dict = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        """0 when every run passed every check, 1 when any failed or could not be judged."""
        bad = sum(n for s, n in self.lint.items() if s != "passed") + sum(
            n for s, n in self.sources.items() if s != "passed")
        return 1 if bad else 0

    def totals_line(self) -> str:
        i = self.ingest
        line = (f"groundwork spark: {self.runs} runs ({i.runs_parsed} parsed, {i.runs_unchanged} unchanged); "
                f"grounding {self.lint.get('passed', 0)} passed, {self.lint.get('failed', 0)} failed, "
                f"{self.lint.get('unlintable', 0)} unlintable; {self.findings} groundwork findings")
        if self.sources:
            line += (f"; sources {self.sources.get('passed', 0)} passed, {self.sources.get('failed', 0)} failed, "
                     f"{self.sources.get('unverifiable', 0)} unverifiable")
        return line


def write_texts(spark, out: str, texts) -> int:
    """DIR/<invocation_id>/grounding.txt and sources.txt for every run judged (on the driver's
    file system); returns the files written."""
    texts = Path(texts)
    written = 0
    rows = spark.read.parquet(f"{out}/{S.VERDICTS_DIR}").select("invocation_id", "grounding_txt", "sources_txt")
    for inv, grounding, sources in rows.toLocalIterator():
        if grounding is None and sources is None:
            continue
        folder = texts / inv
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in (("grounding.txt", grounding), ("sources.txt", sources)):
            if text is not None:
                with open(folder / name, "w", encoding="utf-8", newline="") as fh:
                    fh.write(text)
                written += 1
    return written


def run(spark, runs: str, out: str, *, sources=None, texts=None, reports=None) -> SparkRun:
    """The whole job on ``spark`` (see the module docstring)."""
    check_inputs(runs, sources, texts, reports)
    started = time.time()
    out = Store(spark, out).root
    t = time.perf_counter()
    ingested = ingest_archive(spark, runs, out)
    result = SparkRun(ingested)
    result.seconds["ingest"] = time.perf_counter() - t
    t = time.perf_counter()
    checked = check(spark, out, sources)
    try:
        verdicts = checked.verdicts
        verdicts.drop("violations").write.mode("overwrite").parquet(f"{out}/{S.VERDICTS_DIR}")
        (verdicts.select("invocation_id", F.explode("violations").alias("v"))
         .select("invocation_id", "v.check", "v.seq", "v.code", "v.message", "v.finding")
         .write.mode("overwrite").parquet(f"{out}/{S.VIOLATIONS_DIR}"))
    finally:
        checked.release()
    written = spark.read.parquet(f"{out}/{S.VERDICTS_DIR}")
    result.runs = written.count()
    result.lint = {r[0]: r[1] for r in written.groupBy("lint_status").count().collect()}
    if sources is not None:
        result.sources = {r[0]: r[1] for r in written.groupBy("sources_status").count().collect()}
    result.findings = spark.read.parquet(f"{out}/{S.VIOLATIONS_DIR}").where("finding").count()
    result.seconds["checks"] = time.perf_counter() - t
    if texts is not None:
        t = time.perf_counter()
        write_texts(spark, out, texts)
        result.seconds["texts"] = time.perf_counter() - t
    if reports is not None:
        t = time.perf_counter()
        try:
            result.reports = build(spark, out, reports, runs_dir=runs, sources=sources, ingest=ingested,
                                   started_epoch=started)
        except OSError as exc:
            raise GroundworkError(f"cannot write the reports to {reports}: {exc.strerror or exc}") from None
        result.seconds["reports"] = time.perf_counter() - t
    result.seconds["total"] = time.time() - started
    return result
