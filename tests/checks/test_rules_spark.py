"""The rule files run unchanged on Spark SQL and find exactly what they find on DuckDB.

Rules read typed, flat tables only, and the derived relations of docs/rules.md#derived-relations are plain views over
them, so that a later step can run the same files on a distributed engine. This holds them to it:
a warehouse (the corpus, plus a synthetic archive in which every rule fires, source-checked
against its sources.yaml) is exported as `groundwork export` writes it (Parquet, Hive layout); a
local Spark session reads the export, creates the derived relations from the SELECT of their
files (sql/schema/30_derived/, in file order, and sql/schema/20_source_check_items.sql) and runs every rule file (grounding, findings, source check) as it is; the rows must
equal DuckDB's on the warehouse, rule by rule, as multisets. Parameters stay bound: a rule's ``$name`` markers are DuckDB's, and
Spark's are ``:name``, the one spelling the runner translates.

Needs pyspark >= 4.1 (recursive CTEs) and a Java runtime: ``pip install -e '.[test,spark]'``.
Skipped without them, unless GROUNDWORK_REQUIRE_SPARK=1 (CI sets it): then their absence fails.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from collections import Counter

import pytest
from spark_support import require_spark

import groundwork.ingest as ingest
from groundwork.checks import derived, rules
from groundwork.investigate.export import export_parquet
from groundwork.core.paths import SCHEMA_DIR
from groundwork.synth import generate
from groundwork.checks.verify import verify_warehouse
from groundwork.core.warehouse import connect

from ingest_support import CORPUS

FLAT = ("runs", "spans", "payload_refs", "evidence", "delegations", "ingest_issues",
        "source_configs", "source_refs", "source_records")
SOURCE_CHECK_ITEMS = SCHEMA_DIR / "20_source_check_items.sql"
VIEWS = (*derived.NAMES, derived.relation_name(SOURCE_CHECK_ITEMS))
RULES = rules.load_rules(kinds=("rule", "finding", "source"))




def view_bodies() -> dict[str, str]:
    """The SELECT of every derived view, as its file writes it, in derivation order."""
    bodies = {relation.name: relation.body for relation in derived.RELATIONS}
    bodies[derived.relation_name(SOURCE_CHECK_ITEMS)] = derived.view_body(SOURCE_CHECK_ITEMS)
    return bodies


def same_rows(spark_df, duck_cursor) -> None:
    """Equal column names and equal rows as multisets, columns matched by name (Spark puts a
    USING key first where DuckDB keeps the table's order; the templates read columns by name)."""
    names = [d[0] for d in duck_cursor.description]
    assert sorted(spark_df.columns) == sorted(names)
    assert rows(spark_df.select(*names).collect()) == rows(duck_cursor.fetchall())


def rows(result) -> Counter:
    """Rows as a multiset of plain tuples (arrays as tuples)."""
    return Counter(tuple(tuple(v) if isinstance(v, list) else v for v in row) for row in result)


@pytest.fixture(scope="module")
def engines(tmp_path_factory):
    require_spark()
    from pyspark.sql import SparkSession

    base = tmp_path_factory.mktemp("spark")
    archive = base / "runs"
    shutil.copytree(CORPUS / "runs", archive)
    generate(base / "synth", 400, seed=3, violation_rate=0.5, workers=1)
    for run in (base / "synth" / "runs").iterdir():
        if run.is_dir() and run.name != "schemas":
            shutil.copytree(run, archive / run.name)
    con = connect(":memory:")
    ingest.ingest_archive(con, archive)
    config_id = verify_warehouse(con, base / "synth" / "sources.yaml", record=False).config_id
    export = base / "export"
    export_parquet(con, export)  # what `groundwork export` writes: the Hive layout Spark reads

    # PySpark turns timestamps into naive datetimes in the process's local time zone; DuckDB's
    # TIMESTAMP values are naive UTC. Read both in UTC.
    tz = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    time.tzset()
    spark = (SparkSession.builder.master("local[2]").appName("groundwork-portability")
             .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
             .config("spark.sql.session.timeZone", "UTC").config("spark.driver.memory", "1g")
             .config("spark.sql.adaptive.enabled", "false")  # re-planning tiny stages: 67 -> 41 s here
             # its default, ./spark-warehouse, would leave an empty folder in the user's checkout
             .config("spark.sql.warehouse.dir", str(base / "spark-warehouse"))
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    try:
        for table in FLAT:
            spark.read.parquet(str(export / table)).createOrReplaceTempView(table)
        for name, body in view_bodies().items():  # in dependency order; each computed once
            spark.sql(body).createOrReplaceTempView(name)
            spark.sql(f"CACHE TABLE {name}")
        yield con, spark, {"config_id": config_id}
    finally:
        spark.stop()
        con.close()
        if tz is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = tz
        time.tzset()


def spark_sql(rule: rules.Rule) -> str:
    """The rule's SQL with Spark's parameter markers (:name) for DuckDB's ($name)."""
    body = rule.body
    for name in rule.params:
        body = re.sub(rf"\${name}\b", f":{name}", body)
    return body


def test_every_rule_has_rows_to_compare(engines):
    """The comparison means something only where a rule finds violations."""
    duck, _, context = engines
    silent = [r.stem for r in RULES if not duck.execute(r.body, rules.bind(r, context) or None).fetchall()]
    assert silent == []


@pytest.mark.parametrize("name", VIEWS)
def test_derived_relation_is_the_same_on_spark(engines, name):
    duck, spark, _ = engines
    same_rows(spark.table(name), duck.execute(f"SELECT * FROM {name}"))


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.stem)
def test_rule_file_finds_the_same_rows_on_spark(engines, rule):
    duck, spark, context = engines
    params = rules.bind(rule, context)
    same_rows(spark.sql(spark_sql(rule), args=params or None), duck.execute(rule.body, params or None))

