"""The complete run folder (docs/rules.md#complete-run-folders) and the index tail."""

from __future__ import annotations

import json
import os

from groundwork.jobs.landing import IndexTail, Waiting, is_complete, run_name_ok


def _line(inv) -> str:
    return json.dumps({"invocation_id": inv, "agent_id": "a"}, separators=(",", ":")) + "\n"


def test_the_tail_names_the_runs_appended_since_and_waits_for_a_whole_line(tmp_path):
    index = tmp_path / "invocations.jsonl"
    index.write_text(_line("old"))
    tail = IndexTail(str(tmp_path))
    tail.skip_to_end()
    assert tail.read() == ([], False)
    whole, cut = _line("a"), _line("b")
    with open(index, "a") as fh:
        fh.write(whole + cut[:10])
    assert tail.read() == (["a"], False)
    with open(index, "a") as fh:
        fh.write(cut[10:] + "\n" + "not json\n" + _line("../etc") + _line(7))
    assert tail.read() == (["b"], False)
    assert tail.read() == ([], False)


def test_a_replaced_or_shortened_index_is_reported_not_read_again(tmp_path):
    index = tmp_path / "invocations.jsonl"
    index.write_text(_line("a") + _line("b"))
    tail = IndexTail(str(tmp_path))
    tail.skip_to_end()
    index.write_text(_line("c"))  # same file, cut shorter
    assert tail.read() == ([], True)
    new = tmp_path / "new.jsonl"
    new.write_text(_line("a") + _line("b") + _line("c") + _line("d"))
    os.replace(new, index)  # another file
    assert tail.read() == ([], True)
    with open(index, "a") as fh:
        fh.write(_line("e"))
    assert tail.read() == (["e"], False)


def test_an_index_created_after_the_start_is_read_from_its_start(tmp_path):
    tail = IndexTail(str(tmp_path))
    tail.skip_to_end()
    assert tail.read() == ([], False)
    (tmp_path / "invocations.jsonl").write_text(_line("a"))
    assert tail.read() == (["a"], False)


def test_complete_means_sources_txt_written_to_its_final_newline(tmp_path):
    run = tmp_path / "r"
    run.mkdir()
    (run / "grounding.txt").write_text("grounding: passed [none] (0 retrieval, 0 chat spans)\n")
    assert not is_complete(str(run))
    (run / "sources.txt").write_text("sources: 0 verified, 0 unresolved")
    assert not is_complete(str(run))
    (run / "sources.txt").write_text("sources: 0 verified, 0 unresolved\n")
    assert is_complete(str(run))


def test_a_fifo_or_folder_in_place_of_sources_txt_is_not_complete_and_never_blocks(tmp_path):
    """A FIFO opened for reading waits for a writer: is_complete must not open one that way
    (it hung the watch, deaf to SIGTERM). A worker thread keeps a regression from hanging the suite."""
    import threading

    run = tmp_path / "r"
    run.mkdir()
    os.mkfifo(run / "sources.txt")
    found = []
    worker = threading.Thread(target=lambda: found.append(is_complete(str(run))), daemon=True)
    worker.start()
    worker.join(5)
    assert found == [False]
    os.unlink(run / "sources.txt")
    (run / "sources.txt").mkdir()
    assert not is_complete(str(run))


def test_a_waiting_folder_lands_when_complete_or_after_settling(tmp_path):
    now = 1000.0
    waiting = Waiting(str(tmp_path), settle=5, limit=2)
    for name in ("done", "stuck", "gone"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "envelope.json").write_text("{}")
    for name in ("done", "stuck", "gone"):
        waiting.add(name, now)
    assert waiting.overflowed and set(waiting.runs) == {"done", "stuck"}
    (tmp_path / "done" / "sources.txt").write_text("sources: 0 verified, 0 unresolved\n")
    assert waiting.landed(now + 1) == ["done"]
    (tmp_path / "stuck" / "spans.jsonl").write_text("")
    assert waiting.landed(now + 4) == []  # changed at +4: settles at +9
    assert waiting.landed(now + 8) == []
    assert waiting.landed(now + 9.5) == ["stuck"]
    assert len(waiting) == 0
    waiting.add("gone", now)
    (tmp_path / "gone" / "envelope.json").unlink()
    (tmp_path / "gone").rmdir()
    assert waiting.landed(now + 1) == [] and waiting.landed(now + 7) == []
    assert len(waiting) == 0  # dropped, not judged


def test_only_plain_folder_names_are_runs():
    assert run_name_ok("01a22a33-c71c-7634-b9a4-2549192ec7ed")
    for bad in ("", ".", "..", "../x", "a/b", "schemas", "invocations.jsonl", None, 7, "a\0b"):
        assert not run_name_ok(bad)
