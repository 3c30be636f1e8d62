"""The warehouse's flat tables as Spark schemas (from ingest.tables.COLUMNS, the one list of
their columns), and where each lives under OUT.

OUT/tables/<table>/ is Parquet in the Hive layout, partitioned by the run's completion date
(``completed_date``; runs without one are in Spark's default partition, read back as NULL).
Timestamps are TIMESTAMP_NTZ: the naive UTC values of the warehouse.
"""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql import types as T

from groundwork.ingest.tables import COLUMNS, RUN_TABLES

DATE = "completed_date"
TABLES_DIR = "tables"
STATE_DIR = "state"
VERDICTS_DIR = "verdicts"
VIOLATIONS_DIR = "violations"
ARCHIVE_DIR = "archive"  # OUT/archive/<table>/: invocation_index, class_schemas, the archive-level ingest_issues

_TYPES = {
    pa.string(): T.StringType(), pa.int32(): T.IntegerType(), pa.int64(): T.LongType(),
    pa.bool_(): T.BooleanType(), pa.float64(): T.DoubleType(), pa.timestamp("us"): T.TimestampNTZType(),
}


def timestamp_columns(table: str) -> tuple[str, ...]:
    return tuple(name for name, typ in COLUMNS[table] if typ == pa.timestamp("us"))


def float_columns(table: str) -> tuple[str, ...]:
    return tuple(name for name, typ in COLUMNS[table] if typ == pa.float64())


def row_schema(table: str, *, staged: bool = False) -> T.StructType:
    """The Spark schema of a table's rows; ``staged``: timestamps as the parser gives them
    (microseconds since the epoch, BIGINT), before they become TIMESTAMP_NTZ."""
    return T.StructType([T.StructField(name, T.LongType() if staged and typ == pa.timestamp("us") else _TYPES[typ])
                         for name, typ in COLUMNS[table]])


def stored_schema(table: str) -> T.StructType:
    """The schema of OUT/tables/<table>/: the table's columns and the partition column."""
    return T.StructType(row_schema(table).fields + [T.StructField(DATE, T.DateType())])


def parsed_schema() -> T.StructType:
    """One parsed run folder: its name and the rows it gives every run table."""
    return T.StructType([T.StructField("run", T.StringType(), False)] +
                        [T.StructField(t, T.ArrayType(row_schema(t, staged=True))) for t in RUN_TABLES])


def columns(table: str) -> list[str]:
    return [name for name, _ in COLUMNS[table]]
