"""Nothing lost, nothing silently skipped: every kind of bad input gives its exact ingest_issues row.

Each test damages one copy of a corpus run (pass/retrieval/one-source: spans line 1 policy_gate,
line 2 invoke_agent, line 3 retrieval) and checks (kind, path, line, effect), and whether the run
stays lintable (the workbench linter would still lint it) or is marked unlintable with a reason
(the workbench would crash or hang) — never dropped.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys

import pytest

from ingest_support import (PASS_NONE, PASS_RETRIEVAL, archive, envelope, ingest, issues, run_row, span_lines,
                            write_envelope, write_span_lines)

UNL = "unlintable"
BOTH = "unlintable+unverifiable"


@pytest.fixture
def one(tmp_path):
    runs, (inv,) = archive(tmp_path, PASS_RETRIEVAL)
    return runs, inv, runs / inv


def check(runs, inv, expected_issues, *, lintable=True, verifiable=True, reason_prefix=None):
    con, result = ingest(runs)
    assert issues(con) == expected_issues
    r = run_row(con, inv)
    assert (r["lintable"], r["verifiable"]) == (lintable, verifiable)
    if lintable:
        assert r["unlintable_reason"] is None
    else:
        assert r["unlintable_reason"].startswith(reason_prefix), r["unlintable_reason"]
    assert result.folders_seen == result.runs_loaded + result.runs_unchanged + result.runs_rejected
    assert result.exit_code == (1 if expected_issues else 0)
    return con, r


# ------------------------------------------------------------------------------ spans.jsonl


def test_malformed_json_line(one):
    runs, inv, d = one
    lines = (d / "spans.jsonl").read_text().splitlines(keepends=True)
    lines[1] = '{"name": "invoke_agent", \n'
    (d / "spans.jsonl").write_text("".join(lines))
    con, r = check(runs, inv, [("malformed-json", f"{inv}/spans.jsonl", 2, UNL)], lintable=False,
                   reason_prefix=f"{inv}/spans.jsonl line 2: invalid JSON")
    assert r["span_count"] == 2  # the other lines are still loaded


def test_truncated_spans_file(one):
    runs, inv, d = one
    data = (d / "spans.jsonl").read_bytes()
    (d / "spans.jsonl").write_bytes(data[: len(data) - 40])  # last line cut, no final newline
    check(runs, inv, [("truncated", f"{inv}/spans.jsonl", 3, UNL)], lintable=False,
          reason_prefix=f"{inv}/spans.jsonl line 3: last line is cut off")


@pytest.mark.parametrize("content", [b"", b"\n  \r\n\t\n"])
def test_empty_spans_file_is_linted_as_zero_spans(one, content):
    runs, inv, d = one
    (d / "spans.jsonl").write_bytes(content)
    _, r = check(runs, inv, [("empty-file", f"{inv}/spans.jsonl", None, "none")])
    assert r["span_count"] == 0 and r["span_format"] is None


def test_missing_spans_file(one):
    runs, inv, d = one
    (d / "spans.jsonl").unlink()
    check(runs, inv, [("missing-file", f"{inv}/spans.jsonl", None, UNL)], lintable=False,
          reason_prefix=f"{inv}/spans.jsonl: spans.jsonl is missing")


def test_non_utf8_bytes_in_spans(one):
    runs, inv, d = one
    data = (d / "spans.jsonl").read_bytes().replace(b'"name": "retrieval"', b'"name": "retr\xffieval"')
    (d / "spans.jsonl").write_bytes(data)
    con, r = check(runs, inv, [("non-utf8", f"{inv}/spans.jsonl", 3, UNL)], lintable=False,
                   reason_prefix=f"{inv}/spans.jsonl line 3: invalid UTF-8 byte 0xff")
    assert r["span_count"] == 3
    assert con.execute("SELECT name FROM spans WHERE line_no = 3").fetchall() == [("retr\ufffdieval",)]


def test_bom_in_spans_crashes_the_workbench_but_spans_are_loaded(one):
    runs, inv, d = one
    (d / "spans.jsonl").write_bytes(b"\xef\xbb\xbf" + (d / "spans.jsonl").read_bytes())
    _, r = check(runs, inv, [("bom", f"{inv}/spans.jsonl", 1, UNL)], lintable=False,
                 reason_prefix=f"{inv}/spans.jsonl line 1: file starts with a UTF-8 byte order mark")
    assert r["span_count"] == 3


@pytest.mark.parametrize("drop, message", [
    (("start_time",), "span line lacks the required key 'start_time'"),
    (("name",), "span line lacks the required key 'name'"),
    (("context", "span_id"), "span line lacks the required key context.span_id"),
    (("context", "trace_id"), "span line lacks the required key context.trace_id"),
])
def test_span_line_missing_a_required_key(one, drop, message):
    runs, inv, d = one
    docs = span_lines(d)
    target = docs[0]
    for key in drop[:-1]:
        target = target[key]
    del target[drop[-1]]
    write_span_lines(d, docs)
    check(runs, inv, [("missing-key", f"{inv}/spans.jsonl", 1, UNL)], lintable=False,
          reason_prefix=f"{inv}/spans.jsonl line 1: {message}")


@pytest.mark.parametrize("field, value, kind", [
    ("start_time", "2026-11-30T02:06:06.110151", "naive-time"),
    ("end_time", "yesterday", "bad-time"),
    ("start_time", 1796004366, "wrong-type"),
    ("parent_id", 99, "wrong-type"),
    ("attributes", ["dd.operation"], "wrong-type"),
    ("context", "0x1", "wrong-type"),
])
def test_span_line_with_a_value_the_workbench_cannot_read(one, field, value, kind):
    runs, inv, d = one
    docs = span_lines(d)
    docs[0][field] = value
    write_span_lines(d, docs)
    check(runs, inv, [(kind, f"{inv}/spans.jsonl", 1, UNL)], lintable=False,
          reason_prefix=f"{inv}/spans.jsonl line 1: ")


def test_span_line_that_is_not_an_object(one):
    runs, inv, d = one
    with open(d / "spans.jsonl", "a") as fh:
        fh.write("[1, 2]\n")
    check(runs, inv, [("wrong-type", f"{inv}/spans.jsonl", 4, UNL)], lintable=False,
          reason_prefix=f"{inv}/spans.jsonl line 4: span line is a JSON list")


@pytest.mark.parametrize("value", [0, "", False, None, 0.0])
def test_falsy_parent_id_means_no_parent(one, value):
    # docs/rules.md#span-records: linted normally, policy_gate then does not descend from the root
    runs, inv, d = one
    docs = span_lines(d)
    docs[0]["parent_id"] = value
    write_span_lines(d, docs)
    con, _ = check(runs, inv, [])
    assert con.execute("SELECT parent_id FROM spans WHERE line_no = 1").fetchall() == [(None,)]


def test_offset_times_are_converted_to_utc(one):
    runs, inv, d = one
    docs = span_lines(d)
    docs[0]["start_time"] = "2026-11-30T07:36:06.146650+05:30"
    write_span_lines(d, docs)
    con, _ = check(runs, inv, [])
    got = con.execute("SELECT strftime(start_time, '%Y-%m-%dT%H:%M:%S.%f') FROM spans WHERE line_no = 1").fetchall()
    assert got == [("2026-11-30T02:06:06.146650",)]


def test_crlf_and_blank_lines_are_harmless_but_u2028_splits_a_line(one):
    runs, inv, d = one
    text = (d / "spans.jsonl").read_text()
    (d / "spans.jsonl").write_text(text.replace("\n", "\r\n\r\n  \n"), newline="")
    con, r = check(runs, inv, [])
    assert r["span_count"] == 3
    # a raw U+2028 inside a line splits it (str.splitlines): the workbench crashes on the halves
    docs = span_lines(d)
    raw = json.dumps(docs[2], ensure_ascii=False).replace('"retrieval"', '"retr\u2028ieval"', 1)
    (d / "spans.jsonl").write_text(json.dumps(docs[0]) + "\n" + json.dumps(docs[1]) + "\n" + raw + "\n")
    check(runs, inv, [("malformed-json", f"{inv}/spans.jsonl", 3, UNL), ("malformed-json", f"{inv}/spans.jsonl", 4, UNL)],
          lintable=False, reason_prefix=f"{inv}/spans.jsonl line 3: invalid JSON")


def test_line_over_16_mib_is_recorded_and_skipped(one):
    # docs/rules.md#too-large-runs: the line is dropped while it is read (never held whole), so the
    # run cannot be linted as the workbench would; the other lines still load
    runs, inv, d = one
    docs = span_lines(d)
    docs[2]["attributes"]["dd.note"] = "x" * (16 * 1024 * 1024 + 1)
    write_span_lines(d, docs)
    con, r = check(runs, inv, [("line-too-long", f"{inv}/spans.jsonl", 3, UNL)], lintable=False,
                   reason_prefix=f"{inv}/spans.jsonl line 3: line is 16,777,")
    assert r["span_count"] == len(docs) - 1
    assert 3 not in [n for n, in con.execute("SELECT line_no FROM spans").fetchall()]


# ------------------------------------------------------------------------------ cycles


def _ids(docs):
    return [doc["context"]["span_id"] for doc in docs]


def test_cycle_through_the_root_makes_the_workbench_hang(one):
    # docs/rules.md#gw1: the root's parent_id names one of its descendants
    runs, inv, d = one
    docs = span_lines(d)
    docs[1]["parent_id"] = _ids(docs)[2]
    write_span_lines(d, docs)
    check(runs, inv, [("cycle", f"{inv}/spans.jsonl", 2, UNL)], lintable=False,
          reason_prefix=f"{inv}/spans.jsonl line 2: span ids form a cycle reachable from the invoke_agent root")


def test_duplicated_ancestor_id_cycle(one):
    # a retrieval span whose id repeats the root's id and whose parent is the root: loops forever
    runs, inv, d = one
    docs = span_lines(d)
    docs[2]["context"]["span_id"] = docs[1]["context"]["span_id"]
    write_span_lines(d, docs)
    check(runs, inv, [("cycle", f"{inv}/spans.jsonl", 3, UNL)], lintable=False,
          reason_prefix=f"{inv}/spans.jsonl line 3: span ids form a cycle")


def test_cycle_the_root_does_not_reach_is_recorded_only(one):
    runs, inv, d = one
    docs = span_lines(d)
    a = json.loads(json.dumps(docs[0]))
    b = json.loads(json.dumps(docs[0]))
    a["context"]["span_id"], a["parent_id"] = "0x00000000000000aa", "0x00000000000000bb"
    b["context"]["span_id"], b["parent_id"] = "0x00000000000000bb", "0x00000000000000aa"
    write_span_lines(d, docs + [a, b])
    check(runs, inv, [("cycle", f"{inv}/spans.jsonl", 4, "none")])


def test_cycle_with_two_roots_does_not_hang(one):
    # step 1 stops before any traversal when there is not exactly one invoke_agent span
    runs, inv, d = one
    docs = span_lines(d)
    docs[1]["parent_id"] = _ids(docs)[2]
    extra = json.loads(json.dumps(docs[1]))
    extra["context"]["span_id"] = "0x00000000000000cc"
    write_span_lines(d, docs + [extra])
    _, r = check(runs, inv, [("cycle", f"{inv}/spans.jsonl", 2, "none")])
    assert r["span_count"] == 4


# ------------------------------------------------------------------------------ envelope.json


def test_truncated_envelope(one):
    runs, inv, d = one
    text = (d / "envelope.json").read_text()
    cut = text[: len(text) // 2]
    (d / "envelope.json").write_text(cut)
    _, r = check(runs, inv, [("truncated", f"{inv}/envelope.json", cut.count("\n") + 1, BOTH)], lintable=False,
                 verifiable=False, reason_prefix=f"{inv}/envelope.json line {cut.count(chr(10)) + 1}: envelope.json ends before")
    assert r["unverifiable_reason"] == r["unlintable_reason"]


def test_malformed_envelope(one):
    runs, inv, d = one
    text = (d / "envelope.json").read_text().replace('"agent_id":', "agent_id:", 1)
    (d / "envelope.json").write_text(text)
    check(runs, inv, [("malformed-json", f"{inv}/envelope.json", 3, BOTH)], lintable=False, verifiable=False,
          reason_prefix=f"{inv}/envelope.json line 3: invalid JSON")


@pytest.mark.parametrize("content, kind", [(b"", "empty-file"), (b"  \n", "empty-file"), (None, "missing-file")])
def test_empty_or_missing_envelope(one, content, kind):
    runs, inv, d = one
    if content is None:
        (d / "envelope.json").unlink()
    else:
        (d / "envelope.json").write_bytes(content)
    _, r = check(runs, inv, [(kind, f"{inv}/envelope.json", None, BOTH)], lintable=False, verifiable=False,
                 reason_prefix=f"{inv}/envelope.json: envelope.json")
    assert r["span_count"] == 3 and r["grounding_mode"] is None


def test_non_utf8_envelope(one):
    runs, inv, d = one
    data = (d / "envelope.json").read_bytes().replace(b"fake.retrieval", b"fake.retr\xe9eval", 1)
    (d / "envelope.json").write_bytes(data)
    _, r = check(runs, inv, [("non-utf8", f"{inv}/envelope.json", 3, BOTH)], lintable=False, verifiable=False,
                 reason_prefix=f"{inv}/envelope.json line 3: invalid UTF-8 byte 0xe9")
    assert r["agent_id"] == "fake.retr\ufffdeval"


def test_bom_in_envelope(one):
    runs, inv, d = one
    (d / "envelope.json").write_bytes(b"\xef\xbb\xbf" + (d / "envelope.json").read_bytes())
    _, r = check(runs, inv, [("bom", f"{inv}/envelope.json", 1, BOTH)], lintable=False, verifiable=False,
                 reason_prefix=f"{inv}/envelope.json line 1: file starts with a UTF-8 byte order mark")
    assert r["agent_id"] == "fake.retrieval"  # loaded for reports


IF_READ = "unlintable-if-read"
BOTH_IF_READ = "unlintable-if-read+unverifiable"


@pytest.mark.parametrize("field, value, effect, message", [
    ("evidence", ["src:a"], BOTH_IF_READ, "evidence[0] is a JSON string, not an object"),
    ("evidence", [None], BOTH_IF_READ, "evidence[0] is a JSON null, not an object"),
    ("evidence", "src:a", BOTH_IF_READ, "evidence is a non-empty JSON string, not a list"),
    ("evidence", {"source_id": "src:a"}, BOTH_IF_READ, "evidence is a non-empty JSON object, not a list"),
    ("outcome", "succeeded", IF_READ, "outcome is a JSON string, not an object"),
    ("outcome", ["succeeded"], IF_READ, "outcome is a JSON array, not an object"),
    ("delegations", 3, IF_READ, "delegations is a JSON number, which cannot be iterated"),
    ("grounding_mode", ["retrieval"], "unverifiable", "grounding_mode is a JSON array; the workbench source check would crash on it"),
])
def test_envelope_values_of_the_wrong_type(one, field, value, effect, message):
    # The linter crashes on outcome / evidence / delegations only where it reads them
    # (docs/rules.md#early-stops): ingest records the part's problem and lint decides; the
    # source check reads the evidence and the mode of every envelope (docs/rules.md#unverifiable-runs).
    runs, inv, d = one
    env = envelope(d)
    env[field] = value
    write_envelope(d, env)
    con, r = ingest(runs)
    assert issues(con) == [("wrong-type", f"{inv}/envelope.json", None, effect)]
    r = run_row(con, inv)
    assert r["lintable"] is True and r["unlintable_reason"] is None
    assert r["verifiable"] is not effect.endswith("unverifiable")
    problems = {part: r[f"{part}_problem"] for part in ("outcome", "evidence", "delegations")}
    if effect == "unverifiable":
        assert r["unverifiable_reason"] == f"{inv}/envelope.json: {message}"
        assert problems == dict.fromkeys(problems)
    else:
        assert problems == dict(dict.fromkeys(problems), **{field: f"{inv}/envelope.json: {message}"})
        assert r["unverifiable_reason"] == (problems[field] if effect == BOTH_IF_READ else None)


def test_envelope_that_is_not_an_object(one):
    runs, inv, d = one
    (d / "envelope.json").write_text("[1, 2]")
    check(runs, inv, [("wrong-type", f"{inv}/envelope.json", None, BOTH)], lintable=False, verifiable=False,
          reason_prefix=f"{inv}/envelope.json: envelope is a JSON array, not an object")


@pytest.mark.parametrize("field, value", [("evidence", ""), ("evidence", 0), ("evidence", None), ("evidence", {}),
                                          ("outcome", None), ("outcome", ""), ("delegations", "abc"),
                                          ("delegations", {"a": 1})])
def test_falsy_or_iterable_values_are_linted_normally(one, field, value):
    # docs/rules.md#evidence-pairs, docs/rules.md#citable-set, docs/rules.md#truthiness
    runs, inv, d = one
    env = envelope(d)
    env[field] = value
    write_envelope(d, env)
    check(runs, inv, [])


def test_lone_surrogate_escape(one):
    runs, inv, d = one
    text = (d / "envelope.json").read_text().replace('"source_id": "src:a",\n      "retrieved_at"',
                                                     '"source_id": "src:\\ud800",\n      "retrieved_at"', 1)
    assert "\\ud800" in text
    (d / "envelope.json").write_text(text)
    con, _ = check(runs, inv, [("lone-surrogate", f"{inv}/envelope.json", None, "none")])
    assert con.execute("SELECT source_id, source_id_json FROM evidence").fetchall() == [("src:\ufffd", '"src:\\ud800"')]


# ------------------------------------------------------------------------------ folders, ids, files


def test_folder_name_differs_from_invocation_id(one):
    runs, inv, d = one
    other = "01a22a33-0000-7000-8000-000000000001"
    d.rename(runs / other)
    _, r = check(runs, other, [("name-mismatch", f"{other}/envelope.json", None, "none")])
    assert r["envelope_invocation_id"] == inv


def test_same_invocation_id_twice(one):
    runs, inv, d = one
    other = "01a22a33-0000-7000-8000-000000000002"
    shutil.copytree(d, runs / other)
    con, result = ingest(runs)
    assert issues(con) == [("duplicate-invocation-id", f"{other}/envelope.json", None, "none"),
                           ("duplicate-invocation-id", f"{inv}/envelope.json", None, "none"),
                           ("name-mismatch", f"{other}/envelope.json", None, "none")]
    assert result.runs_loaded == 2
    assert con.execute("SELECT count(*) FROM runs WHERE lintable").fetchall()[0][0] == 2

    msgs = dict(con.execute("SELECT path, message FROM ingest_issues WHERE kind = 'duplicate-invocation-id'").fetchall())
    assert msgs[f"{other}/envelope.json"] == f"invocation_id {inv} is also claimed by folder(s) {inv}"


def test_two_envelopes_without_an_invocation_id_say_so_not_none(one):
    """The envelopes' missing ids have the same str() (None): the issue says they have none."""
    runs, inv, d = one
    other = "01a22a33-0000-7000-8000-000000000003"
    shutil.copytree(d, runs / other)
    for run in (d, runs / other):
        doc = envelope(run)
        del doc["invocation_id"]
        write_envelope(run, doc)
    con, _ = ingest(runs)
    msgs = dict(con.execute("SELECT path, message FROM ingest_issues WHERE kind = 'duplicate-invocation-id'").fetchall())
    assert msgs == {f"{inv}/envelope.json": f"the envelope has no invocation_id, nor have the envelopes of folder(s) {other}",
                    f"{other}/envelope.json": f"the envelope has no invocation_id, nor have the envelopes of folder(s) {inv}"}


def test_duplicate_id_messages_follow_an_envelope_edited_between_ingests(one):
    """A re-ingest words the duplicate-id issues from the envelopes as they are now, though it
    takes an unchanged run's wording from the issue it kept (archive.claims): an envelope given
    the id "None" (its str() is that of a missing id) is then also claimed, not without an id."""
    runs, inv, d = one
    other, third = "01a22a33-0000-7000-8000-000000000004", "01a22a33-0000-7000-8000-000000000005"
    for name in (other, third):
        shutil.copytree(d, runs / name)
    for run in (d, runs / other, runs / third):
        doc = envelope(run)
        del doc["invocation_id"]
        write_envelope(run, doc)

    def messages(con):
        return dict(con.execute("SELECT path, message FROM ingest_issues WHERE kind = 'duplicate-invocation-id'").fetchall())

    def folders(*names):
        return ", ".join(sorted(names))

    con, _ = ingest(runs)
    none = "the envelope has no invocation_id, nor have the envelopes of folder(s) "
    assert messages(con) == {f"{inv}/envelope.json": none + folders(other, third),
                             f"{other}/envelope.json": none + folders(inv, third),
                             f"{third}/envelope.json": none + folders(inv, other)}
    doc = envelope(runs / third)
    doc["invocation_id"] = "None"
    write_envelope(runs / third, doc)
    os.utime(runs / third / "envelope.json", ns=(1, 1))  # another mtime whatever the clock's resolution
    for full_scan in (True, False):  # the full scan reloads the run; the quick one after it keeps what it found
        con, result = ingest(runs, con, full_scan=full_scan)
        assert messages(con) == {f"{inv}/envelope.json": none + folders(other, third),
                                 f"{other}/envelope.json": none + folders(inv, third),
                                 f"{third}/envelope.json": "invocation_id None is also claimed by folder(s) " + folders(inv, other)}
    assert result.runs_unchanged == 3


def test_unreadable_files(one, tmp_path):
    runs, inv, d = one
    (d / "envelope.json").unlink()
    os.symlink(runs / "no-such-file", d / "envelope.json")  # dangling, inside the archive
    (d / "spans.jsonl").unlink()
    os.mkfifo(d / "spans.jsonl")                             # not a regular file: never opened
    check(runs, inv, [("unreadable", f"{inv}/envelope.json", None, BOTH),
                      ("unreadable", f"{inv}/spans.jsonl", None, UNL)],
          lintable=False, verifiable=False, reason_prefix=f"{inv}/spans.jsonl: not a regular file")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_permission_denied(one):
    runs, inv, d = one
    os.chmod(d / "spans.jsonl", 0)
    try:
        check(runs, inv, [("unreadable", f"{inv}/spans.jsonl", None, UNL)], lintable=False,
              reason_prefix=f"{inv}/spans.jsonl: cannot read")
    finally:
        os.chmod(d / "spans.jsonl", 0o644)


def test_symlinks_leading_outside_the_archive(one, tmp_path):
    runs, inv, d = one
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.move(d / "envelope.json", outside / "envelope.json")
    os.symlink(outside / "envelope.json", d / "envelope.json")
    check(runs, inv, [("symlink-outside", f"{inv}/envelope.json", None, BOTH)], lintable=False, verifiable=False,
          reason_prefix=f"{inv}/envelope.json: symlink to ")


def test_run_folder_symlinked_outside_is_rejected_and_counted(one, tmp_path):
    runs, inv, d = one
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(d, elsewhere)
    other = "01a22a33-0000-7000-8000-000000000003"
    os.symlink(elsewhere, runs / other)
    con, result = ingest(runs)
    assert issues(con) == [("symlink-outside", other, None, "rejected")]
    assert (result.folders_seen, result.runs_loaded, result.runs_rejected) == (2, 1, 1)
    assert con.execute("SELECT count(*) FROM runs").fetchall() == [(1,)]
    assert result.exit_code == 1


def test_run_folder_symlinked_inside_the_archive_is_loaded(one):
    runs, inv, d = one
    other = "01a22a33-0000-7000-8000-000000000003"
    os.symlink(d, runs / other)  # a second name for the same run folder
    con, result = ingest(runs)
    assert (result.folders_seen, result.runs_loaded, result.runs_rejected) == (2, 2, 0)
    assert ("name-mismatch", f"{other}/envelope.json", None, "none") in issues(con)
    assert run_row(con, other)["envelope_invocation_id"] == inv


def test_symlink_inside_the_archive_is_followed(one):
    runs, inv, d = one
    (d / "request.json").rename(runs / "request-copy.json")
    os.symlink(runs / "request-copy.json", d / "request.json")
    con, _ = ingest(runs)
    assert issues(con) == [("unexpected-entry", "request-copy.json", None, "none")]
    assert run_row(con, inv)["input_hash"] is not None


def test_undecodable_folder_name_is_rejected_and_counted(one):
    runs, inv, d = one
    os.mkdir(os.fsencode(runs) + b"/bad-\xff-name")
    con, result = ingest(runs)
    assert issues(con) == [("bad-name", "bad-\\xff-name", None, "rejected")]
    assert (result.folders_seen, result.runs_loaded, result.runs_rejected) == (2, 1, 1)


def test_unexpected_entries_and_extra_files(one):
    runs, inv, d = one
    (runs / "notes.txt").write_text("hello")
    (d / "envelope.withheld.json").write_text("{}")
    (d / "crate").mkdir()
    (d / "crate" / "ro-crate-metadata.json").write_text("{}")
    con, _ = ingest(runs)
    assert issues(con) == [("unexpected-entry", "notes.txt", None, "none")]
    files = [f for (f,) in con.execute("SELECT file_name FROM run_files ORDER BY file_name").fetchall()]
    assert files == ["crate/ro-crate-metadata.json", "envelope.json", "envelope.withheld.json", "grounding.txt",
                     "request.json", "sources.txt", "spans.jsonl"]


def test_request_and_recorded_verdict_problems_do_not_block_linting(one):
    runs, inv, d = one
    (d / "request.json").write_text('{"input": }')
    (d / "grounding.txt").unlink()
    (d / "sources.txt").write_bytes(b"sources: 0 verified\xff\n")
    _, r = check(runs, inv, [("malformed-json", f"{inv}/request.json", 1, "none"),
                             ("missing-file", f"{inv}/grounding.txt", None, "none"),
                             ("non-utf8", f"{inv}/sources.txt", 1, "none")])
    assert (r["input_hash"], r["recorded_grounding"], r["recorded_sources"]) == (None, None, "sources: 0 verified\ufffd\n")


def test_malformed_index_line(tmp_path):
    runs, (inv,) = archive(tmp_path, PASS_RETRIEVAL, index=True)
    lines = (runs / "invocations.jsonl").read_text().splitlines(keepends=True)
    lines[1] = lines[1][: len(lines[1]) // 2] + "\n"
    lines.append(lines[0])
    (runs / "invocations.jsonl").write_text("".join(lines))
    con, result = ingest(runs)
    assert issues(con) == [("duplicate-invocation-id", "invocations.jsonl", len(lines), "none"),
                           ("malformed-json", "invocations.jsonl", 2, "none")]
    assert con.execute("SELECT count(*) FROM invocation_index").fetchall()[0][0] == len(lines) - 1


def test_cli_summarises_issues_on_stderr_without_traceback(one, tmp_path):
    runs, inv, d = one
    (d / "spans.jsonl").write_bytes(b"\xef\xbb\xbf{not json\n")
    (runs / "stray").write_text("")
    proc = subprocess.run([sys.executable, "-m", "groundwork.cli", "ingest", str(runs), "--warehouse",
                           str(tmp_path / "w.duckdb"), "--quiet"], capture_output=True, text=True)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert "ingest: 1 folders seen = 1 loaded + 0 unchanged + 0 rejected" in proc.stderr
    assert "ingest: 3 issues (3 new): bom 1, malformed-json 1, unexpected-entry 1" in proc.stderr
    assert proc.stdout == ""


def test_a_parser_failure_keeps_the_run_unlintable_and_the_ingest_going(one, monkeypatch):
    runs, inv, d = one

    def broken(*args, **kwargs):
        raise ZeroDivisionError("boom")
    monkeypatch.setattr(importlib.import_module("groundwork.ingest.work"), "parse_run", broken)
    con, result = ingest(runs)
    assert issues(con) == [("internal-error", inv, None, BOTH)]
    r = run_row(con, inv)
    assert (r["lintable"], r["verifiable"]) == (False, False)
    assert r["unlintable_reason"] == f"{inv}: groundwork could not parse this run (ZeroDivisionError: boom); please report it"
    assert result.runs_loaded == 1 and result.exit_code == 1


def test_far_future_times_load_and_keep_the_workbench_time_key(one):
    # beyond 2262 nanoseconds overflow a BIGINT, and the workbench's int(timestamp() * 1e9) merges
    # adjacent microseconds: both are kept so rules can order spans exactly as the workbench does
    from datetime import datetime

    runs, inv, d = one
    docs = span_lines(d)
    docs[2]["start_time"] = "2300-01-01T00:00:00.000001Z"
    docs[2]["end_time"] = "2300-01-01T00:00:00.000002Z"
    write_span_lines(d, docs)
    con, _ = check(runs, inv, [])
    got = con.execute("SELECT start_unix_nano, trunc(start_workbench_ns)::HUGEINT, trunc(end_workbench_ns)::HUGEINT, "
                      "strftime(end_time, '%Y %f') FROM spans WHERE line_no = 3").fetchall()
    python = [int(datetime.fromisoformat(docs[2][k].replace("Z", "+00:00")).timestamp() * 1e9)
              for k in ("start_time", "end_time")]
    assert python[0] == python[1]  # the workbench cannot tell them apart
    assert got == [(None, python[0], python[1], "2300 000002")]
    ordinary = con.execute("SELECT start_unix_nano, trunc(start_workbench_ns)::HUGEINT FROM spans WHERE line_no = 1").fetchall()
    assert ordinary == [(int(nanos_of(docs[0]["start_time"])), int(datetime.fromisoformat(
        docs[0]["start_time"].replace("Z", "+00:00")).timestamp() * 1e9))]


def nanos_of(iso: str) -> int:
    from datetime import datetime, timezone
    delta = datetime.fromisoformat(iso.replace("Z", "+00:00")) - datetime(1970, 1, 1, tzinfo=timezone.utc)
    return ((delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds) * 1000


def test_index_symlinked_outside_the_archive_is_not_read(tmp_path):
    runs, _ = archive(tmp_path, PASS_RETRIEVAL, index=True)
    outside = tmp_path / "elsewhere.jsonl"
    (runs / "invocations.jsonl").rename(outside)
    os.symlink(outside, runs / "invocations.jsonl")
    con, result = ingest(runs)
    assert issues(con) == [("symlink-outside", "invocations.jsonl", None, "none")]
    assert con.execute("SELECT count(*) FROM invocation_index").fetchall()[0][0] == 0
    assert result.exit_code == 1


def test_index_changes_between_ingests_are_applied_and_its_issues_kept(tmp_path):
    runs, _ = archive(tmp_path, PASS_RETRIEVAL, PASS_NONE, index=True)
    index = runs / "invocations.jsonl"
    lines = index.read_text().splitlines(keepends=True)
    index.write_text(lines[0] + "{not json\n")
    con, _ = ingest(runs)
    assert issues(con) == [("malformed-json", "invocations.jsonl", 2, "none")]
    assert con.execute("SELECT line_no FROM invocation_index").fetchall() == [(1,)]
    # unchanged: the rows and the issue stay as they are
    _, again = ingest(runs, con)
    assert issues(con) == [("malformed-json", "invocations.jsonl", 2, "none")]
    assert again.issues_by_kind == {"malformed-json": 1}
    # fixed: replaced whole, the issue is gone
    index.write_text("".join(lines))
    ingest(runs, con)
    assert issues(con) == []
    assert con.execute("SELECT count(*) FROM invocation_index").fetchall()[0][0] == len(lines)
    # removed: the index rows and its fingerprint go too
    index.unlink()
    ingest(runs, con)
    assert con.execute("SELECT count(*) FROM invocation_index").fetchall()[0][0] == 0
    assert con.execute("SELECT count(*) FROM archive_files WHERE path = 'invocations.jsonl'").fetchall()[0][0] == 0


@pytest.mark.parametrize("workers", [0, 1])
def test_a_request_input_nested_1000_deep_loses_only_its_hash(tmp_path, workers):
    """request.json is read by neither check: an input too deep for json.dumps to hash (it
    recurses) leaves input_hash NULL. It once made the run unlintable and unverifiable with an
    internal-error issue ("RecursionError ... please report it")."""
    runs, (inv,) = archive(tmp_path, PASS_RETRIEVAL)
    value: object = "x"
    for _ in range(1000):
        value = {"n": value}
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(10_000)   # for the test's own json.dumps of the file
    try:
        text = json.dumps({"input": value, "issued_at": "2026-01-01T00:00:00Z"})
    finally:
        sys.setrecursionlimit(old)
    (runs / inv / "request.json").write_text(text, encoding="utf-8")
    con, _ = ingest(runs, workers=workers)
    row = run_row(con, inv)
    assert issues(con, inv) == []
    assert (row["lintable"], row["verifiable"], row["input_hash"]) == (True, True, None)
