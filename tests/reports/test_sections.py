"""The fleet report's kept sections (reports/sections.py): a nightly that reads what the one
before read takes the drift and unresolved-evidence sections from OUT/.groundwork-sections.json
(and the JUnit testsuites) instead of querying them; every other nightly computes them. Either way they must be what the
queries give tonight: each nightly here is checked against the same sections computed on its
own connection, right after, without the file."""

from __future__ import annotations

import shutil

import pytest

from groundwork.core.config import Config
from groundwork.jobs import nightly as nightly_job
from groundwork.reports import data, fleet, machine, sections
from ingest_support import EXAMPLE

KEPT = ("drift", "unresolved")


@pytest.fixture
def spy(monkeypatch):
    """Per nightly: whether its kept sections were computed, and whether they equal the queries'."""
    seen = []
    computed = {"n": 0, "junit": 0}
    real_drift, real_collect, real_suites, real_junit = data.drift, fleet.collect, machine._suites, machine.junit

    def drift(*args, **kwargs):
        computed["n"] += 1
        return real_drift(*args, **kwargs)

    def collect(con, p, meta, **kwargs):
        before = computed["n"]
        d = real_collect(con, p, meta, **kwargs)
        hit = computed["n"] == before
        full = real_collect(con, p, meta, state_ready=True)   # nothing kept: every section queried
        seen.append({"hit": hit, "equal": all(d[k] == sections._normal(full[k]) for k in KEPT)
                     and d["totals"] == full["totals"],   # the nightly hands build_state's totals over
                     "nonempty": bool(d["drift"]["grounding"]["classes"])})
        return d

    def suites(*args, **kwargs):
        computed["junit"] += 1
        return real_suites(*args, **kwargs)

    def junit(con, p, meta, kept=None):
        before = computed["junit"]
        text = real_junit(con, p, meta, kept)
        seen[-1]["junit_hit"] = computed["junit"] == before
        seen[-1]["equal"] = seen[-1]["equal"] and text == real_junit(con, p, meta)   # the JUnit XML itself
        return text

    monkeypatch.setattr(data, "drift", drift)
    monkeypatch.setattr(fleet, "collect", collect)
    monkeypatch.setattr(machine, "_suites", suites)
    monkeypatch.setattr(machine, "junit", junit)
    return seen


def _nightly(archive, wh, out, config=None, full_scan=False):
    return nightly_job.run_nightly(archive / "runs", out=out, warehouse=wh, sources=archive / "sources.yaml",
                                   config=config, full_scan=full_scan)


def test_a_nightly_with_nothing_changed_takes_the_kept_sections_and_they_equal_the_queries(tmp_path, spy):
    archive = tmp_path / "archive"
    shutil.copytree(EXAMPLE, archive)
    wh, out = tmp_path / "w.duckdb", tmp_path / "out"
    _nightly(archive, wh, out)                      # first nightly: computed
    _nightly(archive, wh, out)                      # nothing changed: kept
    _nightly(archive, wh, out)                      # again
    assert [s["hit"] for s in spy] == [False, True, True]
    assert [s["junit_hit"] for s in spy] == [False, True, True]
    assert all(s["equal"] and s["nonempty"] for s in spy)
    assert (out / sections.FILE).is_file()


def test_what_the_sections_read_changing_means_computing_them_again(tmp_path, spy):
    archive = tmp_path / "archive"
    shutil.copytree(EXAMPLE, archive)
    wh, out = tmp_path / "w.duckdb", tmp_path / "out"
    _nightly(archive, wh, out)
    # Another severity of a finding: which runs fail (the examples' has_page) may change.
    _nightly(archive, wh, out, Config(severity={"GW4": "error"}))
    # A run's recorded grounding.txt edited in place: a full scan reloads it, the checks judge it again.
    run = next(p for p in sorted((archive / "runs").iterdir()) if (p / "grounding.txt").is_file())
    (run / "grounding.txt").write_text("grounding: passed (edited)\n", encoding="utf-8")
    _nightly(archive, wh, out, Config(severity={"GW4": "error"}), full_scan=True)
    # The same report folder written from another warehouse of the same archive.
    _nightly(archive, tmp_path / "other.duckdb", out, Config(severity={"GW4": "error"}))
    assert [s["hit"] for s in spy] == [False, False, False, False]
    assert [s["junit_hit"] for s in spy] == [False, False, False, False]
    assert all(s["equal"] for s in spy)


def test_a_damaged_sections_file_is_computed_again(tmp_path, spy):
    archive = tmp_path / "archive"
    shutil.copytree(EXAMPLE, archive)
    wh, out = tmp_path / "w.duckdb", tmp_path / "out"
    _nightly(archive, wh, out)
    (out / sections.FILE).write_bytes(b'{"version": 1, "key": ')
    _nightly(archive, wh, out)
    _nightly(archive, wh, out)
    assert [s["hit"] for s in spy] == [False, False, True]
    assert [s["junit_hit"] for s in spy] == [False, False, True]
    assert all(s["equal"] for s in spy)
