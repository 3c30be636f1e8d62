"""Property test: the SQL grounding linter agrees with the reference linter on generated archives.

Each hypothesis example is a batch of run folders (generated runs of all four modes with
perturbations, and mutated corpus runs) written as one archive, ingested once into an in-memory
warehouse and linted once. For every run the SQL verdict must equal the reference's: status,
mode, the exact workbench-compatible violations in order, the counts and the grounding.txt
summary; "unlintable" exactly when the reference says the workbench would crash or hang.

Profiles: GROUNDWORK_HYPOTHESIS=ci (default, fast) / dev / thorough (see tests/conftest.py).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import given, settings

import groundwork.ingest as ingest
from groundwork.checks import lint
from groundwork.core.warehouse import connect
from property_support import describe, disagreements, reference_lint, sql_lint_verdicts, writable
from strategies import archives, write_archive

# soak runs (thorough profile) add byte-level mutations of the runs
HOSTILE = os.environ.get("GROUNDWORK_HYPOTHESIS") == "thorough"


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


@given(archives(hostile_bytes=HOSTILE))
def test_sql_lint_agrees_with_reference(runs):
    expected = {run.name: reference_lint(run) for run in runs}
    with tempfile.TemporaryDirectory() as tmp:
        actual = sql_lint(write_archive(runs, Path(tmp) / "runs"))
    problems = disagreements(runs, expected, actual)
    assert not problems, f"{len(problems)} of {len(runs)} runs disagree; first:\n{problems[0]}"


@settings(max_examples=max(3, settings.default.max_examples // 4))
@given(runs=archives(max_runs=3))
def test_drop_in_lint_agrees_with_reference(runs, tmp_path_factory):
    """`groundwork lint SPANS ENVELOPE` path: ingest.load_single of one run's two files, then lint."""
    root = write_archive(runs, tmp_path_factory.mktemp("runs"))
    for run in runs:
        con = connect(":memory:")
        try:
            key = ingest.load_single(con, root / run.name / "spans.jsonl", root / run.name / "envelope.json")
            result = lint.lint_warehouse(con)
            got = sql_lint_verdicts(con, result.lint_id).get(key)
        finally:
            con.close()
        want = writable(reference_lint(run))
        if not (got is None and want.status == "unlintable"):
            assert got == want, describe(run, want, got)


def test_repr_escapes_lone_surrogates(tmp_path):
    """`{sid!r}` of an evidence source_id holding a lone surrogate (JSON "\\ud800") is the ASCII
    text 's\\ud800' in the workbench's message (docs/rules.md#repr: Cs is non-printable)."""
    import json

    from strategies import RunFiles, dump_envelope, span_line, uuid7

    root = span_line("invoke_agent", "0x" + "a" * 32, "0x" + "1" * 16, None, "2026-01-01T00:00:00.000001Z",
                     "2026-01-01T00:00:00.000009Z", {"dd.grounding_mode": "retrieval"})
    envelope = {"invocation_id": uuid7(1), "grounding_mode": "retrieval",
                "evidence": [{"source_id": "s\ud800", "content_hash": "x"}]}
    run = RunFiles(uuid7(1), {"spans.jsonl": (json.dumps(root) + "\n").encode(),
                              "envelope.json": dump_envelope(envelope), "request.json": None})
    expected = reference_lint(run)
    assert expected.violations == ("G3: evidence 's\\ud800' hash x\u2026 not in trace",)
    assert sql_lint(write_archive([run], tmp_path / "runs"))[run.name] == expected


def test_far_future_times_compare_like_the_workbench(tmp_path):
    """int(timestamp * 1e9) through a double: in 2300, .000001 and .000002 are the same
    nanosecond integer, so a chat starting 1 µs before the first retrieval ends is not 'before'."""
    import json

    from strategies import RunFiles, dump_envelope, span_line, uuid7

    def line(name, sid, parent, start, end, attrs):
        return json.dumps(span_line(name, "0x" + "a" * 32, "0x" + sid, parent and "0x" + parent, start, end, attrs))

    spans = [line("invoke_agent", "1" * 16, None, "2026-01-01T00:00:00Z", "2026-01-01T00:00:01Z",
                  {"dd.grounding_mode": "retrieval"}),
             line("retrieval", "2" * 16, "1" * 16, "2300-01-01T00:00:00.000001Z", "2300-01-01T00:00:00.000002Z",
                  {"dd.source_id": "a", "dd.content_hash": "b"}),
             line("chat", "3" * 16, "1" * 16, "2300-01-01T00:00:00.000001Z", "2300-01-01T00:00:00.000003Z", {})]
    run = RunFiles(uuid7(1), {"spans.jsonl": ("\n".join(spans) + "\n").encode(),
                              "envelope.json": dump_envelope({"grounding_mode": "retrieval"}), "request.json": None})
    expected = reference_lint(run)
    assert expected.summary == "grounding: passed [retrieval] (1 retrieval, 1 chat spans)"
    assert sql_lint(write_archive([run], tmp_path / "runs"))[run.name] == expected
