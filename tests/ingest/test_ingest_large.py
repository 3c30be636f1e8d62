"""One huge value never loses a batch (docs/rules.md#too-large-runs).

A 50 MB value in each place a run can hold one: an envelope string, evidence content, an owned
span attribute (dd.model_id: a column of its own), any other span attribute, the request. With
the read-time bounds the run is kept with a named issue and the runs around it load as they
would alone; with the bounds lifted (as if a value slipped past them) the warehouse refuses the
batch and the run is isolated as an ``unstorable`` stand-in, the rest of the batch loaded.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time

import pytest

from groundwork.ingest import load, scan, spans
from ingest_support import EXAMPLE_RUNS, ingest, issues, run_row

BIG = 50_000_000
PLACES = ("envelope-string", "evidence-content", "owned-attribute", "other-attribute", "request")
UNL, BOTH = "unlintable", "unlintable+unverifiable"


def _candidates() -> list[str]:
    """Example runs with an outcome object, an evidence object and span attributes."""
    out = []
    for name in sorted(os.listdir(EXAMPLE_RUNS)):
        d = EXAMPLE_RUNS / name
        if not (d / "envelope.json").is_file():
            continue
        env = json.loads((d / "envelope.json").read_text())
        ev = env.get("evidence")
        if isinstance(env.get("outcome"), dict) and isinstance(ev, list) and ev and isinstance(ev[0], dict):
            out.append(name)
    return out


def _enlarge(d, place: str) -> None:
    big = "x" * BIG
    if place in ("envelope-string", "evidence-content"):
        env = json.loads((d / "envelope.json").read_text())
        if place == "envelope-string":
            env["outcome"]["statement"] = big
        else:
            env["evidence"][0]["content"] = big
        (d / "envelope.json").write_text(json.dumps(env, indent=2))
    elif place == "request":
        req = json.loads((d / "request.json").read_text())
        req["input"]["text"] = big
        (d / "request.json").write_text(json.dumps(req, indent=2))
    else:
        lines = [json.loads(line) for line in (d / "spans.jsonl").read_text().splitlines()]
        lines[0]["attributes"]["dd.model_id" if place == "owned-attribute" else "x.note"] = big
        (d / "spans.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))


def _archive(tmp_path, places, good: int):
    """(runs dir, {place: victim id}, good ids): ``good`` untouched runs around the victims."""
    names = _candidates()
    assert len(names) >= len(places) + good
    runs = tmp_path / "runs"
    runs.mkdir()
    victims = dict(zip(places, names))
    good_ids = names[len(places):len(places) + good]
    for name in (*victims.values(), *good_ids):
        shutil.copytree(EXAMPLE_RUNS / name, runs / name)
    for place, name in victims.items():
        _enlarge(runs / name, place)
    return runs, victims, good_ids


def _size_named(message: str) -> bool:
    """The message gives the value's size in bytes (comma-grouped): at least BIG, a few bytes more."""
    sizes = [int(m.replace(",", "")) for m in re.findall(r"(\d{1,3}(?:,\d{3})+) bytes", message)]
    return any(BIG <= n < BIG + 10_000 for n in sizes)


def _good_rows(con, ids):
    return con.execute("SELECT invocation_id, lintable, verifiable, span_count, evidence_count, envelope_hash "
                       "FROM runs WHERE list_contains($ids, invocation_id) ORDER BY 1", {"ids": ids}).fetchall()


def _clean(tmp_path, ids):
    """The rows the good runs get when ingested alone."""
    runs = tmp_path / "clean" / "runs"
    runs.mkdir(parents=True)
    for name in ids:
        shutil.copytree(EXAMPLE_RUNS / name, runs / name)
    con, _ = ingest(runs)
    return _good_rows(con, ids)


# what the read-time bounds record, per place: (kind, file, line, effect, lintable, verifiable)
BOUNDED = {
    "envelope-string": ("too-large", "envelope.json", None, BOTH, False, False),
    "evidence-content": ("too-large", "envelope.json", None, BOTH, False, False),
    "owned-attribute": ("line-too-long", "spans.jsonl", 1, UNL, False, True),
    "other-attribute": ("line-too-long", "spans.jsonl", 1, UNL, False, True),
    # request.json is read by neither check (docs/rules.md#run-folder): the run is linted as usual
    "request": ("too-large", "request.json", None, "none", True, True),
}


def _check_bounded(con, place, inv):
    kind, file_name, line, effect, lintable, verifiable = BOUNDED[place]
    assert issues(con, inv) == [(kind, f"{inv}/{file_name}", line, effect)]
    message, = con.execute("SELECT message FROM ingest_issues WHERE invocation_id = ?", [inv]).fetchone()
    assert _size_named(message)  # how big
    r = run_row(con, inv)
    assert (r["lintable"], r["verifiable"]) == (lintable, verifiable)
    if not lintable:
        assert r["unlintable_reason"].startswith(f"{inv}/{file_name}")


@pytest.mark.parametrize("place", PLACES)
def test_a_huge_value_alone_is_recorded_by_name_and_size(tmp_path, place):
    runs, victims, _ = _archive(tmp_path, [place], 0)
    con, result = ingest(runs)
    assert result.runs_loaded == 1 and result.exit_code == 1
    _check_bounded(con, place, victims[place])


def test_huge_values_in_a_batch_leave_the_other_runs_as_they_load_alone(tmp_path):
    runs, victims, good = _archive(tmp_path, PLACES, 6)
    con, result = ingest(runs)
    assert result.runs_loaded == len(PLACES) + len(good)
    for place, inv in victims.items():
        _check_bounded(con, place, inv)
    assert _good_rows(con, good) == _clean(tmp_path, good)
    # the next ingest skips every run as unchanged (the big ones are not retried and fail no batch)
    _, again = ingest(runs, con)
    assert again.runs_unchanged == len(PLACES) + len(good) and again.runs_loaded == 0


@pytest.fixture
def unbounded(monkeypatch):
    """The read-time bounds lifted: the values reach the warehouse, which refuses them."""
    for module, name in ((scan, "MAX_LINE"), (scan, "MAX_DOCUMENT"), (scan, "MAX_SPANS"), (spans, "MAX_LINE")):
        monkeypatch.setattr(module, name, 1 << 40)


# the value the unstorable issue names, per place (envelope.json / spans.jsonl: the file it is in)
LARGEST = {
    "envelope-string": ("envelope.json", "runs.envelope_json"),
    "evidence-content": ("envelope.json", None),  # envelope_json or evidence.content_json: equal size
    "owned-attribute": ("spans.jsonl", "spans.attributes (line 1)"),
    "other-attribute": ("spans.jsonl", "spans.attributes (line 1)"),
}


def test_a_batch_the_warehouse_refuses_is_loaded_with_the_culprits_isolated(tmp_path, unbounded):
    # one value in a runs column, one in a spans column (each refused insert of 50 MB costs time)
    places = ["envelope-string", "owned-attribute"]
    runs, victims, good = _archive(tmp_path, places, 5)
    con, result = ingest(runs)
    assert result.runs_loaded == len(places) + len(good)
    for place, inv in victims.items():
        file_name, value = LARGEST[place]
        assert issues(con, inv) == [("unstorable", f"{inv}/{file_name}", None, BOTH)], place
        message, = con.execute("SELECT message FROM ingest_issues WHERE invocation_id = ?", [inv]).fetchone()
        assert "OutOfMemoryException" in message  # the real cause, not a TransactionException
        assert (value or "") in message and _size_named(message)
        r = run_row(con, inv)
        assert (r["lintable"], r["verifiable"]) == (False, False)
        assert con.execute("SELECT count(*) FROM run_files WHERE invocation_id = ?", [inv]).fetchone()[0] >= 4
    assert _good_rows(con, good) == _clean(tmp_path, good)
    _, again = ingest(runs, con)
    assert again.runs_unchanged == len(places) + len(good) and again.runs_loaded == 0


def test_a_refused_batch_after_others_in_its_transaction_has_them_written_again(tmp_path, unbounded, monkeypatch):
    """The batches of an ingest share a transaction (load.TXN_RUNS): refused rows roll back the
    batches before them too, which are read again and written (load._Writer._redo), the refused
    run isolated, nothing lost or counted twice."""
    runs, victims, good = _archive(tmp_path, ["envelope-string"], 5)
    real_classify = load.classify_root
    # one run per task and per batch, the victim (first by name) listed last: five batches before it
    monkeypatch.setattr(load, "classify_root", lambda root: iter(sorted(real_classify(root), key=lambda e: e[1], reverse=True)))
    monkeypatch.setattr(load, "_chunk_size", lambda total, workers: 1)
    again, real_again = [], load._Writer._again
    monkeypatch.setattr(load._Writer, "_again", lambda self, batch: again.append(batch) or real_again(self, batch))
    con, result = ingest(runs, batch_runs=1)
    assert len(again) == len(good)
    assert (result.folders_seen, result.runs_loaded, result.runs_unchanged, result.runs_rejected) == (6, 6, 0, 0)
    inv = victims["envelope-string"]
    assert issues(con, inv) == [("unstorable", f"{inv}/envelope.json", None, BOTH)]
    assert con.execute("SELECT count(*), count(DISTINCT invocation_id) FROM runs").fetchone() == (6, 6)
    assert _good_rows(con, good) == _clean(tmp_path, good)
    _, again_result = ingest(runs, con)
    assert again_result.runs_unchanged == 6 and again_result.runs_loaded == 0


def test_a_large_file_no_rule_reads_is_fingerprinted_not_held(tmp_path):
    import hashlib

    runs, victims, good = _archive(tmp_path, [], 1)
    blob = bytes(range(256)) * (20 * 4096 + 1)  # 20 MiB and a bit: streamed, hashed, not kept
    (runs / good[0] / "crate").mkdir()
    (runs / good[0] / "crate" / "blob.bin").write_bytes(blob)
    con, result = ingest(runs)
    assert result.exit_code == 0 and issues(con) == []
    assert con.execute("SELECT size, sha256 FROM run_files WHERE file_name = 'crate/blob.bin'").fetchall() == [
        (len(blob), hashlib.sha256(blob).hexdigest())]
    assert _good_rows(con, good) == _clean(tmp_path, good)


def test_an_interrupt_while_the_ingest_waits_for_its_writer_leaves_no_writer_thread_running(tmp_path):
    """A Ctrl-C or SIGTERM that reaches the main thread while it waits for the writer thread
    (the end of every ingest) used to leave that thread writing: the process then ended with it
    inside DuckDB, and the C++ runtime aborted it (exit -6, "FATAL: exception not rethrown") in
    about one SIGTERM in ten. The writer is now stopped (its open transaction rolled back) before
    the interrupt goes on."""
    from types import SimpleNamespace

    from groundwork.core.warehouse import connect

    con = connect(tmp_path / "w.duckdb")
    con.execute("CREATE TABLE t (x INTEGER)")
    writer = load._Writer(con)
    con.execute("BEGIN")          # as the writer's first batch opens its transaction
    con.execute("INSERT INTO t VALUES (1)")
    writer.open = True
    writer._write = lambda batch: time.sleep(0.5)   # a batch that takes a while to insert
    writer.put("a batch")
    real_join, calls = writer.thread.join, []

    def join(timeout=None):
        if not calls:             # the signal lands while the main thread waits
            calls.append(timeout)
            raise KeyboardInterrupt
        return real_join(timeout)

    writer.thread.join = join
    owner = SimpleNamespace(writer=writer, rejected_issues=[])
    with pytest.raises(KeyboardInterrupt):
        load._Loader.close_writer(owner, load.IngestResult(ingest_id=1, runs_dir=str(tmp_path)))
    assert not writer.thread.is_alive() and owner.writer is None
    assert con.execute("SELECT count(*) FROM t").fetchall() == [(0,)]   # rolled back, not committed
    con.close()
