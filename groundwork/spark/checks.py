"""The checks on Spark: every derived relation and rule file of the local lint and source
check, as they are, on Spark SQL; the messages, grounding.txt and sources.txt rendered in the
executors by the local checks' own code.

* The flat tables are temporary views over OUT/tables/ (and the sources.yaml's tables, loaded
  by groundwork.checks.sources exactly as ``groundwork verify`` loads them); every derived
  relation is a temporary view of its file's SELECT (groundwork.checks.derived, in derivation
  order; a persistent view could not read temporary ones), computed once (a local checkpoint,
  which also cuts its plan) where the local lint materialises it.
* Every rule file (groundwork.checks.rules) runs as it is, its ``$name`` parameters bound as
  Spark's ``:name`` (``spark.sql(query, args=...)``), never pasted; a window numbers each run's
  rows in the rule's ``order`` (ascending, NULLs last, as DuckDB sorts).
* The executors render each rule's rows with its message template
  (groundwork.checks.messages.render_rows, verify.violation_messages), then each run's verdict
  and texts from its rows: lint.assemble (grounding.txt) and verify.run_verdicts (sources.txt).

The local lint's verdict reuse has no counterpart here (every pass judges every run), so the
runs' ``context_key`` (what reuse compares) is left NULL.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import partial

import pyarrow as pa
from pyspark import StorageLevel
from pyspark.sql import DataFrame, functions as F, types as T

from groundwork.checks import derived, lint, rules as rules_mod, verify
from groundwork.checks.messages import render_rows
from groundwork.core.paths import SCHEMA_DIR
from groundwork.core.warehouse import connect
from groundwork.ingest.tables import RUN_TABLES
from groundwork.spark import tables as S
from groundwork.spark.ingest import read_table

SOURCE_TABLES = ("source_configs", "source_refs", "source_records")
SOURCE_CHECK_ITEMS = SCHEMA_DIR / "20_source_check_items.sql"
GROUNDING, SOURCES = "grounding", "sources"  # OUT/violations' check column

RENDERED = T.StructType([T.StructField("invocation_id", T.StringType()), T.StructField("rule", T.IntegerType()),
                         T.StructField("seq", T.IntegerType()), T.StructField("code", T.StringType()),
                         T.StructField("message", T.StringType()), T.StructField("finding", T.BooleanType())])
SOURCE_RENDERED = T.StructType([T.StructField("invocation_id", T.StringType()), T.StructField("ord", T.IntegerType()),
                                T.StructField("rule", T.IntegerType()), T.StructField("seq", T.IntegerType()),
                                T.StructField("code", T.StringType()), T.StructField("message", T.StringType())])
VIOLATION = T.StructType([T.StructField("check", T.StringType()), T.StructField("seq", T.IntegerType()),
                          T.StructField("code", T.StringType()), T.StructField("message", T.StringType()),
                          T.StructField("finding", T.BooleanType())])
VERDICT = T.StructType([
    T.StructField("invocation_id", T.StringType()), T.StructField("ingest_id", T.IntegerType()),
    T.StructField("lint_status", T.StringType()), T.StructField("mode", T.StringType()),
    T.StructField("retrieval_count", T.IntegerType()), T.StructField("chat_count", T.IntegerType()),
    T.StructField("lint_reason", T.StringType()), T.StructField("grounding_txt", T.StringType()),
    T.StructField("sources_status", T.StringType()), T.StructField("verified", T.IntegerType()),
    T.StructField("unresolved", T.ArrayType(T.StringType())), T.StructField("sources_reason", T.StringType()),
    T.StructField("sources_txt", T.StringType()), T.StructField("violations", T.ArrayType(VIOLATION))])

_PARAM = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)\b")

def spark_sql(sql: str) -> str:
    """A statement with Spark's parameter markers (``:name``) for DuckDB's (``$name``) outside
    strings and comments; the values stay bound."""
    out, last = [], 0
    for m in rules_mod.STRINGS_AND_COMMENTS.finditer(sql):
        out.append(_PARAM.sub(r":\1", sql[last:m.start()]))
        out.append(m.group(0))
        last = m.end()
    out.append(_PARAM.sub(r":\1", sql[last:]))
    return "".join(out)

@dataclass
class Checked:
    """The verdicts of one pass: one row per run (VERDICT), persisted until ``release``."""

    verdicts: DataFrame
    rules: tuple
    config_id: int | None
    persisted: list

    def release(self) -> None:
        for df in self.persisted:
            df.unpersist()

def _spark_frame(spark, table: pa.Table) -> DataFrame:
    """A DuckDB result (Arrow) as a Spark DataFrame, timestamps as TIMESTAMP_NTZ."""
    df = spark.createDataFrame(table) if table.num_rows else spark.createDataFrame([], _spark_schema(table.schema))
    for field in table.schema:
        if pa.types.is_timestamp(field.type):
            df = df.withColumn(field.name, F.col(field.name).cast("timestamp_ntz"))
    return df

def _spark_schema(schema: pa.Schema) -> T.StructType:
    kinds = {pa.string(): T.StringType(), pa.int32(): T.IntegerType(), pa.int64(): T.LongType(),
             pa.bool_(): T.BooleanType(), pa.float64(): T.DoubleType()}
    return T.StructType([T.StructField(f.name, T.TimestampNTZType() if pa.types.is_timestamp(f.type) else kinds[f.type])
                         for f in schema])

def register(spark, out: str, sources=None) -> tuple[int | None, list[DataFrame]]:
    """Temporary views of the flat tables (OUT/tables/ and the sources.yaml's) and of every
    derived relation; the configuration id of ``sources`` (None without) and the relations
    persisted."""
    for table in RUN_TABLES:
        read_table(spark, out, table).drop(S.DATE).createOrReplaceTempView(table)
    con = connect(":memory:")
    try:
        config_id = verify.load_into_warehouse(con, sources).config_id if sources is not None else None
        for table in SOURCE_TABLES:
            _spark_frame(spark, con.sql(f"SELECT * FROM {table}").to_arrow_table()).createOrReplaceTempView(table)
    finally:
        con.close()
    persisted = []
    views = [(r.name, r.body) for r in derived.RELATIONS]
    if sources is not None:
        views.append((derived.relation_name(SOURCE_CHECK_ITEMS), derived.view_body(SOURCE_CHECK_ITEMS)))
    for name, body in views:
        df = spark.sql(body)
        if name in derived.MATERIALISE or name == "source_check_items":
            # computed once, and its plan cut (a leaf): queries over views of views of the
            # recursive walk otherwise take Spark's analyser minutes to plan
            df = df.localCheckpoint(eager=True)
            persisted.append(df)
        df.createOrReplaceTempView(name)
    # lint.base_sql() reads lint_context (what verdict reuse compares): none here
    spark.sql("SELECT CAST(NULL AS STRING) AS invocation_id, CAST(NULL AS STRING) AS context_key "
              "WHERE false").createOrReplaceTempView("lint_context")
    return config_id, persisted

def _rule_frame(spark, rule: rules_mod.Rule, context: dict) -> DataFrame:
    """The rule's rows, each numbered (``_gw_seq``) in the rule's order within its run."""
    order = ", ".join(f"{c} ASC NULLS LAST" for c in rule.order) or "invocation_id"
    sql = (f"SELECT *, CAST(row_number() OVER (PARTITION BY invocation_id ORDER BY {order}) AS INT) AS _gw_seq "
           f"FROM (\n{spark_sql(rule.body)}\n) AS rule_rows")
    return spark.sql(sql, args=rules_mod.bind(rule, context) or None)

def _pylist(table, columns: list[str]) -> list[tuple]:
    """A record batch's (or table's) ``columns`` as row tuples."""
    return list(zip(*(table.column(c).to_pylist() for c in columns))) if table.num_rows else []

def _render_rule(batches, template: str, columns: list[str], index: int, code: str, finding: bool):
    """Executor side: a rule's rows -> their messages (the local lint's render_rows)."""
    for table in batches:
        rows = _pylist(table, columns)
        n = len(rows)
        yield pa.RecordBatch.from_pydict({
            "invocation_id": table.column("invocation_id"), "rule": pa.array([index] * n, pa.int32()),
            "seq": table.column("_gw_seq"), "code": pa.array([code] * n, pa.string()),
            "message": pa.array(render_rows(template, columns, rows), pa.string()),
            "finding": pa.array([finding] * n, pa.bool_())}, schema=pa.schema([
                ("invocation_id", pa.string()), ("rule", pa.int32()), ("seq", pa.int32()), ("code", pa.string()),
                ("message", pa.string()), ("finding", pa.bool_())]))

def _render_source_rule(batches, columns: list[str], index: int):
    """Executor side: S1/S2 rows -> their messages (verify.violation_messages)."""
    rules = verify.source_rules()
    for table in batches:
        rows = [dict(zip(columns, row)) for row in _pylist(table, columns)]
        messages = verify.violation_messages(rows, rules)
        yield pa.RecordBatch.from_pydict({
            "invocation_id": table.column("invocation_id"), "ord": table.column("ord").cast(pa.int32()),
            "rule": pa.array([index] * len(rows), pa.int32()), "seq": table.column("_gw_seq"),
            "code": pa.array([r["code"] for r in rows], pa.string()), "message": pa.array(messages, pa.string())},
            schema=pa.schema([("invocation_id", pa.string()), ("ord", pa.int32()), ("rule", pa.int32()),
                              ("seq", pa.int32()), ("code", pa.string()), ("message", pa.string())]))

def _verdicts(batches, sources: bool):
    """Executor side: each run's rows -> its verdicts and texts (lint.assemble, verify.run_verdicts)."""
    for batch in batches:
        table = pa.Table.from_batches([batch])
        found_lists = table.column("found").combine_chunks()
        flat = found_lists.flatten()
        parents = pa.compute.list_parent_indices(found_lists)
        found = pa.table({"invocation_id": pa.compute.take(table.column("invocation_id"), parents),
                          "code": flat.field("code"), "message": flat.field("message"),
                          "finding": flat.field("finding")})
        base = table.select(["invocation_id", "lintable", "reason", "mode", "retrieval_count", "chat_count",
                             "ingest_id", "context_key"])
        fresh = {v.invocation_id: v for v in lint.assemble(base, found).verdicts()}
        ids = table.column("invocation_id").to_pylist()
        checked = {}
        if sources:
            s_rows = _pylist(table, ["invocation_id", "verifiable", "unverifiable_reason", "with_copy", "ingest_id"])
            s_viol = {i: [{"code": v["code"], "message": v["message"]} for v in vs]
                      for i, vs in zip(ids, table.column("s_found").to_pylist()) if vs}
            s_unres = {i: [u["item"] for u in us] for i, us in zip(ids, table.column("s_unresolved").to_pylist()) if us}
            checked = {v.invocation_id: v for v in verify.run_verdicts(s_rows, s_viol, s_unres)}
        out = {name: [] for name in VERDICT.fieldNames()}
        for i, ingest_id in zip(ids, table.column("ingest_id").to_pylist()):
            g, s = fresh[i], checked.get(i)
            violations = [(GROUNDING, n, c, m, False) for n, (c, m) in enumerate(zip(g.codes, g.violations))]
            violations += [(GROUNDING, len(violations) + n, c, m, True) for n, (c, m) in enumerate(g.findings)]
            if s is not None:
                violations += [(SOURCES, n, c, m, False) for n, (c, m) in enumerate(zip(s.codes, s.violations))]
            for name, value in (("invocation_id", i), ("ingest_id", ingest_id), ("lint_status", g.status),
                                ("mode", g.mode), ("retrieval_count", g.retrieval_count),
                                ("chat_count", g.chat_count), ("lint_reason", g.reason),
                                ("grounding_txt", g.grounding_txt),
                                ("sources_status", s and s.status), ("verified", s.verified if s else None),
                                ("unresolved", s.unresolved if s else None), ("sources_reason", s and s.reason),
                                ("sources_txt", s and s.text),
                                ("violations", [dict(zip(VIOLATION.fieldNames(), v)) for v in violations])):
                out[name].append(value)
        yield pa.RecordBatch.from_pydict(out, schema=_ARROW_VERDICT)

def _arrow_type(t):
    if isinstance(t, T.StructType):
        return pa.struct([(f.name, _arrow_type(f.dataType)) for f in t.fields])
    if isinstance(t, T.ArrayType):
        return pa.list_(_arrow_type(t.elementType))
    return {T.StringType(): pa.string(), T.IntegerType(): pa.int32(), T.BooleanType(): pa.bool_()}[t]

_ARROW_VERDICT = pa.schema([(f.name, _arrow_type(f.dataType)) for f in VERDICT.fields])

def check(spark, out: str, sources=None) -> Checked:
    """Run every rule on the tables of ``out`` (see the module docstring); the verdicts."""
    config_id, persisted = register(spark, out, sources)
    context = {} if config_id is None else {"config_id": config_id}
    chosen = rules_mod.load_rules()
    found = None
    for index, rule in enumerate(chosen):
        df = _rule_frame(spark, rule, context)
        columns = [c for c in df.columns if c != "_gw_seq"]
        rendered = df.mapInArrow(partial(_render_rule, template=rule.template, columns=columns, index=index,
                                         code=rule.code, finding=rule.kind != "rule"), RENDERED)
        found = rendered if found is None else found.unionByName(rendered)
    runs = spark.sql(spark_sql(lint.base_sql()), args={"cycle_reason": lint.CYCLE_REASON}).localCheckpoint(eager=True)
    found = found.localCheckpoint(eager=True)  # every rule's rendered rows, computed in one job
    persisted.append(found)
    per_run = found.groupBy("invocation_id").agg(
        F.array_sort(F.collect_list(F.struct("rule", "seq", "code", "message", "finding"))).alias("found"))
    runs = runs.join(per_run, "invocation_id", "left").withColumn(
        "found", F.coalesce("found", F.expr("CAST(array() AS ARRAY<STRUCT<rule: INT, seq: INT, code: STRING, "
                                            "message: STRING, finding: BOOLEAN>>)")))
    if config_id is not None:
        runs = _with_sources(spark, runs, context, persisted)
    verdicts = runs.mapInArrow(partial(_verdicts, sources=config_id is not None), VERDICT)
    verdicts = verdicts.persist(StorageLevel.MEMORY_AND_DISK)
    persisted.append(verdicts)
    return Checked(verdicts, chosen, config_id, persisted)

def _with_sources(spark, runs: DataFrame, context: dict, persisted: list) -> DataFrame:
    """``runs`` with each run's source-check rows: RUN_ROWS_SQL's, its rendered S1/S2 rows in
    report order (``s_found``) and its S0 items in order (``s_unresolved``)."""
    rules = verify.source_rules()
    found = None
    for index, code in enumerate(verify.VIOLATION_RULES):
        df = _rule_frame(spark, rules[code], context)
        columns = [c for c in df.columns if c != "_gw_seq"]
        rendered = df.mapInArrow(partial(_render_source_rule, columns=columns, index=index), SOURCE_RENDERED)
        found = rendered if found is None else found.unionByName(rendered)
    found = found.localCheckpoint(eager=True)
    persisted.append(found)
    s_found = found.groupBy("invocation_id").agg(
        F.array_sort(F.collect_list(F.struct("ord", "rule", "seq", "code", "message"))).alias("s_found"))
    s_unres = _rule_frame(spark, rules[verify.UNRESOLVED_RULE], context).localCheckpoint(eager=True).groupBy("invocation_id").agg(
        F.array_sort(F.collect_list(F.struct(F.col("_gw_seq").alias("seq"), F.col("item").cast("string").alias("item"))))
        .alias("s_unresolved"))
    base = spark.sql(spark_sql(verify.RUN_ROWS_SQL.format(where="")), args=context).drop("ingest_id")  # runs has it
    return (runs.join(base, "invocation_id", "left").join(s_found, "invocation_id", "left")
            .join(s_unres, "invocation_id", "left"))
