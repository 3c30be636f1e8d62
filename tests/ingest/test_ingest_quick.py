"""The quick scan (the default of `groundwork ingest` and the nightly): only what is new since the
last finished scan is read, and the warehouse ends as a full scan or a fresh ingest leaves it.

The archives here are "settled": their files and runs/ carry mtimes of an hour ago, as an archive
written during the day looks to the nightly (a run written in the seconds before an ingest is
listed again by the next one, ingest/load.py SETTLE_NS)."""

from __future__ import annotations

import builtins
import json
import os
import shutil
import time
from pathlib import Path

import pytest

from groundwork.synth import generate
from ingest_support import ingest, issues, run_row, snapshot, span_lines, write_span_lines

OLD = time.time_ns() - 3600 * 10**9


def settle(runs: Path) -> None:
    """Every file and folder of the archive (runs/ last) modified an hour ago."""
    for dirpath, dirnames, filenames in os.walk(runs, topdown=False):
        for name in filenames + dirnames:
            os.utime(os.path.join(dirpath, name), ns=(OLD, OLD), follow_symlinks=False)
    os.utime(runs, ns=(OLD, OLD))


@pytest.fixture(scope="module")
def two_archives(tmp_path_factory) -> tuple[Path, Path]:
    """Two small synthetic archives with distinct run ids (the second: runs to add)."""
    base = tmp_path_factory.mktemp("quick")
    generate(base / "a", 24, seed=11, violation_rate=0.3, workers=1)
    generate(base / "b", 6, seed=12, violation_rate=0.3, workers=1)
    return base / "a" / "runs", base / "b" / "runs"


def run_names(runs: Path) -> list[str]:
    return sorted(p.name for p in runs.iterdir() if p.is_dir() and p.name != "schemas")


@pytest.fixture
def archive(tmp_path, two_archives) -> Path:
    """A settled copy of the first archive, ingested once (a full scan: the first one)."""
    runs = tmp_path / "runs"
    shutil.copytree(two_archives[0], runs)
    settle(runs)
    return runs


def add_runs(runs: Path, src: Path) -> list[str]:
    """The runs of ``src`` written into ``runs`` in the workbench's order: folder, envelope and
    request, the index line, then the other files."""
    names = run_names(src)
    for name in names:
        shutil.copytree(src / name, runs / name)
    with open(runs / "invocations.jsonl", "ab") as fh:
        fh.write((src / "invocations.jsonl").read_bytes())
    return names


def fresh_snapshot(runs: Path) -> dict:
    con, result = ingest(runs)
    assert result.scan == "full"
    return snapshot(con)


def test_the_first_ingest_is_a_full_scan_and_the_next_a_quick_one(archive):
    con, first = ingest(archive, full_scan=False)
    _, second = ingest(archive, con, full_scan=False)
    assert (first.scan, second.scan) == ("full", "quick")
    assert con.execute("SELECT scan FROM ingests ORDER BY ingest_id").fetchall() == [("full",), ("quick",)]
    assert (second.folders_seen, second.runs_unchanged, second.runs_loaded, second.changed_runs) == (24, 24, 0, [])


def test_runs_added_read_only_them_and_give_the_rows_of_a_fresh_ingest(archive, two_archives, monkeypatch):
    con, _ = ingest(archive, full_scan=False)
    added = add_runs(archive, two_archives[1])
    import groundwork.ingest.work as work
    looked: list[str] = []
    for fn in ("list_and_read", "list_run"):
        real = getattr(work, fn)
        monkeypatch.setattr(work, fn, lambda root, real_root, name, *a, real=real: looked.append(name) or real(root, real_root, name, *a))
    _, result = ingest(archive, con, full_scan=False)
    assert result.scan == "quick"
    assert sorted(looked) == added                  # no other run folder read
    assert (result.runs_loaded, result.runs_unchanged, result.folders_seen) == (6, 24, 30)
    assert result.changed_runs == added
    assert snapshot(con) == fresh_snapshot(archive)


def test_nothing_changed_opens_no_run_folder(archive, monkeypatch):
    con, _ = ingest(archive, full_scan=False)
    runs = set(run_names(archive))
    touched: list[str] = []

    def inside_a_run(path) -> bool:
        try:
            rel = os.path.relpath(os.fsdecode(path), archive)
        except (TypeError, ValueError):
            return False
        return rel.split(os.sep)[0] in runs

    def spy(fn):
        def wrapper(path, *a, **kw):
            if not isinstance(path, int) and inside_a_run(path):
                touched.append(f"{fn.__name__} {path}")
            return fn(path, *a, **kw)
        return wrapper
    for name in ("scandir", "listdir", "stat", "lstat", "open"):
        monkeypatch.setattr(os, name, spy(getattr(os, name)))
    monkeypatch.setattr(builtins, "open", spy(builtins.open))
    _, result = ingest(archive, con, full_scan=False)
    monkeypatch.undo()
    assert (result.scan, result.runs_unchanged, result.runs_loaded) == ("quick", 24, 0)
    assert touched == []
    assert snapshot(con) == fresh_snapshot(archive)


def test_an_in_place_edit_is_missed_by_the_quick_scan_and_caught_by_a_full_scan(archive):
    con, _ = ingest(archive, full_scan=False)
    victim = run_names(archive)[3]
    lines = span_lines(archive / victim)
    lines[0]["name"] = "edited in place"
    write_span_lines(archive / victim, lines)
    before = snapshot(con)
    _, quick = ingest(archive, con, full_scan=False)
    assert (quick.scan, quick.runs_loaded) == ("quick", 0)
    assert snapshot(con) == before
    _, full = ingest(archive, con, full_scan=True)
    assert (full.scan, full.runs_loaded, full.changed_runs) == ("full", 1, [victim])
    assert snapshot(con) == fresh_snapshot(archive)
    assert con.execute("SELECT count(*) FROM spans WHERE invocation_id = ? AND name = 'edited in place'",
                       [victim]).fetchall() == [(1,)]


def test_a_deleted_folder_is_marked_missing_and_one_put_back_is_present_again(archive, tmp_path):
    con, _ = ingest(archive, full_scan=False)
    gone = run_names(archive)[5]
    shutil.move(archive / gone, tmp_path / gone)
    _, result = ingest(archive, con, full_scan=False)
    assert (result.scan, result.runs_missing, result.changed_runs) == ("quick", 1, [gone])
    assert run_row(con, gone)["missing"] is True
    shutil.move(tmp_path / gone, archive / gone)
    _, back = ingest(archive, con, full_scan=False)
    assert (back.runs_missing, back.changed_runs) == (0, [gone])
    assert run_row(con, gone)["missing"] is False
    assert snapshot(con) == fresh_snapshot(archive)


def test_a_run_listed_while_being_written_is_read_again_once_complete(archive, two_archives):
    """The workbench writes envelope.json and request.json, then the index line, then spans.jsonl,
    grounding.txt, sources.txt: a scan between them loads a partial run, and the next one reads
    it again, even when its files carry old mtimes (the index line names it, its files were
    missing)."""
    con, _ = ingest(archive, full_scan=False)
    src = two_archives[1]
    name = run_names(src)[0]
    (archive / name).mkdir()
    for f in ("envelope.json", "request.json"):
        shutil.copy2(src / name / f, archive / name / f)
    _, partial = ingest(archive, con, full_scan=False)
    assert partial.runs_loaded == 1 and any(kind == "missing-file" for kind, *_ in issues(con, name))
    line = next(ln for ln in (src / "invocations.jsonl").read_bytes().splitlines(keepends=True)
                if json.loads(ln)["invocation_id"] == name)
    with open(archive / "invocations.jsonl", "ab") as fh:
        fh.write(line)
    for f in sorted(os.listdir(src / name)):
        if not (archive / name / f).exists():
            (shutil.copytree if (src / name / f).is_dir() else shutil.copy2)(src / name / f, archive / name / f)
    settle(archive)
    _, complete = ingest(archive, con, full_scan=False)
    assert (complete.scan, complete.runs_loaded, complete.changed_runs) == ("quick", 1, [name])
    assert snapshot(con) == fresh_snapshot(archive)


def test_a_run_listed_before_its_last_file_is_read_again_by_the_next_quick_scan(archive, two_archives):
    """A run loaded while its sources.txt (the last file, whose absence is no issue) was still
    being written: its files are younger than the scan, so the next quick scan reads it again."""
    con, _ = ingest(archive, full_scan=False)
    src = two_archives[1]
    name = run_names(src)[1]
    assert (src / name / "sources.txt").exists()
    shutil.copytree(src / name, archive / name, ignore=shutil.ignore_patterns("sources.txt"))
    for f in (archive / name).iterdir():
        os.utime(f)  # written now
    with open(archive / "invocations.jsonl", "ab") as fh:
        fh.write(next(ln for ln in (src / "invocations.jsonl").read_bytes().splitlines(keepends=True)
                      if json.loads(ln)["invocation_id"] == name))
    _, first = ingest(archive, con, full_scan=False)
    assert first.runs_loaded == 1 and not any(kind == "missing-file" for kind, *_ in issues(con, name))
    shutil.copy(src / name / "sources.txt", archive / name / "sources.txt")
    _, second = ingest(archive, con, full_scan=False)
    assert (second.scan, second.runs_loaded, second.changed_runs) == ("quick", 1, [name])
    assert snapshot(con) == fresh_snapshot(archive)


def test_a_run_loaded_without_sources_txt_is_looked_into_once_more_whatever_its_mtimes(archive, two_archives):
    """A copy of the archive may bring a run's sources.txt (the file the workbench writes last),
    or its end, after the run was loaded, with old mtimes kept (rsync -a): the next quick scan
    looks into a run loaded without a complete one (ending with its newline) and reads it. Once:
    a run of a workbench before the source check never gets one, and the quick scan after that
    leaves it unread (an edit in place of it is the full scan's to find, as for any run)."""
    con, _ = ingest(archive, full_scan=False)
    src = two_archives[1]
    late, cut, never = run_names(src)[2:5]
    lines = {json.loads(ln)["invocation_id"]: ln for ln in (src / "invocations.jsonl").read_bytes().splitlines(keepends=True)}
    for name in (late, cut, never):
        shutil.copytree(src / name, archive / name, ignore=shutil.ignore_patterns("sources.txt"))
        with open(archive / "invocations.jsonl", "ab") as fh:
            fh.write(lines[name])
    (archive / cut / "sources.txt").write_bytes((src / cut / "sources.txt").read_bytes()[:-1])  # its newline not yet
    settle(archive)   # every file an hour old: no settle window reads them again
    os.utime(archive)  # but runs/ modified now, as adding a folder does
    _, first = ingest(archive, con, full_scan=False)
    assert (first.scan, sorted(first.changed_runs)) == ("quick", sorted([late, cut, never]))
    shutil.copy2(src / late / "sources.txt", archive / late / "sources.txt")
    shutil.copy2(src / cut / "sources.txt", archive / cut / "sources.txt")
    settle(archive)
    _, second = ingest(archive, con, full_scan=False)
    assert (second.scan, sorted(second.changed_runs)) == ("quick", sorted([late, cut]))
    assert snapshot(con) == fresh_snapshot(archive)
    (archive / never / "grounding.txt").write_text("grounding: edited in place\n", encoding="utf-8")
    settle(archive)
    _, third = ingest(archive, con, full_scan=False)
    assert (third.scan, third.runs_loaded) == ("quick", 0)


def test_a_run_whose_sources_txt_lacks_its_newline_is_looked_into_until_it_ends(archive, two_archives):
    """A sources.txt that does not end with its newline is a file still being written or copied
    (the workbench's ends with one): the run is looked into by every quick scan until it does,
    not once only (before: a copy that brought the rest two nightlies later, with old mtimes, left
    the run judged on the cut file until a full scan)."""
    con, _ = ingest(archive, full_scan=False)
    src = two_archives[1]
    cut = run_names(src)[3]
    shutil.copytree(src / cut, archive / cut, ignore=shutil.ignore_patterns("sources.txt"))
    whole = (src / cut / "sources.txt").read_bytes()
    (archive / cut / "sources.txt").write_bytes(whole[:-1])
    settle(archive)
    os.utime(archive)
    _, first = ingest(archive, con, full_scan=False)
    assert first.changed_runs == [cut]
    _, second = ingest(archive, con, full_scan=False)    # still cut: looked into, unchanged
    assert (second.scan, second.runs_loaded) == ("quick", 0)
    (archive / cut / "sources.txt").write_bytes(whole)
    settle(archive)
    _, third = ingest(archive, con, full_scan=False)
    assert (third.scan, third.changed_runs) == ("quick", [cut])
    assert run_row(con, cut)["recorded_sources"] == whole.decode("utf-8")
    assert snapshot(con) == fresh_snapshot(archive)


def test_an_index_line_whose_folder_is_missing_is_indexed_as_by_a_fresh_ingest(archive, two_archives):
    con, _ = ingest(archive, full_scan=False)
    with open(archive / "invocations.jsonl", "ab") as fh:
        fh.write((two_archives[1] / "invocations.jsonl").read_bytes().splitlines(keepends=True)[0])
    _, result = ingest(archive, con, full_scan=False)
    assert (result.scan, result.runs_loaded, result.runs_rejected) == ("quick", 0, 0)
    assert snapshot(con) == fresh_snapshot(archive)


@pytest.mark.parametrize("change", ["truncated", "rewritten-same-size", "rewritten-then-grown"])
def test_an_index_rewritten_or_truncated_is_read_whole_again(archive, change, monkeypatch):
    con, _ = ingest(archive, full_scan=False)
    index = archive / "invocations.jsonl"
    lines = index.read_bytes().splitlines(keepends=True)
    if change == "truncated":
        index.write_bytes(b"".join(lines[:-3]))
    elif change == "rewritten-same-size":
        index.write_bytes(b"".join(lines[:-2] + [lines[-1], lines[-2]]) if len(lines[-1]) == len(lines[-2])
                          else b"".join(lines[:-1] + [lines[-1].replace(b'"agent_id":"', b'"agent_iX":"', 1)]))
    else:  # the last line changed, then a line appended
        index.write_bytes(b"".join([*lines[:-1], lines[-1].replace(b'"agent_id":"', b'"agent_iX":"', 1), lines[0]]))
    import groundwork.ingest.load as load
    parsed: list[int] = []
    real = load.process_index_lines
    monkeypatch.setattr(load, "process_index_lines", lambda block: parsed.append(len(block)) or real(block))
    _, result = ingest(archive, con, full_scan=False)
    assert result.scan == "quick"
    assert sum(parsed) == len(index.read_bytes().splitlines())   # every line parsed again
    assert snapshot(con) == fresh_snapshot(archive)


def test_lines_appended_to_the_index_are_read_from_where_it_was_read_up_to(archive, two_archives, monkeypatch):
    con, _ = ingest(archive, full_scan=False)
    stored = con.execute("SELECT size, lines FROM archive_files WHERE path = 'invocations.jsonl'").fetchall()
    index = archive / "invocations.jsonl"
    assert stored == [(index.stat().st_size, 24)]
    import groundwork.ingest.load as load
    reads: list[int] = []
    real_open = builtins.open

    class Counting:
        def __init__(self, fh):
            self.fh = fh

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

        def seek(self, *a):
            return self.fh.seek(*a)

        def read(self, n=-1):
            data = self.fh.read(n)
            reads.append(len(data))
            return data
    monkeypatch.setattr(load, "open", lambda p, *a, **k: Counting(real_open(p, *a, **k)) if str(p) == str(index)
                        else real_open(p, *a, **k), raising=False)
    added = add_runs(archive, two_archives[1])
    grown = index.stat().st_size - stored[0][0]
    _, result = ingest(archive, con, full_scan=False)
    monkeypatch.undo()
    assert result.runs_loaded == len(added)
    # the last 4 KB before the old end (the check), then the new lines (twice: their run ids, then parsed)
    assert sum(reads) <= 4096 + 2 * grown
    assert snapshot(con) == fresh_snapshot(archive)
