"""The Spark session a `groundwork spark run` works in.

Spark turns TIMESTAMP values into Python datetimes in the process's time zone; the warehouse's
are naive UTC. The session therefore runs in UTC (``spark.sql.session.timeZone``), and the
tables' timestamps are TIMESTAMP_NTZ, read and written as the naive UTC values they are.
"""

from __future__ import annotations

import os
import shutil
import sys

from groundwork.core.errors import GroundworkError

MIN_PYSPARK = (4, 1)  # recursive CTEs (the span-tree walk of sql/schema/30_derived/)


def check_pyspark():
    """The pyspark module, or a GroundworkError saying what to install."""
    try:
        import pyspark
    except ImportError:
        raise GroundworkError("pyspark is not installed: pip install 'groundwork[spark]' (needs Java 17+)") from None
    version = tuple(int(p) for p in pyspark.__version__.split(".")[:2])
    if version < MIN_PYSPARK:
        raise GroundworkError(f"pyspark {pyspark.__version__} is too old: the rule files need 4.1 or newer")
    return pyspark


def _cores(master: str) -> int:
    """The worker threads of a local master (local, local[N], local[*], local[N,F])."""
    inside = master[master.find("[") + 1:master.find("]")] if "[" in master else "1"
    count = inside.split(",")[0]
    return os.cpu_count() or 1 if count == "*" else max(1, int(count)) if count.isdigit() else 1


def session(master: str | None = None, app: str = "groundwork", local_dir: str | None = None):
    """The active Spark session (under spark-submit), or a new one on ``master``.

    A local master (``local[N]``) runs the Python workers with this interpreter, so they import
    the same groundwork; on a cluster, ship the project to the executors (README: --py-files or
    a wheel) and set PYSPARK_PYTHON there.
    """
    check_pyspark()
    from pyspark.sql import SparkSession

    if master is None and os.environ.get("SPARK_HOME") is None and shutil.which("java") is None \
            and not os.environ.get("JAVA_HOME"):
        raise GroundworkError("no Java runtime for Spark (java not on PATH, JAVA_HOME unset); Spark needs Java 17+")
    builder = SparkSession.builder.appName(app)
    if master is not None:
        builder = builder.master(master)
    if (master or "").startswith("local") and not os.environ.get("PYSPARK_PYTHON"):
        os.environ["PYSPARK_PYTHON"] = sys.executable  # read when the workers start
    builder = (builder.config("spark.sql.session.timeZone", "UTC")
               .config("spark.sql.parquet.inferTimestampNTZ.enabled", "true")
               .config("spark.sql.sources.partitionOverwriteMode", "dynamic"))
    if (master or "").startswith("local"):
        # a few shuffle partitions per core: Spark's default (200) makes each of the ~60 shuffles
        # of a pass 200 tasks, which dominates on small archives
        builder = (builder.config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
                   .config("spark.sql.shuffle.partitions", str(2 * _cores(master)))
                   .config("spark.sql.files.openCostInBytes", str(64 * 1024))
                   # re-planning each of a pass's many small stages costs more than it saves here
                   .config("spark.sql.adaptive.enabled", "false")
                   # a broadcast is computed here, not fetched from lost executors: on a machine
                   # busy with other work its 300 s default failed a pass (the G0_tree walk) that
                   # was only slow
                   .config("spark.sql.broadcastTimeout", "3600"))
        if local_dir is not None:  # its default, ./spark-warehouse, would litter the working directory
            builder = builder.config("spark.sql.warehouse.dir", local_dir)
    try:
        spark = builder.getOrCreate()
    except Exception as exc:  # noqa: BLE001 - the JVM could not start: one line, not a traceback
        raise GroundworkError(f"cannot start Spark ({master or 'spark-submit master'}): "
                              f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    spark.sparkContext.setLogLevel("ERROR")
    return spark
