"""Property test: the early stops over envelope values the linter cannot read (C6,
docs/rules.md#early-stops), SQL vs the reference.

Every run of these archives got ``p_early_stop`` last: it is stopped at step 1 (no root, two
roots, a hostile root) or step 3 (an invalid mode), or not stopped, and its envelope holds a
value the workbench's linter crashes on where it reads it — a truthy non-object ``outcome``, a
truthy non-list ``evidence`` or a non-object evidence element, a ``delegations`` that cannot be
iterated (read in delegation mode only). For every run the SQL lint verdict (status, mode,
violations, counts, grounding.txt) and the SQL source-check verdict must equal the reference's:
a stopped run gets its step-1 / step-3 report, a run past step 3 is unlintable, a delegations
value outside delegation mode changes nothing, and the source check, which reads the evidence of
every envelope, is unverifiable on bad evidence whatever the linter does. The drop-in `groundwork
lint SPANS ENVELOPE` prints the same report (no exit 2 on a stopped run), and the pure-Python
ingest (C paths off) stores the same rows as the C path.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings

import groundwork.ingest as ingest
from groundwork.checks import lint, verify
from groundwork.core import canonical
from groundwork.core.warehouse import connect
from groundwork.ingest import parse as P
from groundwork.jobs import dropin
from property_support import (Verdict, describe, disagreements, reference_lint, reference_verify,
                              sql_lint_verdicts, sql_verify_verdicts, writable)
from reference import sources as refsrc
from strategies import archives, write_archive, write_sources

# the rows ingest stores for a run (ingest_id and the load's bookkeeping aside)
ROWS_SQL = {
    "runs": "SELECT * EXCLUDE (ingest_id) FROM runs ORDER BY invocation_id",
    "ingest_issues": "SELECT * EXCLUDE (ingest_id) FROM ingest_issues ORDER BY ALL",
    "evidence": "SELECT * FROM evidence ORDER BY invocation_id, ord",
    "delegations": "SELECT * FROM delegations ORDER BY invocation_id, ord",
}


def _check(con, runs_dir: Path, sources_yaml: Path):
    ingest.ingest_archive(con, runs_dir, workers=0)
    linted = sql_lint_verdicts(con, lint.lint_warehouse(con).lint_id)
    verified = sql_verify_verdicts(verify.verify_warehouse(con, sources_yaml))
    rows = {table: con.execute(sql).fetchall() for table, sql in ROWS_SQL.items()}
    return linted, verified, rows


@settings(max_examples=max(5, settings.default.max_examples // 2))
@given(archives(max_runs=12, early_stops=True))
def test_early_stops_over_unreadable_envelope_values_agree_with_reference(runs):
    with tempfile.TemporaryDirectory() as tmp:
        sources_yaml = write_sources(Path(tmp) / "sources", str_refs=True)
        copies = refsrc.load_sources(sources_yaml)
        runs_dir = write_archive(runs, Path(tmp) / "runs")
        con = connect(":memory:")
        try:
            linted, verified, rows = _check(con, runs_dir, sources_yaml)
        finally:
            con.close()
        saved = P._envelope_native, canonical._native
        P._envelope_native = canonical._native = None  # the pure-Python paths (GROUNDWORK_NATIVE=off)
        con = connect(":memory:")
        try:
            linted_py, verified_py, rows_py = _check(con, runs_dir, sources_yaml)
        finally:
            P._envelope_native, canonical._native = saved
            con.close()
    problems = disagreements(runs, {r.name: reference_lint(r) for r in runs}, linted)
    problems += disagreements(runs, {r.name: reference_verify(r, copies) for r in runs}, verified)
    assert not problems, f"{len(problems)} disagreements; first:\n{problems[0]}"
    assert (linted_py, verified_py) == (linted, verified)
    for table in ROWS_SQL:
        assert rows_py[table] == rows[table], f"{table}: the pure-Python ingest stores other rows"


@settings(max_examples=max(3, settings.default.max_examples // 4))
@given(runs=archives(max_runs=3, early_stops=True))
def test_drop_in_lint_gives_the_early_stop_report(runs, tmp_path_factory):
    """`groundwork lint SPANS ENVELOPE` (dropin.lint_pair): the reference's report, or a refusal
    exactly where the reference says the workbench crashes."""
    from groundwork.core.errors import GroundworkError

    root = write_archive(runs, tmp_path_factory.mktemp("runs"))
    for run in runs:
        want = writable(reference_lint(run))
        try:
            verdict = dropin.lint_pair(root / run.name / "spans.jsonl", root / run.name / "envelope.json")
        except GroundworkError:
            got = Verdict("unlintable")
        else:
            got = Verdict(verdict.status, verdict.mode, tuple(verdict.violations), verdict.retrieval_count,
                          verdict.chat_count, verdict.summary)
        assert got == want, describe(run, want, got)
