"""Property test: the SQL source check agrees with the reference source check.

Batches of generated runs (evidence citing pinned copies, live / missing refs, unknown and
non-string canonicalisations, wrong hashes, input and delegation evidence in every mode) are
ingested into an in-memory warehouse and verified once against a pinned sources.yaml; every run's
verified count, unresolved items, S1/S2 violations and sources.txt summary must equal the
reference's, and "unverifiable" must occur exactly where the workbench's check would crash.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import given, settings

import groundwork.ingest as ingest
from groundwork.checks import verify
from groundwork.core.warehouse import connect
from groundwork.jobs import dropin
from property_support import Verdict, describe, disagreements, reference_verify, writable
from reference import sources as refsrc
from strategies import archives, write_archive, write_sources

# soak runs (thorough profile) add byte-level mutations of the runs
HOSTILE = os.environ.get("GROUNDWORK_HYPOTHESIS") == "thorough"


def sql_verify(runs_dir: Path, sources_yaml: Path) -> dict[str, Verdict]:
    con = connect(":memory:")
    try:
        ingest.ingest_archive(con, runs_dir)
        result = verify.verify_warehouse(con, sources_yaml)
    finally:
        con.close()
    out = {}
    for r in result.runs:
        if r.status == "unverifiable":
            out[r.invocation_id] = Verdict("unverifiable")
        else:
            out[r.invocation_id] = Verdict(r.status, violations=tuple(r.violations), summary=r.summary,
                                           verified=r.verified, unresolved=tuple(r.unresolved))
    return out


@given(archives(hostile_bytes=HOSTILE))
def test_sql_verify_agrees_with_reference(runs):
    with tempfile.TemporaryDirectory() as tmp:
        sources_yaml = write_sources(Path(tmp) / "sources")
        copies = refsrc.load_sources(sources_yaml)
        expected = {run.name: reference_verify(run, copies) for run in runs}
        actual = sql_verify(write_archive(runs, Path(tmp) / "runs"), sources_yaml)
    problems = disagreements(runs, expected, actual)
    assert not problems, f"{len(problems)} of {len(runs)} runs disagree; first:\n{problems[0]}"



def test_snapshot_ref_is_printed_as_the_raw_value(tmp_path):
    """Evidence without a snapshot_ref looks up the copy registered as 'None' (docs/rules.md#s0)
    but the S1/S2 messages print the raw ref: `which None does not hold`; a numeric ref 5
    prints as 5."""
    from strategies import RECORDS, RunFiles, dump_envelope, uuid7

    sources_yaml = write_sources(tmp_path / "sources", str_refs=True)
    evidence = [{"source_id": "src:invented", "content_hash": "0" * 64},
                {"source_id": RECORDS[0]["source_id"], "snapshot_ref": 5, "canonicalisation": "dd-json-document-v1",
                 "content_hash": "1" * 64}]
    run = RunFiles(uuid7(1), {"spans.jsonl": b"", "envelope.json": dump_envelope(
        {"invocation_id": uuid7(1), "grounding_mode": "retrieval", "evidence": evidence}), "request.json": None})
    expected = reference_verify(run, refsrc.load_sources(sources_yaml))
    assert expected.violations[0] == "S1: evidence cites 'src:invented', which None does not hold"
    assert " does not match 5, where " in expected.violations[1]
    actual = sql_verify(write_archive([run], tmp_path / "runs"), sources_yaml)
    assert actual[run.name] == expected


@settings(max_examples=max(3, settings.default.max_examples // 4))
@given(runs=archives(max_runs=3))
def test_drop_in_verify_agrees_with_reference(runs, tmp_path_factory):
    """`groundwork verify ENVELOPE --sources FILE` path (dropin.verify_envelope) on single envelopes."""
    from groundwork.core.errors import GroundworkError

    tmp = tmp_path_factory.mktemp("verify")
    sources_yaml = write_sources(tmp / "sources")
    copies = refsrc.load_sources(sources_yaml)
    root = write_archive(runs, tmp / "runs")
    for run in runs:
        want = writable(reference_verify(run, copies))
        try:
            verdict = dropin.verify_envelope(root / run.name / "envelope.json", sources_yaml).runs[0]
            got = Verdict(verdict.status, violations=tuple(verdict.violations), summary=verdict.summary,
                          verified=verdict.verified, unresolved=tuple(verdict.unresolved))
        except GroundworkError:
            got = Verdict("unverifiable")
        assert got == want, describe(run, want, got)


def test_s1_repr_escapes_lone_surrogates(tmp_path):
    from strategies import RunFiles, dump_envelope, uuid7

    sources_yaml = write_sources(tmp_path / "sources")
    evidence = [{"source_id": "src:lone\ud800", "snapshot_ref": "snap:records", "content_hash": "0" * 64}]
    run = RunFiles(uuid7(1), {"spans.jsonl": b"", "envelope.json": dump_envelope(
        {"invocation_id": uuid7(1), "grounding_mode": "retrieval", "evidence": evidence}), "request.json": None})
    expected = reference_verify(run, refsrc.load_sources(sources_yaml))
    assert expected.violations == ("S1: evidence cites 'src:lone\\ud800', which 'snap:records' does not hold",)
    assert sql_verify(write_archive([run], tmp_path / "runs"), sources_yaml)[run.name] == expected
