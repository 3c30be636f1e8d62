"""Run folders -> OUT/tables/<table>/ on Spark, with the project's own parser, incrementally.

1. Spark's binaryFile source lists the archive (recursiveFileLookup; the content column is not
   read for the listing); each file's run folder is the first path component under the archive.
2. A run folder is (re)parsed when it is new, or its files' paths, sizes or modification times
   differ from what OUT/state/runs/ recorded (a fingerprint over them), or it was missing and is
   back. Only those folders' bytes are read.
3. The executors group a folder's files and call ``ingest.parse.parse_files`` on them: the pure
   function the local ingest's parse_run is, over bytes in memory (no second parser). Bad input
   becomes ingest_issues rows exactly as it does locally.
4. The rows go to OUT/tables/<table>/ partitioned by completion date: the partitions holding a
   reparsed run are written again (their other runs' rows kept as they were); a run whose folder
   is gone keeps its rows, marked ``missing`` (as locally).

5. The archive-level inputs (invocations.jsonl, schemas/, ids claimed by two folders) go to
   OUT/archive/ (groundwork/spark/archive.py), recomputed at every run. Other files in the
   archive root are not reported (the local ingest's unexpected-entry issues). Spark's file
   listing skips names starting with ``.`` or ``_``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import partial

from pyspark import StorageLevel
from pyspark.sql import DataFrame, functions as F, types as T

from groundwork.core.errors import GroundworkError
from groundwork.ingest.parse import parse_files
from groundwork.ingest.scan import SCHEMAS_DIR
from groundwork.ingest.tables import COLUMNS, RUN_TABLES
from groundwork.spark import tables as S
from groundwork.spark.archive import load_archive_level
from groundwork.spark.fs import Store, glob_escaped

STATE = (S.STATE_DIR, "runs")
STAGING = "_staging"
STATE_SCHEMA = T.StructType([
    T.StructField("invocation_id", T.StringType()), T.StructField("fingerprint", T.StringType()),
    T.StructField(S.DATE, T.DateType()), T.StructField("missing", T.BooleanType()),
    T.StructField("ingest_id", T.IntegerType())])
# Reading only the changed folders by path pays while they are at most this share of all.
BY_PATH_SHARE = 0.5


@dataclass
class SparkIngest:
    """What one Spark ingest did (``folders_seen == runs_parsed + runs_unchanged``)."""

    ingest_id: int
    folders_seen: int = 0
    runs_parsed: int = 0
    runs_unchanged: int = 0
    runs_missing: int = 0
    parsed: tuple[str, ...] = ()
    archive_issues: int = 0  # OUT/archive/ingest_issues rows (the index, schemas/, ids claimed twice)
    seconds: float = 0.0


def _files(spark, archive: Store, paths: list[str] | None = None, content: bool = False) -> DataFrame:
    """The archive's run-folder files: run, rel (path inside the folder), size, mtime_ns
    (and content)."""
    reader = spark.read.format("binaryFile").option("recursiveFileLookup", "true")
    df = reader.load(paths) if paths is not None else reader.load(archive.root)
    df = df.unionByName(_empty_files(spark, archive, df))
    prefix = archive.root + "/"
    rest = F.expr(f"substring(path, {len(prefix) + 1})")
    df = df.where(F.col("path").startswith(prefix)).withColumn("_rest", rest)
    df = df.withColumn("run", F.substring_index("_rest", "/", 1))
    df = df.where(F.instr("_rest", "/") > 0).where(F.col("run") != SCHEMAS_DIR)
    cols = [F.col("run"), F.expr("substring(_rest, length(run) + 2)").alias("rel"),
            F.col("length").alias("size"), (F.unix_micros("modificationTime") * 1000).alias("mtime_ns")]
    if content:
        cols.append(F.col("content"))
    return df.select(*cols)


def _empty_files(spark, archive: Store, df: DataFrame) -> DataFrame:
    """The 0-byte files of ``df``'s listing, as binaryFile rows: Spark's file sources leave empty
    files out of their scans (SPARK-26161), but an empty spans.jsonl is a run the workbench lints
    as 0 spans, not one without the file. They are the listed files (the file index's, on the
    driver) that the scan did not return."""
    # the index's URIs spell a local file file:///x, the scan's path column file:/x
    listed = spark.createDataFrame([("file:/" + p[8:] if p.startswith("file:///") else p,) for p in df.inputFiles()],
                                   "path string")
    missing = [row.path for row in listed.join(df.select("path"), "path", "left_anti").collect()]
    rows = []
    for path in missing:
        status = archive.status(path)
        if status is not None and status[0] == 0:
            rows.append((path, status[1], 0, b""))
    return spark.createDataFrame(rows, df.schema)


def _fingerprints(files: DataFrame) -> DataFrame:
    """run -> a fingerprint over its files' (path, size, mtime)."""
    entry = F.concat_ws("\u0000", "rel", F.col("size").cast("string"), F.col("mtime_ns").cast("string"))
    return files.groupBy("run").agg(F.sha2(F.concat_ws("\n", F.array_sort(F.collect_list(entry))), 256)
                                    .alias("fingerprint"))


def _parse_group(item, ingest_id: int):
    """Executor side: one run folder's files -> (run, rows of each run table in its columns' order)."""
    name, files = item
    rows = parse_files(name, [(rel, data, size, mtime) for rel, size, mtime, data in files], ingest_id)
    out = [name]
    for table in RUN_TABLES:
        fields = rows.fields.get(table, ())
        got = rows.rows.get(table) or []
        if not got:
            out.append([])
            continue
        order = [fields.index(name) for name, _ in COLUMNS[table]]
        floats = {fields.index(c) for c in S.float_columns(table)}
        out.append([tuple(float(r[i]) if i in floats and r[i] is not None else r[i] for i in order) for r in got])
    return tuple(out)


def _table_rows(parsed: DataFrame, table: str) -> DataFrame:
    """A table's rows out of the parsed runs, timestamps as TIMESTAMP_NTZ, with completed_date."""
    exploded = parsed.select(S.DATE, F.explode(table).alias("r"))
    stamps = set(S.timestamp_columns(table))
    return exploded.select(*[
        (F.timestamp_micros(F.col(f"r.{c}")).cast("timestamp_ntz") if c in stamps else F.col(f"r.{c}")).alias(c)
        for c in S.columns(table)], S.DATE)


def _partition_dir(date) -> str:
    return f"{S.DATE}={'__HIVE_DEFAULT_PARTITION__' if date is None else date.isoformat()}"


def read_table(spark, out: str, table: str) -> DataFrame:
    """OUT/tables/<table>/ with its partition column."""
    return spark.read.schema(S.stored_schema(table)).parquet(Store(spark, out).path(S.TABLES_DIR, table))


def _in_dates(dates: set) -> F.Column:
    known = [d for d in dates if d is not None]
    cond = F.col(S.DATE).isin(known) if known else F.lit(False)
    return cond | F.col(S.DATE).isNull() if None in dates else cond


def ingest_archive(spark, runs: str, out: str) -> SparkIngest:
    """Load the run folders of ``runs`` into ``out``/tables (see the module docstring)."""
    t0 = time.monotonic()
    archive, target = Store(spark, runs), Store(spark, out)
    if not archive.is_dir():
        raise GroundworkError(f"{runs} is not a directory (expected the run store's runs/ folder)")
    has_state = target.exists(*STATE)
    state = spark.read.schema(STATE_SCHEMA).parquet(target.path(*STATE)) if has_state else None
    ingest_id = 1 if state is None else (state.agg(F.max("ingest_id")).first()[0] or 0) + 1
    result = SparkIngest(ingest_id)

    listing = _fingerprints(_files(spark, archive)).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        result.folders_seen = listing.count()
        if state is None:
            changed = listing
            removed = spark.createDataFrame([], STATE_SCHEMA)
        else:
            live = state.where(~F.col("missing"))
            changed = listing.join(live.select(F.col("invocation_id").alias("run"), "fingerprint"),
                                   ["run", "fingerprint"], "left_anti")
            removed = live.join(listing.select(F.col("run").alias("invocation_id")), "invocation_id", "left_anti")
        changed = changed.select("run", "fingerprint").persist(StorageLevel.MEMORY_AND_DISK)
        n_changed = changed.count()
        removed_rows = removed.collect()
        result.runs_parsed = n_changed
        result.runs_unchanged = result.folders_seen - n_changed
        if n_changed or removed_rows:
            _load(spark, archive, target, state, changed, n_changed, result, removed_rows, ingest_id)
        changed.unpersist()
    finally:
        listing.unpersist()
    if target.exists(*STATE):
        result.runs_missing = spark.read.schema(STATE_SCHEMA).parquet(target.path(*STATE)).where("missing").count()
    run_table = read_table(spark, out, "runs") if target.exists(S.TABLES_DIR, "runs") else \
        spark.createDataFrame([], S.stored_schema("runs"))
    result.archive_issues = load_archive_level(spark, runs, out, ingest_id, run_table)
    result.seconds = time.monotonic() - t0
    return result


def _load(spark, archive: Store, target: Store, state, changed: DataFrame, n_changed: int, result: SparkIngest,
          removed_rows: list, ingest_id: int) -> None:
    if state is None or n_changed > BY_PATH_SHARE * max(result.folders_seen, 1):
        files = _files(spark, archive, content=True)
        if state is not None:
            files = files.join(changed.select("run"), "run", "left_semi")
    else:
        names = [row.run for row in changed.select("run").collect()]
        files = _files(spark, archive, [glob_escaped(archive.path(n)) for n in names], content=True) if names else None
    parallelism = max(spark.sparkContext.defaultParallelism * 4, 1)
    if files is not None:
        grouped = (files.rdd.map(lambda r: (r.run, (r.rel, r.size, r.mtime_ns, r.content)))
                   .groupByKey(parallelism).map(partial(_parse_group, ingest_id=ingest_id)))
        parsed = spark.createDataFrame(grouped, S.parsed_schema())
    else:
        parsed = spark.createDataFrame([], S.parsed_schema())
    parsed = parsed.withColumn(S.DATE, F.to_date(F.timestamp_micros(F.col("runs")[0]["completed_at"])))
    parsed = parsed.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        new_state = parsed.select(F.col("run").alias("invocation_id"), S.DATE)
        fresh = (changed.withColumnRenamed("run", "invocation_id").join(new_state, "invocation_id")
                 .select("invocation_id", "fingerprint", S.DATE, F.lit(False).alias("missing"),
                         F.lit(ingest_id).cast("int").alias("ingest_id")))
        fresh = fresh.persist(StorageLevel.MEMORY_AND_DISK)
        new_dates = {row[0] for row in fresh.select(S.DATE).distinct().collect()}
        result.parsed = tuple(row[0] for row in fresh.select("invocation_id").collect()) if n_changed <= 100_000 else ()
        old_changed: set = set()
        if state is not None:
            old_changed = {row[0] for row in state.join(fresh.select("invocation_id"), "invocation_id", "left_semi")
                           .select(S.DATE).distinct().collect()}
        removed_ids = [row.invocation_id for row in removed_rows]
        removed_dates = {row[S.DATE] for row in removed_rows}
        for table in RUN_TABLES:
            new_rows = _table_rows(parsed, table)
            if state is None:
                new_rows.write.mode("overwrite").partitionBy(S.DATE).parquet(target.path(S.TABLES_DIR, table))
                continue
            dates = new_dates | old_changed | (removed_dates if table == "runs" else set())
            _rewrite(spark, target, table, new_rows, fresh.select("invocation_id"), dates,
                     removed_ids if table == "runs" else [])
        _write_state(spark, target, state, fresh, removed_ids)
        fresh.unpersist()
    finally:
        parsed.unpersist()


def _rewrite(spark, target: Store, table: str, new_rows: DataFrame, replaced: DataFrame, dates: set,
             removed: list[str]) -> None:
    """Write again the partitions ``dates`` of a table: their rows but those of the ``replaced``
    runs, plus ``new_rows``; the ``removed`` runs' rows marked missing."""
    kept = read_table(spark, target.root, table).where(_in_dates(dates)).join(replaced, "invocation_id", "left_anti")
    if removed:
        kept = kept.withColumn("missing", F.col("missing") | F.col("invocation_id").isin(removed))
    staging = (STAGING, table)
    target.delete(*staging)
    kept.unionByName(new_rows).write.mode("overwrite").partitionBy(S.DATE).parquet(target.path(*staging))
    written = {name for name in target.children(*staging) if name.startswith(S.DATE + "=")}
    for date in dates:
        name = _partition_dir(date)
        if name not in written:
            target.delete(S.TABLES_DIR, table, name)  # every run it held is elsewhere now
    for name in written:
        target.move((*staging, name), (S.TABLES_DIR, table, name))
    target.delete(*staging)


def _write_state(spark, target: Store, state, fresh: DataFrame, removed: list[str]) -> None:
    if state is None:
        rows = fresh
    else:
        kept = state.join(fresh.select("invocation_id"), "invocation_id", "left_anti")
        if removed:
            kept = kept.withColumn("missing", F.col("missing") | F.col("invocation_id").isin(removed))
        rows = kept.unionByName(fresh)
    staging = (STAGING, "state")
    target.delete(*staging)
    rows.coalesce(max(1, spark.sparkContext.defaultParallelism)).write.mode("overwrite").parquet(target.path(*staging))
    target.move(staging, STATE)
    target.delete(STAGING)
