"""The archive-level inputs on Spark, with the local ingest's pure functions (ingest/archive.py,
ingest/work.py's process_index_lines): runs/invocations.jsonl -> OUT/archive/invocation_index,
runs/schemas/ -> OUT/archive/class_schemas, and their ingest_issues with those of invocation ids
claimed by two run folders -> OUT/archive/ingest_issues. Recomputed whole at every run (as the
local ingest's final transaction is), after the run tables are written.

Bounds (README: Beyond one machine): the index is one file, read as lines by Spark's text
source and split across tasks like any large file (each numbers its lines from the counts of
the splits before it, and parses them in blocks); a task's JVM holds one line whole, so a line
over 2 GiB fails the read, as Hadoop's line reader does; the schemas folder is collected to the driver (a few small files); only the candidates of a duplicate id
(runs whose envelope id is not their folder name, and the rows of repeated index ids) reach the
driver, where the local ingest's SQL words their issues over an in-memory DuckDB.
"""

from __future__ import annotations

from urllib.parse import unquote

import duckdb
from pyspark.sql import DataFrame, functions as F

from groundwork.core.jsontext import MAX_LINE
from groundwork.ingest import issues as K
from groundwork.ingest.archive import (CLAIMS_SQL, NOT_A_SCHEMA, index_duplicates, numbered_index_blocks, schema_file,
                                         schema_name_ok)
from groundwork.ingest.scan import INDEX_FILE, SCHEMAS_DIR
from groundwork.ingest.work import process_index_lines
from groundwork.spark import tables as S
from groundwork.spark.fs import Store, glob_escaped

ARCHIVE_TABLES = ("invocation_index", "class_schemas", "ingest_issues")


def _index_items(rows):
    """Executor side: one task's share of the index's lines, (line_no, length, raw or None when
    over MAX_LINE) in line order -> ("row", index row) and ("issue", issue) items, block by block
    (the same blocks and parser as the local ingest)."""
    issues: list = []
    numbered = ((r.line_no, bytes(r.raw) if r.raw is not None else r.length) for r in rows)
    for block in numbered_index_blocks(numbered, issues):
        found, problems = process_index_lines(block)
        issues.extend(problems)
        for r in found:
            yield ("row", r, None)
        for i in issues:
            yield ("issue", None, i)
        issues.clear()
    for i in issues:
        yield ("issue", None, i)


def _index_lines(spark, path: str) -> DataFrame:
    """runs/invocations.jsonl as (line_no, length, raw) rows, split on b"\n" only (as
    scan.split_lines: a \r stays in its line), raw None for a line over MAX_LINE bytes.

    Spark's text source splits the file across tasks like any large file; a line's number is
    the count of the lines of the splits before its own (counted first: one row per split
    reaches the driver) plus its place in its split. The value is cast to binary: the text
    source keeps each line's bytes as they are (no UTF-8 check), so a line that is not UTF-8
    reaches the parser as the local ingest reads it."""
    lines = (spark.read.option("lineSep", "\n").text(path)
             .select(F.col("value").cast("binary").alias("raw"),
                     F.input_file_block_start().alias("block"),
                     F.monotonically_increasing_id().alias("seq")))
    counts = sorted((r["block"], r["n"], r["first"]) for r in
                    lines.groupBy("block").agg(F.count("*").alias("n"), F.min("seq").alias("first")).collect())
    bases, before = [], 0
    for block, n, first in counts:
        bases.append((block, before + 1 - first))  # line_no = seq + base
        before += n
    base = spark.createDataFrame(bases, "block LONG, base LONG")
    return (lines.join(F.broadcast(base), "block")
            .select((F.col("seq") + F.col("base")).alias("line_no"), F.length("raw").alias("length"),
                    F.when(F.length("raw") <= MAX_LINE, F.col("raw")).alias("raw")))


def _index(spark, archive: Store):
    """(index rows DataFrame or None, issues, the cached parse to unpersist) of runs/invocations.jsonl."""
    if not archive.exists(INDEX_FILE) or archive.is_dir(INDEX_FILE):
        return None, [], None
    lines = _index_lines(spark, glob_escaped(archive.path(INDEX_FILE)))
    # each task parses its lines in line order, in blocks
    items = lines.sortWithinPartitions("line_no").rdd.mapPartitions(_index_items).cache()
    staged = S.row_schema("invocation_index", staged=True)
    rows = spark.createDataFrame(items.filter(lambda x: x[0] == "row").map(lambda x: x[1]), staged)
    rows = rows.withColumn("completed_at", F.timestamp_micros("completed_at").cast("timestamp_ntz"))
    issues = items.filter(lambda x: x[0] == "issue").map(lambda x: x[2]).collect()  # few: one per bad line
    return rows, issues, items


def _index_duplicates(index: DataFrame) -> list[tuple]:
    """Issues of index lines repeating an earlier line's id: only the repeated ids' rows are
    collected, and worded by the local ingest's SQL."""
    repeated = index.where(F.col("invocation_id").isNotNull()).groupBy("invocation_id").count().where("count > 1")
    rows = index.join(repeated.select("invocation_id"), "invocation_id", "left_semi").select("line_no", "invocation_id")
    con = duckdb.connect(":memory:")
    try:
        con.execute("CREATE TABLE invocation_index (line_no INTEGER, invocation_id VARCHAR)")
        collected = [tuple(r) for r in rows.collect()]
        if collected:
            con.executemany("INSERT INTO invocation_index VALUES (?, ?)", collected)
        return index_duplicates(con)
    finally:
        con.close()


def _schemas(spark, archive: Store) -> tuple[list[tuple], list[tuple]]:
    """(class_schemas rows, issues) of runs/schemas/, in name order."""
    if not archive.is_dir(SCHEMAS_DIR):
        return [], []
    files = (spark.read.format("binaryFile").load(glob_escaped(archive.path(SCHEMAS_DIR)))
             .select("path", "length", F.when(F.col("length") <= MAX_LINE, F.col("content")).alias("content")))
    rows, issues = [], []
    for path, size, data in sorted((unquote(r.path.rsplit("/", 1)[1]), r.length, r.content) for r in files.collect()):
        rel = f"{SCHEMAS_DIR}/{path}"
        if not schema_name_ok(path):
            issues.append((rel, None, *NOT_A_SCHEMA))
            continue
        row, found = schema_file(path, rel, size, None if data is None else bytes(data))
        if row is not None:
            rows.append(row)
        issues.extend(found)
    return rows, issues


def _claims(runs: DataFrame) -> list[tuple]:
    """(invocation_id, path, message) of run folders claiming an id another one claims: the
    candidates (ids claimed by a folder not named so) are collected and worded by the local
    ingest's SQL (CLAIMS_SQL) over an in-memory DuckDB."""
    present = runs.where(~F.col("missing") & F.col("envelope_invocation_id").isNotNull()) \
                  .select("invocation_id", "run_path", "envelope_invocation_id", "envelope_json")
    odd = present.where(F.col("envelope_invocation_id") != F.col("invocation_id")) \
                 .select(F.col("envelope_invocation_id").alias("claimed")).distinct()
    candidates = (present.join(odd, present.envelope_invocation_id == odd.claimed, "left_semi")
                  .unionByName(present.join(odd, present.invocation_id == odd.claimed, "left_semi")).distinct())
    con = duckdb.connect(":memory:")
    try:
        con.execute("CREATE TABLE runs (invocation_id VARCHAR, run_path VARCHAR, envelope_invocation_id VARCHAR, "
                    "envelope_json JSON, missing BOOLEAN)")
        collected = [(*tuple(r), False) for r in candidates.collect()]
        if collected:
            con.executemany("INSERT INTO runs VALUES (?, ?, ?, ?, ?)", collected)
        return con.execute(CLAIMS_SQL).fetchall()
    finally:
        con.close()


def load_archive_level(spark, runs: str, out: str, ingest_id: int, run_table: DataFrame) -> int:
    """Write OUT/archive/{invocation_index, class_schemas, ingest_issues} from ``runs`` (the
    archive) and ``run_table`` (OUT's runs table, for the ids claimed twice); returns the
    issues written."""
    archive, target = Store(spark, runs), Store(spark, out)
    index, issues, parsed = _index(spark, archive)
    if index is None:
        index = spark.createDataFrame([], S.row_schema("invocation_index"))
    else:
        issues = issues + _index_duplicates(index)
    index.write.mode("overwrite").parquet(target.path(S.ARCHIVE_DIR, "invocation_index"))
    if parsed is not None:
        parsed.unpersist()
    schema_rows, schema_issues = _schemas(spark, archive)
    spark.createDataFrame(schema_rows, S.row_schema("class_schemas")).write.mode("overwrite") \
        .parquet(target.path(S.ARCHIVE_DIR, "class_schemas"))
    rows = [(ingest_id, None, p, line, kind, msg, K.NONE) for p, line, kind, msg in [*issues, *schema_issues]]
    rows += [(ingest_id, inv, path, None, K.DUPLICATE_ID, msg, K.NONE) for inv, path, msg in _claims(run_table)]
    spark.createDataFrame(rows, S.row_schema("ingest_issues")).write.mode("overwrite") \
        .parquet(target.path(S.ARCHIVE_DIR, "ingest_issues"))
    return len(rows)


def read_archive_table(spark, out: str, table: str) -> DataFrame:
    """OUT/archive/<table>/ (empty before the first run)."""
    target = Store(spark, out)
    if not target.exists(S.ARCHIVE_DIR, table):
        return spark.createDataFrame([], S.row_schema(table))
    return spark.read.schema(S.row_schema(table)).parquet(target.path(S.ARCHIVE_DIR, table))
