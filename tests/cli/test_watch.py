"""`groundwork watch` as a real process: a run is judged once its folder is complete, and not
before; a restart catches up on what landed meanwhile; SIGTERM and SIGINT stop it with exit 0
(test_a_run_being_written..., test_a_restart...)."""

from __future__ import annotations

import signal
import time

import pytest

from cli_support import run_cli
from groundwork.checks.lint import lint_warehouse
from groundwork.checks.verify import verify_warehouse
from groundwork.core.warehouse import connect
from groundwork.ingest import ingest_archive
from ingest_support import CORPUS_RUNS, expected
from watch_support import SOURCES, Lander, WatchProcess, corpus_ids, expected_verdict, verdicts, wait_for_verdicts

FAILING_N1 = "01a22a33-cc8f-721d-9706-f81a30449b62"   # violation/N1/none-calls-a-model
PASSING = "01a22a33-c71c-7634-b9a4-2549192ec7ed"      # pass/retrieval/one-source


def test_a_run_being_written_gets_its_verdict_only_once_complete(tmp_path):
    runs, wh = tmp_path / "runs", tmp_path / "w.duckdb"
    lander = Lander(runs)
    watch = WatchProcess(runs, wh, "--settle", "120")
    try:
        watch.wait_started()
        # Everything up to grounding.txt: the workbench has not written sources.txt yet.
        lander.start(FAILING_N1, upto="grounding.txt")
        time.sleep(2.0)
        assert FAILING_N1 not in verdicts(wh)
        # sources.txt cut before its final newline: still being written.
        full = (CORPUS_RUNS / FAILING_N1 / "sources.txt").read_bytes()
        lander.write(FAILING_N1, "sources.txt", full[:-1])
        time.sleep(2.0)
        assert FAILING_N1 not in verdicts(wh)
        lander.write(FAILING_N1, "sources.txt", full)
        complete = time.monotonic()
        got = wait_for_verdicts(wh, [FAILING_N1], timeout=60)
        latency = time.monotonic() - complete
        metrics = watch.metrics.read_text()
    finally:
        code, out, err = watch.stop()
    v = got[FAILING_N1]
    assert {k: v[k] for k in ("lint", "grounding", "sources_status", "sources")} == expected_verdict(FAILING_N1)
    assert v["grounding"].startswith("grounding: FAILED")
    assert latency < 30, latency  # found complete, not merely settled (--settle 120); benchmarks/watch_latency.py measures it
    assert code == 0, err
    assert out.splitlines() == [f"run {FAILING_N1}: failed"]
    assert 'groundwork_watch_runs_total{check="grounding",status="failed"} 1' in metrics
    assert 'groundwork_watch_violations_total{check="grounding",rule="N1"} 1' in metrics
    assert "groundwork_watch_polling 0" in metrics


def test_a_folder_left_incomplete_is_judged_as_it_stands_once_settled(tmp_path):
    """A crashed writer: no sources.txt ever comes. After --settle seconds without a change the
    run is judged on the files there are (like the nightly would)."""
    runs, wh = tmp_path / "runs", tmp_path / "w.duckdb"
    lander = Lander(runs)
    watch = WatchProcess(runs, wh, "--settle", "3", "--poll", "0.2")
    try:
        watch.wait_started()
        lander.start(PASSING, upto="grounding.txt")
        time.sleep(1.0)
        assert PASSING not in verdicts(wh)
        got = wait_for_verdicts(wh, [PASSING], timeout=60)
    finally:
        code, _, err = watch.stop()
    assert code == 0, err
    assert got[PASSING]["lint"] == "passed"


def test_a_fifo_as_sources_txt_neither_blocks_it_nor_the_runs_after_it(tmp_path):
    """A run folder whose sources.txt is a FIFO (no writer ever comes) once hung the watch in
    open(2), deaf to SIGTERM. Now the run after it is judged as it lands, the FIFO run once it
    has settled (an ingest issue names its sources.txt, never opened), and SIGTERM stops it."""
    import os

    runs, wh = tmp_path / "runs", tmp_path / "w.duckdb"
    lander = Lander(runs)
    watch = WatchProcess(runs, wh, "--settle", "3")
    try:
        watch.wait_started()
        lander.start(PASSING, upto="grounding.txt")
        os.mkfifo(runs / PASSING / "sources.txt")
        lander.land(FAILING_N1)
        got = wait_for_verdicts(wh, [FAILING_N1, PASSING], timeout=60)
    finally:
        code, out, err = watch.stop()
    assert code == 0, err
    assert "Traceback" not in err
    assert {k: got[FAILING_N1][k] for k in ("lint", "grounding", "sources_status", "sources")} == expected_verdict(FAILING_N1)
    assert got[PASSING]["lint"] == "passed"
    con = connect(wh, read_only=True)
    try:
        issues = con.execute("SELECT path, message FROM ingest_issues WHERE invocation_id = ?", [PASSING]).fetchall()
    finally:
        con.close()
    assert any(path.endswith("sources.txt") and "not a regular file" in message for path, message in issues), issues


def test_a_restart_catches_up_on_what_landed_while_it_was_down(tmp_path):
    runs, wh = tmp_path / "runs", tmp_path / "w.duckdb"
    ids = corpus_ids()
    first, while_down, partial, reloaded = ids[:2], ids[2:6], ids[6], ids[7]
    lander = Lander(runs)
    watch = WatchProcess(runs, wh, "--settle", "60")
    try:
        watch.wait_started()
        for inv in first:
            lander.land(inv)
        wait_for_verdicts(wh, first, timeout=60)
    finally:
        code, _, err = watch.stop(signal.SIGINT)
    assert code == 0, err
    # While it is down: one run is ingested and checked by hand before its sources.txt is
    # written, then completed; complete runs land; another starts landing.
    lander.start(reloaded, upto="grounding.txt")
    con = connect(wh)
    try:
        ingest_archive(con, runs, workers=0)
        lint_warehouse(con)
        verify_warehouse(con, SOURCES)
    finally:
        con.close()
    stale = verdicts(wh)[reloaded]
    lander.finish(reloaded, after="grounding.txt")
    for inv in while_down:
        lander.land(inv)
    lander.start(partial, upto="spans.jsonl")
    watch = WatchProcess(runs, wh, "--settle", "60")
    try:
        watch.wait_started()
        got = wait_for_verdicts(wh, [*first, *while_down, reloaded], timeout=60)
        time.sleep(1.0)
        assert partial not in verdicts(wh)
        lander.finish(partial, after="spans.jsonl")
        got.update(wait_for_verdicts(wh, [partial], timeout=60))
    finally:
        code, out, err = watch.stop()
    assert code == 0, err
    for inv in [*first, *while_down, partial, reloaded]:
        v = got[inv]
        assert {k: v[k] for k in ("lint", "grounding", "sources_status", "sources")} == expected_verdict(inv), inv
        assert v["linted_ingest"] == v["ingest"]  # judged on the rows of the complete folder
    assert got[reloaded]["ingest"] != stale["ingest"]
    failing = {inv for inv in [*while_down, partial, reloaded]
               if not expected()[inv]["lint"]["passed"] or not expected()[inv]["sources"]["passed"]}
    assert {line.split(":")[0].removeprefix("run ") for line in out.splitlines()} == failing


@pytest.mark.parametrize("args", [
    ["{tmp}/none"],
    ["{tmp}", "--sources", "{tmp}/missing.yaml"],
    ["{tmp}", "--poll", "0"],
])
def test_jobs_that_cannot_be_done_exit_2_with_one_line(tmp_path, monkeypatch, capsys, args):
    args = [a.format(tmp=tmp_path) for a in args]
    code, out, err = run_cli(monkeypatch, capsys, "watch", *args, "--warehouse", str(tmp_path / "w.duckdb"))
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and err.startswith("groundwork: error: "), err


@pytest.mark.parametrize("settle", [-1.0, float("nan")])
def test_a_negative_settle_is_refused_before_any_work(tmp_path, settle):
    """--settle -1 made every folder "unchanged long enough" at once: a run still being written
    was judged (--poll refused the same values)."""
    from groundwork.core.errors import GroundworkError
    from groundwork.jobs.watch import Watch

    with pytest.raises(GroundworkError, match="--settle takes a number of seconds, 0 or more"):
        Watch(tmp_path, warehouse=tmp_path / "w.duckdb", settle=settle)._check_inputs()
    assert not (tmp_path / "w.duckdb").exists()


@pytest.mark.parametrize("command", ["watch", "nightly"])
def test_a_fifo_given_as_sources_is_named_as_such_not_missing(tmp_path, monkeypatch, capsys, command):
    import os

    fifo = tmp_path / "sources.yaml"
    os.mkfifo(fifo)
    runs = tmp_path / "runs"
    runs.mkdir()
    extra = ["--out", str(tmp_path / "out")] if command == "nightly" else []
    code, out, err = run_cli(monkeypatch, capsys, command, str(runs), "--sources", str(fifo),
                             "--warehouse", str(tmp_path / "w.duckdb"), *extra)
    assert (code, out) == (2, "")
    assert err == f"groundwork: error: sources file {fifo} is not a regular file (a FIFO)\n"
    assert not (tmp_path / "w.duckdb").exists()
