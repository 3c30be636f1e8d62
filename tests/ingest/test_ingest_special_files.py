"""Every file the ingest or verify opens is checked the way run files are: a FIFO, socket or
device in its place is named in one issue (or one error line) and never waited on; and every
entry of a run folder is accounted for, a folder where a run file belongs included.

Each ingest here runs under an alarm: a reader blocked on a FIFO fails the test instead of
hanging it.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket

import pytest

from groundwork.checks.sources import check_sources
from groundwork.core.errors import ConfigError
from groundwork.ingest.load import load_single
from ingest_support import PASS_RETRIEVAL, archive, fresh_con, ingest, issues, run_row

NOT_REGULAR = "not a regular file; not read"


@contextlib.contextmanager
def deadline(seconds: int = 30):
    def hung(*_):
        raise TimeoutError("blocked (a FIFO opened for a blocking read?)")
    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _socket_at(path):
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(os.fspath(path))
    return sock


def _messages(con, path):
    return con.execute("SELECT kind, message, effect FROM ingest_issues WHERE path = ?", [path]).fetchall()


@pytest.mark.parametrize("make", ["fifo", "socket"])
def test_an_index_that_is_no_regular_file_is_named_not_waited_on(tmp_path, make):
    runs, (inv,) = archive(tmp_path, PASS_RETRIEVAL)
    if make == "fifo":
        os.mkfifo(runs / "invocations.jsonl")
    else:
        sock = _socket_at(runs / "invocations.jsonl")
    with deadline():
        con, result = ingest(runs)
    assert result.runs_loaded == 1 and result.exit_code == 1
    assert _messages(con, "invocations.jsonl") == [("unreadable", NOT_REGULAR, "none")]
    assert con.execute("SELECT count(*) FROM invocation_index").fetchone()[0] == 0
    assert run_row(con, inv)["lintable"]
    if make == "socket":
        sock.close()


def test_a_fifo_replacing_a_loaded_index_empties_it(tmp_path):
    runs, _ = archive(tmp_path, PASS_RETRIEVAL, index=True)
    con, _ = ingest(runs)
    assert con.execute("SELECT count(*) FROM invocation_index").fetchone()[0] > 0
    os.remove(runs / "invocations.jsonl")
    os.mkfifo(runs / "invocations.jsonl")
    with deadline():
        _, result = ingest(runs, con)
    assert result.exit_code == 1
    assert _messages(con, "invocations.jsonl") == [("unreadable", NOT_REGULAR, "none")]
    assert con.execute("SELECT count(*) FROM invocation_index").fetchone()[0] == 0


def test_a_class_schema_that_is_a_fifo_is_named_not_waited_on(tmp_path):
    runs, _ = archive(tmp_path, PASS_RETRIEVAL)
    (runs / "schemas").mkdir()
    good = runs / "schemas" / ("a" * 64 + ".json")
    good.write_text("{}")
    os.mkfifo(runs / "schemas" / ("b" * 64 + ".json"))
    with deadline():
        con, result = ingest(runs)
    assert result.exit_code == 1
    path = f"schemas/{'b' * 64}.json"
    assert _messages(con, path) == [("unreadable", "cannot read: not a regular file (a FIFO)", "none")]
    assert con.execute("SELECT digest FROM class_schemas").fetchall() == [("a" * 64,)]


def test_a_sources_yaml_that_is_a_fifo_is_one_error_line(tmp_path):
    os.mkfifo(tmp_path / "sources.yaml")
    with deadline(), pytest.raises(ConfigError) as exc:
        check_sources(tmp_path / "sources.yaml")
    assert str(exc.value) == f"cannot read {tmp_path / 'sources.yaml'}: not a regular file (a FIFO)"


def test_a_source_copy_that_is_a_fifo_is_one_error_line(tmp_path):
    os.mkfifo(tmp_path / "copy.jsonl")
    cfg = tmp_path / "sources.yaml"
    cfg.write_text(json.dumps({"sources": [{"snapshot_refs": ["a"], "path": "copy.jsonl", "id_field": "source_id",
                                            "sha256": "0" * 64}]}))
    with deadline(), pytest.raises(ConfigError) as exc:
        check_sources(cfg)
    assert str(exc.value) == f"source file {tmp_path / 'copy.jsonl'}: not a regular file (a FIFO)"


def test_a_drop_in_spans_file_that_is_a_fifo_is_unlintable_not_waited_on(tmp_path):
    runs, (inv,) = archive(tmp_path, PASS_RETRIEVAL)
    os.mkfifo(tmp_path / "spans.jsonl")
    con = fresh_con()
    with deadline():
        key = load_single(con, tmp_path / "spans.jsonl", runs / inv / "envelope.json")
    assert issues(con, key) == [("unreadable", str(tmp_path / "spans.jsonl"), None, "unlintable")]
    assert run_row(con, key)["unlintable_reason"] == f"spans.jsonl: {tmp_path / 'spans.jsonl'}: {NOT_REGULAR}"


# ------------------------------------------------------------------ every entry accounted for


@pytest.mark.parametrize("name, effect", [("sources.txt", "none"), ("grounding.txt", "none"),
                                          ("request.json", "none"), ("envelope.json", "unlintable+unverifiable"),
                                          ("spans.jsonl", "unlintable")])
def test_a_folder_where_a_run_file_belongs_is_recorded(tmp_path, name, effect):
    runs, (inv,) = archive(tmp_path, PASS_RETRIEVAL)
    os.remove(runs / inv / name)
    (runs / inv / name).mkdir()
    (runs / inv / name / "inside").write_text("never read")
    with deadline():
        con, result = ingest(runs)
    assert result.exit_code == 1
    assert issues(con, inv) == [("unreadable", f"{inv}/{name}", None, effect)]
    assert _messages(con, f"{inv}/{name}")[0][1] == "a folder, not a file; not read"
    r = run_row(con, inv)
    assert r["lintable"] == (effect == "none")
    files = [f for f, in con.execute("SELECT file_name FROM run_files WHERE invocation_id = ?", [inv]).fetchall()]
    assert name in files and f"{name}/inside" not in files


def test_an_empty_folder_inside_a_run_folder_is_recorded(tmp_path):
    runs, (inv,) = archive(tmp_path, PASS_RETRIEVAL)
    (runs / inv / "crate").mkdir()
    with deadline():
        con, result = ingest(runs)
    assert issues(con, inv) == [("unexpected-entry", f"{inv}/crate", None, "none")]
    assert run_row(con, inv)["lintable"]
