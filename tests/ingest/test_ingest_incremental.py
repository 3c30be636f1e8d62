"""Incremental and idempotent: unchanged runs skipped, changed runs replaced whole, new runs added,
vanished runs kept and marked missing; kill -9 at any moment then re-run == one clean ingest;
a second writer gets a one-line error and exit 2."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from groundwork.core.warehouse import connect
from groundwork.ingest import parsers
from groundwork.ingest.load import SMALL
from ingest_support import (CORPUS_RUNS, PASS_NONE, PASS_RETRIEVAL, archive, fresh_con, ingest, issues, run_row,
                            snapshot, span_lines, write_span_lines)

ROOT = Path(__file__).resolve().parent.parent.parent


def clone_archive(dest: Path, copies: int) -> Path:
    """``copies`` x the corpus under fresh ids (envelope/request invocation_id rewritten to match)."""
    runs = dest / "runs"
    runs.mkdir()
    sources = sorted(p for p in CORPUS_RUNS.iterdir() if p.is_dir())
    n = 0
    for c in range(copies):
        for src in sources:
            new = f"01a22a33-{c:04x}-7{n % 4096:03x}-8000-{n:012x}"
            n += 1
            shutil.copytree(src, runs / new)
            for name in ("envelope.json", "request.json"):
                p = runs / new / name
                p.write_text(p.read_text().replace(src.name, new))
    shutil.copy(CORPUS_RUNS / "invocations.jsonl", runs / "invocations.jsonl")
    return runs


def test_reingest_of_an_unchanged_archive_changes_nothing(tmp_path):
    runs, _ = archive(tmp_path, PASS_RETRIEVAL, PASS_NONE, index=True)
    (runs / "junk.txt").write_text("x")
    con, first = ingest(runs)
    before = snapshot(con)
    _, again = ingest(runs, con)
    assert (again.runs_loaded, again.runs_unchanged, again.runs_rejected, again.issues_new) == (0, 2, 0, 0)
    assert snapshot(con) == before
    assert again.issues_by_kind == first.issues_by_kind == {"unexpected-entry": 1}
    assert con.execute("SELECT count(*), count(finished_at) FROM ingests").fetchall() == [(2, 2)]


def test_touched_files_with_same_content_stay_unchanged(tmp_path):
    runs, (inv, _) = archive(tmp_path, PASS_RETRIEVAL, PASS_NONE)
    con, _ = ingest(runs)
    spans_before = snapshot(con)["spans"]
    os.utime(runs / inv / "spans.jsonl", ns=(1, 1))
    _, again = ingest(runs, con)
    assert (again.runs_loaded, again.runs_unchanged) == (0, 2)
    assert snapshot(con)["spans"] == spans_before
    assert con.execute("SELECT mtime_ns FROM run_files WHERE invocation_id = ? AND file_name = 'spans.jsonl'",
                       [inv]).fetchall() == [(1,)]


def test_changed_run_is_replaced_whole_and_new_runs_are_added(tmp_path):
    runs, (inv, other) = archive(tmp_path, PASS_RETRIEVAL, PASS_NONE)
    con, _ = ingest(runs)
    docs = span_lines(runs / inv)
    write_span_lines(runs / inv, docs[:1])  # 3 spans -> 1
    (runs / inv / "envelope.json").write_text("[]")
    _, (added,) = archive(tmp_path, PASS_INPUT_ONLY := "pass/input_only/review")
    _, again = ingest(runs, con)
    assert (again.runs_loaded, again.runs_unchanged) == (2, 1)
    assert con.execute("SELECT count(*) FROM spans WHERE invocation_id = ?", [inv]).fetchall() == [(1,)]
    assert con.execute("SELECT count(*) FROM evidence WHERE invocation_id = ?", [inv]).fetchall() == [(0,)]
    assert con.execute("SELECT count(*) FROM payload_refs WHERE invocation_id = ?", [inv]).fetchall() == [(0,)]
    assert run_row(con, inv)["lintable"] is False
    assert issues(con) == [("wrong-type", f"{inv}/envelope.json", None, "unlintable+unverifiable")]
    # fixing the run removes its issue again
    shutil.rmtree(runs / inv)
    shutil.copytree(CORPUS_RUNS / inv, runs / inv)
    _, fixed = ingest(runs, con)
    assert fixed.runs_loaded == 1 and issues(con) == [] and fixed.exit_code == 0
    assert con.execute("SELECT count(*) FROM runs").fetchall() == [(3,)]
    assert added in [r for (r,) in con.execute("SELECT invocation_id FROM runs").fetchall()]


def test_vanished_run_stays_marked_missing_and_comes_back(tmp_path):
    runs, (inv, other) = archive(tmp_path, PASS_RETRIEVAL, PASS_NONE)
    (runs / inv / "spans.jsonl").unlink()
    con, first = ingest(runs)
    assert first.issues_by_kind == {"missing-file": 1}
    moved = tmp_path / "moved"
    shutil.move(runs / inv, moved)
    _, gone = ingest(runs, con)
    assert gone.runs_missing == 1 and gone.folders_seen == 1
    r = run_row(con, inv)
    assert r["missing"] is True and r["span_count"] == 0
    assert gone.issues_by_kind == {} and gone.exit_code == 0  # a missing run's old issues are history
    assert len(issues(con, inv)) == 1
    shutil.move(moved, runs / inv)
    _, back = ingest(runs, con)
    assert (back.runs_missing, back.runs_loaded, back.runs_unchanged) == (0, 0, 2)
    assert run_row(con, inv)["missing"] is False


def test_rehash_catches_edits_that_keep_size_and_mtime(tmp_path):
    runs, (inv,) = archive(tmp_path, PASS_RETRIEVAL)
    con, _ = ingest(runs)
    p = runs / inv / "grounding.txt"
    st = p.stat()
    p.write_bytes(p.read_bytes().replace(b"passed", b"PASSED"))
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
    _, quick = ingest(runs, con)
    assert quick.runs_loaded == 0
    _, thorough = ingest(runs, con, rehash=True)
    assert thorough.runs_loaded == 1
    assert run_row(con, inv)["recorded_grounding"].startswith("grounding: PASSED")


def test_memory_limit_is_lowered_for_the_ingest_and_restored(tmp_path):
    runs, _ = archive(tmp_path, PASS_RETRIEVAL)
    con = fresh_con()
    con.execute("SET memory_limit = '2GB'")
    before = con.execute("SELECT current_setting('memory_limit')").fetchall()
    seen = []
    ingest(runs, con, progress=lambda done, total: seen.append(
        con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]))
    after = con.execute("SELECT current_setting('memory_limit')").fetchall()
    assert after[0][0].endswith("GiB") and abs(float(after[0][0].split()[0]) - float(before[0][0].split()[0])) < 0.15
    assert seen and all(v.startswith("122") or v.startswith("128") for v in seen), seen  # 128MB while ingesting
    con.execute("SET memory_limit = '100MB'")  # a lower limit is never raised
    seen.clear()
    ingest(runs, con, progress=lambda done, total: seen.append(
        con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]))
    assert set(seen) == {con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]}


def test_runs_loaded_by_another_parser_version_are_reloaded(tmp_path):
    runs, _ = archive(tmp_path, PASS_RETRIEVAL, PASS_NONE)
    con, _ = ingest(runs)
    con.execute("UPDATE runs SET parser_version = 0")
    _, again = ingest(runs, con)
    assert again.runs_loaded == 2


def test_workers_give_the_same_warehouse_as_inline_parsing(tmp_path):
    runs = clone_archive(tmp_path, 3)
    inline, r1 = ingest(runs, workers=0)
    pooled, r2 = ingest(runs, workers=2, batch_runs=50)
    assert (r1.runs_loaded, r2.runs_loaded) == (297, 297)
    assert snapshot(inline) == snapshot(pooled)
    # parser processes started before the warehouse was opened (what `groundwork ingest` does)
    with parsers(2, runs) as pool:
        assert pool.workers == 2  # 297 run folders: not a small archive
        warmed, r3 = ingest(runs, batch_runs=50, parsers=pool)
    assert r3.runs_loaded == 297
    assert snapshot(warmed) == snapshot(inline)


def test_ingest_settings_apply_during_the_ingest_and_are_restored(tmp_path):
    runs, _ = archive(tmp_path, PASS_RETRIEVAL)
    con = fresh_con()
    query = ("SELECT current_setting('wal_autocheckpoint'), current_setting('threads'), "
             "current_setting('force_compression')")
    before = con.execute(query).fetchall()[0]
    seen = []
    ingest(runs, con, progress=lambda done, total: seen.append(con.execute(query).fetchall()[0]))
    assert con.execute(query).fetchall()[0] == before
    assert seen and all(wal.startswith("61.0") and threads == 1 and method == "zstd" for wal, threads, method in seen), seen


# ------------------------------------------------------------------------------ kill -9


INGEST_SCRIPT = """
import signal, sys
import duckdb
from groundwork.core.warehouse import schema_sql
from groundwork.ingest import ingest_archive
con = duckdb.connect(sys.argv[1])
con.execute("BEGIN")  # the schema in one transaction: one fsync instead of one per statement
con.execute(schema_sql())
con.execute("COMMIT")
hold_at = int(sys.argv[4])

def progress(done, total):
    if hold_at and done >= hold_at:  # tell the test, then hold the main thread until its kill -9:
        print(done, flush=True)      # the writer thread and the parser processes go on meanwhile
        signal.pause()
ingest_archive(con, sys.argv[2], workers=int(sys.argv[3]), batch_runs=40, txn_runs=80, progress=progress)
con.close()
"""


def _run_ingest(warehouse: Path, runs: Path, workers: int, crash: str | None = None, kill_at: int = 0):
    """Run an ingest in a new process group; with ``kill_at``, kill -9 the whole group once the
    ingest has taken ``kill_at`` runs' results (it waits there, so the kill always lands mid-ingest,
    wherever the writer thread and the parser processes have got to)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("GROUNDWORK_INGEST_CRASH", None)
    if crash:
        env["GROUNDWORK_INGEST_CRASH"] = crash
    proc = subprocess.Popen([sys.executable, "-c", INGEST_SCRIPT, str(warehouse), str(runs), str(workers), str(kill_at)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        if kill_at:
            reached = proc.stdout.readline()  # the ingest's own signal, not a delay
            os.killpg(proc.pid, signal.SIGKILL)
            assert int(reached or 0) >= kill_at, proc.communicate(timeout=600)[1].decode()
        out, err = proc.communicate(timeout=600)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # whatever failed above, no process is left behind
        except ProcessLookupError:
            pass
    return proc.returncode, err.decode()


def _killed_then_rerun(tmp_path, big_archive, workers: int, **kill):
    """An ingest killed by SIGKILL (at a crash point or a progress count), then run again to the
    end: the warehouse (opened read-only, returned) must equal a clean ingest's."""
    runs, clean = big_archive
    w = tmp_path / "w.duckdb"
    rc, err = _run_ingest(w, runs, workers, **kill)
    assert rc == -signal.SIGKILL, err
    rc, err = _run_ingest(w, runs, workers)
    assert rc == 0, err
    con = connect(w, read_only=True)
    assert snapshot(con) == clean
    return con


@pytest.fixture(scope="module")
def big_archive(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("kill")
    runs = clone_archive(tmp, 3)  # 297 runs: at least ingest.load.SMALL, so workers=2 starts parser processes
    # some damage, so issues and unlintable runs take part too
    victim = sorted(p for p in runs.iterdir() if p.is_dir())[5]
    (victim / "spans.jsonl").write_bytes(b"\xef\xbb\xbf" + (victim / "spans.jsonl").read_bytes())
    (runs / "stray.txt").write_text("")
    clean = tmp / "clean.duckdb"
    rc, err = _run_ingest(clean, runs, 0)
    assert rc == 0, err
    con = connect(clean, read_only=True)
    snap = snapshot(con)
    con.close()
    return runs, snap


@pytest.mark.parametrize("crash", ["batch-before-commit:1", "batch-after-commit:2", "index-before-commit:1",
                                   "finish-before-commit:1"])
def test_kill_at_a_transaction_boundary_then_rerun_equals_a_clean_ingest(tmp_path, big_archive, crash):
    con = _killed_then_rerun(tmp_path, big_archive, 0, crash=crash)
    assert con.execute("SELECT count(*) - count(finished_at) FROM ingests").fetchall() == [(1,)]  # the killed one
    con.close()


# kill_at: the first result (parser processes busy, nothing committed yet); the result that hands
# the first batch to the writer (5 tasks of 9 runs = 45: the writer starts its first transaction);
# about half way (batches committed, one being written)
@pytest.mark.parametrize("kill_at", [1, 45, 150])
def test_kill_at_an_arbitrary_moment_with_workers_then_rerun_equals_a_clean_ingest(tmp_path, big_archive, kill_at):
    runs, _ = big_archive
    assert sum(1 for p in runs.iterdir() if p.is_dir()) >= SMALL  # parser processes, not an inline parse
    _killed_then_rerun(tmp_path, big_archive, 2, kill_at=kill_at).close()


# ------------------------------------------------------------------------------ second writer


def test_second_writer_gets_one_line_naming_the_holder_and_exit_2(tmp_path):
    runs, _ = archive(tmp_path, PASS_RETRIEVAL)
    w = tmp_path / "w.duckdb"
    holder = subprocess.Popen([sys.executable, "-c",
                               "import duckdb, sys; c = duckdb.connect(sys.argv[1]); print('ready', flush=True); sys.stdin.read()",
                               str(w)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)  # holds the lock until killed
    try:
        assert holder.stdout.readline().strip() == "ready"
        proc = subprocess.run([sys.executable, "-m", "groundwork.cli", "ingest", str(runs), "--warehouse", str(w)],
                              capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    finally:
        holder.kill()
        holder.wait()
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "locked" in lines[0] and f"PID {holder.pid}" in lines[0]
    assert "Traceback" not in proc.stderr


# ------------------------------------------------------------------ invocations.jsonl, appended to


def _index_state(con) -> tuple[list, list]:
    """invocation_index rows and the index's issues (kind, line, message), sorted."""
    rows = con.execute("SELECT * FROM invocation_index ORDER BY line_no").fetchall()
    found = con.execute("SELECT kind, line, message, effect FROM ingest_issues "
                        "WHERE invocation_id IS NULL AND path = 'invocations.jsonl' ORDER BY ALL").fetchall()
    return rows, found


def _counting_index_parser(monkeypatch) -> list[int]:
    """Count the index lines handed to the parser (ingest runs inline in these tests)."""
    import groundwork.ingest.load as load

    parsed: list[int] = []
    real = load.process_index_lines

    def counting(lines):
        parsed.append(len(lines))
        return real(lines)
    monkeypatch.setattr(load, "process_index_lines", counting)
    return parsed


def _clean(runs) -> tuple[list, list]:
    con, _ = ingest(runs)
    return _index_state(con)


def test_lines_appended_to_the_index_are_the_only_ones_parsed_and_the_result_equals_a_clean_ingest(tmp_path, monkeypatch):
    runs, _ = archive(tmp_path, PASS_RETRIEVAL, index=True)
    index = runs / "invocations.jsonl"
    lines = index.read_text().splitlines(keepends=True)
    index.write_text("".join(lines[:40]) + "{broken\n")
    con, _ = ingest(runs)
    parsed = _counting_index_parser(monkeypatch)
    appended = [lines[2], "[1, 2]\n", "\n", *lines[40:]]   # an id indexed before, not an object, a blank line
    with open(index, "a") as fh:
        fh.write("".join(appended))
    ingest(runs, con)
    assert sum(parsed) == len(appended)
    after = _index_state(con)
    assert after == _clean(runs)
    kinds = {(kind, line) for kind, line, _, _ in after[1]}
    assert {("malformed-json", 41), ("duplicate-invocation-id", 42), ("wrong-type", 43)} <= kinds


def test_an_index_changed_before_its_end_is_parsed_again_whole(tmp_path, monkeypatch):
    runs, _ = archive(tmp_path, PASS_RETRIEVAL, index=True)
    index = runs / "invocations.jsonl"
    lines = index.read_text().splitlines(keepends=True)
    index.write_text("".join(lines[:30]))
    con, _ = ingest(runs)
    parsed = _counting_index_parser(monkeypatch)
    index.write_text("".join([lines[5], *lines[1:]]))   # line 1 rewritten (a duplicate now), then grown
    ingest(runs, con)
    assert sum(parsed) == len(lines)
    assert _index_state(con) == _clean(runs)


def test_an_index_whose_last_line_was_cut_off_is_parsed_again_whole(tmp_path, monkeypatch):
    runs, _ = archive(tmp_path, PASS_RETRIEVAL, index=True)
    index = runs / "invocations.jsonl"
    text = index.read_text()
    cut = text.index("\n", len(text) // 2) + 20     # a write caught in the middle of a line
    index.write_text(text[:cut])
    con, _ = ingest(runs)
    assert any(kind == "malformed-json" for kind, *_ in _index_state(con)[1])
    parsed = _counting_index_parser(monkeypatch)
    index.write_text(text)
    ingest(runs, con)
    assert sum(parsed) == text.count("\n")
    assert _index_state(con) == _clean(runs)
    assert _index_state(con)[1] == []


def test_an_index_touched_without_a_change_is_not_parsed_again(tmp_path, monkeypatch):
    runs, _ = archive(tmp_path, PASS_RETRIEVAL, index=True)
    index = runs / "invocations.jsonl"
    index.write_text(index.read_text() + "{broken")   # an issue to keep, and no final newline
    con, _ = ingest(runs)
    before = _index_state(con)
    parsed = _counting_index_parser(monkeypatch)
    os.utime(index, ns=(1, 1))
    ingest(runs, con)
    assert parsed == [] and _index_state(con) == before
    assert con.execute("SELECT mtime_ns FROM archive_files WHERE path = 'invocations.jsonl'").fetchall() == [(1,)]


def test_an_entry_added_to_or_removed_from_an_unchanged_run_folder_updates_its_issues(tmp_path):
    """A folder's entries that are not read (a symlinked folder, a file name that is not UTF-8)
    are issues of the run: adding or removing one changes no file, yet an ingest that reads the
    folder again must record or clear the issue as a clean ingest does."""
    runs, (inv, _) = archive(tmp_path, PASS_RETRIEVAL, PASS_NONE)
    con, _ = ingest(runs)
    os.symlink(runs / inv, runs / inv / "loop")
    os.close(os.open(os.path.join(os.fsencode(runs / inv), b"bad-\xff"), os.O_CREAT | os.O_WRONLY))
    _, again = ingest(runs, con)
    assert again.runs_loaded == 1
    assert issues(con) == issues(ingest(runs)[0]) != []
    (runs / inv / "loop").unlink()
    os.unlink(os.path.join(os.fsencode(runs / inv), b"bad-\xff"))
    _, fixed = ingest(runs, con)
    assert fixed.runs_loaded == 1 and issues(con) == []
