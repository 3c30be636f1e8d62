"""The spark-submit entry point of `groundwork spark run` (the same options):

    spark-submit --master local[2] "$(python -m groundwork.spark.submit --path)" RUNS --out OUT [--sources FILE]

Under spark-submit the master comes from spark-submit (--master, or the cluster's defaults);
the executors import the installed groundwork (README: "Beyond one machine: Spark").
"""

from __future__ import annotations

import argparse
import logging
import os
import sys

from groundwork.core.errors import GroundworkError
from groundwork.spark.inputs import check_inputs
from groundwork.spark.session import check_pyspark, session


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="groundwork spark run", description=__doc__.splitlines()[0])
    p.add_argument("runs", nargs="?", help="the run store's runs/ folder (any path Spark reads: local, hdfs://, s3a://)")
    p.add_argument("--out", help="output folder (any path Spark writes; required)")
    p.add_argument("--sources", help="sources.yaml for the source check (read on the driver)")
    p.add_argument("--master", help="Spark master URL (default: spark-submit's)")
    p.add_argument("--texts", help="also write DIR/<invocation_id>/grounding.txt and sources.txt (driver's disk)")
    p.add_argument("--reports", help="also render the nightly's reports into DIR (driver's disk)")
    p.add_argument("--path", action="store_true", help="print this script's path (for spark-submit) and exit")
    return p


class _Interrupts(logging.Filter):
    """py4j logs a KeyboardInterrupt that reaches it mid-call (Ctrl-C, or the SIGTERM the CLI
    turns into one) with its traceback, through the root logger, and then fails the call with a
    Py4JNetworkError: the record is dropped and the interrupt remembered, so the job ends as an
    interrupted one (one line), neither with a traceback nor as "Spark job failed"."""

    def __init__(self):
        super().__init__()
        self.seen = False

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and isinstance(record.exc_info[1], KeyboardInterrupt):
            self.seen = True
            return False
        return True


def main(argv=None) -> int:
    p = parser()
    args = p.parse_args(argv)
    if args.path:
        print(__file__)
        return 0
    if args.runs is None or args.out is None:
        p.error("RUNS and --out are required")
    interrupts = _Interrupts()
    logging.getLogger().addFilter(interrupts)
    try:
        check_inputs(args.runs, args.sources, args.texts, args.reports)  # a wrong path first, pyspark or not
        check_pyspark()  # one line when it is missing, before anything imports it
        from groundwork.spark.job import run  # imports pyspark

        spark = session(args.master)
        result = run(spark, args.runs, args.out, sources=args.sources, texts=args.texts, reports=args.reports)
    except GroundworkError as exc:
        print(f"groundwork: error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - a Spark or file-system failure: one line, not a traceback
        if interrupts.seen:
            raise KeyboardInterrupt from None   # `groundwork spark run`: "groundwork: interrupted"
        if os.environ.get("GROUNDWORK_DEBUG"):
            raise
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        print(f"groundwork: error: Spark job failed: {type(exc).__name__}: {first} "
              "(set GROUNDWORK_DEBUG=1 for a traceback)", file=sys.stderr)
        return 2
    finally:
        logging.getLogger().removeFilter(interrupts)
    print(result.totals_line())
    return result.exit_code


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("groundwork: interrupted", file=sys.stderr)
        sys.exit(2)
