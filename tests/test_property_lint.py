"""Property test: the SQL grounding linter agrees with the reference linter on generated archives.

Each hypothesis example is a batch of run folders (generated runs of all four modes with
perturbations, and mutated corpus runs) written as one archive, ingested once into an in-memory
warehouse and linted once. For every run the SQL verdict must equal the reference's: status,
mode, the exact workbench-compatible violations in order, the counts and the grounding.txt
summary; "unlintable" exactly when the reference says the workbench would crash or hang.

Profiles: GROUNDWORK_HYPOTHESIS=ci (default, fast) / dev / thorough (see tests/conftest.py).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given

from tests.property_support import disagreements, reference_lint, sql_lint_verdicts
from tests.strategies import archives, write_archive

ingest = pytest.importorskip("ingest")
lint = pytest.importorskip("groundwork.lint")
if not hasattr(ingest, "ingest_archive") or not hasattr(lint, "lint_warehouse"):
    pytest.skip("ingest.ingest_archive / groundwork.lint.lint_warehouse not available yet", allow_module_level=True)

from groundwork.warehouse import connect  # noqa: E402


def sql_lint(runs_dir: Path):
    con = connect(":memory:")
    try:
        ingest.ingest_archive(con, runs_dir)
        result = lint.lint_warehouse(con)
        lint_id = getattr(result, "lint_id", None)
        if lint_id is None:
            lint_id = con.execute("SELECT max(lint_id) FROM lints WHERE kind = 'lint'").fetchone()[0]
        return sql_lint_verdicts(con, lint_id)
    finally:
        con.close()


@given(archives())
def test_sql_lint_agrees_with_reference(runs):
    expected = {run.name: reference_lint(run) for run in runs}
    with tempfile.TemporaryDirectory() as tmp:
        actual = sql_lint(write_archive(runs, Path(tmp) / "runs"))
    problems = disagreements(runs, expected, actual)
    assert not problems, f"{len(problems)} of {len(runs)} runs disagree; first:\n{problems[0]}"
