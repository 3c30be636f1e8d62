"""groundwork.ingest.scan.list_and_read (one pass: open the run folder once, read its regular files relative
to it) gives exactly what list_run followed by read_files gives -- the unchanged two-step path,
used here as the oracle -- for every run folder of the corpus, the example archive, a synthetic
archive and hostile folders, and leaves no file descriptor open."""

from __future__ import annotations

import os
import shutil
import socket
from pathlib import Path

import pytest

from groundwork.ingest import scan
from groundwork.ingest.scan import list_and_read, list_run, read_files

from ingest_support import CORPUS_RUNS, EXAMPLE_RUNS, synthetic_runs

ARCHIVES = [CORPUS_RUNS, EXAMPLE_RUNS]


def oracle(root: str, root_real: str, name: str) -> scan.RunListing:
    listing = list_run(root, root_real, name)
    if listing.reject is None:
        read_files(root, listing)
    return listing


def fields(listing: scan.RunListing):
    """Every field, files in their order (dict equality would ignore it)."""
    return (listing.name, [(rel, f.rel, f.size, f.mtime_ns, f.data, f.sha256, f.error, f.listed_size)
                           for rel, f in listing.files.items()], listing.problems, listing.reject)


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def agree(runs: Path, names, links=()) -> None:
    root = str(runs)
    root_real = os.path.realpath(root)
    before = open_fds()
    for name in names:
        want = fields(oracle(root, root_real, name))
        assert fields(list_and_read(root, root_real, name)) == want, name
        if name not in links:
            assert fields(list_and_read(root, root_real, name, False)) == want, name
    assert open_fds() == before


@pytest.fixture(scope="module")
def synth_runs(tmp_path_factory):
    return synthetic_runs(tmp_path_factory.mktemp("scan"), 60, seed=5)


@pytest.mark.parametrize("runs", ARCHIVES, ids=["corpus", "example"])
def test_archive_folders_agree(runs):
    names = sorted(p.name for p in runs.iterdir() if p.is_dir() and p.name != "schemas")
    assert len(names) >= 50
    agree(runs, names)


def test_synthetic_folders_agree(synth_runs):
    names = sorted(p.name for p in synth_runs.iterdir() if p.is_dir() and p.name != "schemas")
    assert len(names) >= 50
    agree(synth_runs, names)


@pytest.fixture
def hostile(tmp_path):
    """An archive whose folders hold every kind of entry list_run has an answer for."""
    runs = tmp_path / "runs"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.json").write_text("{}")
    runs.mkdir()
    plain = runs / "plain"
    plain.mkdir()
    (plain / "spans.jsonl").write_bytes(b'{"a": 1}\n' * 50)
    (plain / "envelope.json").write_bytes(b"{}")
    (plain / "empty.txt").write_bytes(b"")
    (plain / "B-upper").write_bytes(b"sorted before lower case")

    h = runs / "hostile"
    h.mkdir()
    (h / "spans.jsonl").write_bytes(b"x" * 10000)
    (h / "empty").write_bytes(b"")
    os.symlink(plain / "envelope.json", h / "envelope.json")        # symlink inside the archive
    os.symlink(outside / "secret.json", h / "request.json")        # symlink leading outside
    os.symlink(runs / "no-such-file", h / "dangling")               # dangling, inside
    os.symlink(plain, h / "dir-link")                               # symlinked folder
    os.mkfifo(h / "fifo")                                           # never opened (would block)
    (h / "crate").mkdir()
    (h / "crate" / "a.txt").write_bytes(b"nested")
    (h / "crate" / "inner").mkdir()
    (h / "crate" / "inner" / "b.txt").write_bytes(b"deeper")
    (h / "crate.txt").write_bytes(b"sorts after crate/ in paths, before it as a name")
    (h / "é-utf8.txt").write_bytes(b"a UTF-8 name")
    with open(os.fsencode(h) + b"/bad-\xff-name", "wb") as fh:       # not UTF-8
        fh.write(b"never read")
    deep = h / "deep"
    for i in range(scan.MAX_DEPTH + 2):
        deep = deep / f"d{i}"
    deep.mkdir(parents=True)
    (deep / "f").write_bytes(b"too deep")
    try:
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(h / "sock"))                                  # a socket (when the path fits)
        sock.close()
    except OSError:
        pass
    if os.geteuid() != 0:                                           # root reads whatever the mode
        (h / "unreadable").write_bytes(b"no")
        os.chmod(h / "unreadable", 0)
        (h / "closed-dir").mkdir()
        os.chmod(h / "closed-dir", 0)
        (runs / "closed-run").mkdir()
        (runs / "closed-run" / "spans.jsonl").write_bytes(b"")
        os.chmod(runs / "closed-run", 0)

    (runs / "fifo-only").mkdir()
    os.mkfifo(runs / "fifo-only" / "spans.jsonl")
    (runs / "empty-run").mkdir()
    (runs / "utf8-only").mkdir()
    (runs / "utf8-only" / "naïve.json").write_bytes(b"{}")
    (runs / "a-file").write_bytes(b"not a folder")
    os.symlink(plain, runs / "link-inside")
    os.symlink(outside, runs / "link-outside")
    yield runs
    for p in (h / "unreadable", h / "closed-dir", runs / "closed-run"):
        if p.exists():
            os.chmod(p, 0o755)
    shutil.rmtree(tmp_path, ignore_errors=True)


def test_hostile_folders_agree(hostile):
    names = sorted(os.listdir(hostile)) + ["vanished"]  # a run folder gone since the archive listing
    agree(hostile, names, links={"link-inside", "link-outside"})
    got = list_and_read(str(hostile), str(hostile), "hostile")
    # what the oracle must contain for this test to mean anything
    assert got.files["spans.jsonl"].data == b"x" * 10000
    assert got.files["envelope.json"].data == b"{}"
    assert got.files["request.json"].error[0] == "symlink-outside"
    assert got.files["fifo"].error == ("unreadable", "not a regular file; not read")
    assert got.files["crate/inner/b.txt"].data == b"deeper"
    assert got.files["é-utf8.txt"].data == b"a UTF-8 name"
    closed = [("closed-dir", "unreadable")] if os.geteuid() != 0 else []
    assert [p[:2] for p in got.problems] == [("bad-\\xff-name", "bad-name"), *closed, ("deep/d0/d1/d2/d3/d4/d5/d6/d7", "unexpected-entry"),
                                             ("dir-link", "unexpected-entry")]
    if os.geteuid() != 0:
        assert got.files["unreadable"].error == ("unreadable", "cannot read: Permission denied")
        assert list_and_read(str(hostile), str(hostile), "closed-run").reject[0] == "unreadable"
    assert list_and_read(str(hostile), str(hostile), "link-outside").reject[0] == "symlink-outside"
    assert list_and_read(str(hostile), str(hostile), "vanished").reject[0] == "unreadable"
    assert list(list_and_read(str(hostile), str(hostile), "plain").files) == [
        "B-upper", "empty.txt", "envelope.json", "spans.jsonl"]


def test_classify_root_tells_every_kind_of_root_entry(tmp_path):
    """classify_root's kinds, written out by hand: plain folders (ASCII or not) are runs, a
    symlinked folder a run-link, schemas/ and invocations.jsonl themselves, a folder whose name
    is not UTF-8 a bad-name, a dangling symlink a broken-link, anything else unexpected."""
    root = tmp_path / "runs"
    root.mkdir()
    for name in ("01-plain", "02-caf\u00e9", "schemas", "target"):
        (root / name).mkdir()
    os.mkdir(os.path.join(os.fsencode(root), b"bad-\xff"))
    (root / "invocations.jsonl").write_text("")
    (root / "notes.txt").write_text("x")
    (root / "03-link").symlink_to(root / "target")
    (root / "04-dangling").symlink_to(root / "nowhere")
    (root / "05-file-link").symlink_to(root / "notes.txt")
    got = sorted(scan.classify_root(str(root)), key=lambda e: e[1])
    assert got == sorted([
        ("run", "01-plain"), ("run", "02-caf\u00e9"), ("schemas", "schemas"), ("run", "target"),
        ("bad-name", "bad-\udcff"), ("index", "invocations.jsonl"), ("unexpected", "notes.txt"),
        ("run-link", "03-link"), ("broken-link", "04-dangling"), ("unexpected", "05-file-link"),
    ], key=lambda e: e[1])
