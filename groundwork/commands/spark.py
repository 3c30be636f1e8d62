"""`groundwork spark run RUNS --out OUT [--sources FILE] [--master URL] [--texts DIR] [--reports DIR]`:
the same checks on Spark (groundwork/spark), for archives past one machine or in object storage.

Exit 0: every run passed; 1: some run failed or could not be judged; 2: the job could not be done.
"""

from __future__ import annotations

from typing import Optional

import typer


def register(app: typer.Typer) -> None:
    spark_app = typer.Typer(help="Run the checks on Spark (README: Beyond one machine).", no_args_is_help=True)

    @spark_app.command("run")
    def run(
        runs: str = typer.Argument(..., help="The run store's runs/ folder: any path Spark reads (local, hdfs://, s3a://)."),
        out: str = typer.Option(..., "--out", help="Output folder (tables/, verdicts/, violations/): any path Spark writes."),
        sources: Optional[str] = typer.Option(None, "--sources", help="sources.yaml for the source check (read on the driver)."),
        master: str = typer.Option("local[*]", "--master", help="Spark master URL."),
        texts: Optional[str] = typer.Option(None, "--texts", help="Also write DIR/<invocation_id>/grounding.txt and sources.txt."),
        reports: Optional[str] = typer.Option(None, "--reports", help="Also render the nightly's reports into DIR."),
    ) -> None:
        """Parse new or changed run folders, run every rule file, write verdicts, texts and reports."""
        from groundwork.spark import submit  # pyspark and the JVM: not for --help

        argv = [runs, "--out", out, "--master", master]
        for flag, value in (("--sources", sources), ("--texts", texts), ("--reports", reports)):
            if value is not None:
                argv += [flag, value]
        raise typer.Exit(submit.main(argv))

    app.add_typer(spark_app, name="spark")
