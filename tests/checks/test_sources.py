"""sources.yaml and pinned source copies (docs/rules.md#sources-configuration, docs/rules.md#source-copies): loading, pins, configuration errors.

Configuration errors are checked through the real CLI entry point: one line on stderr naming
the file, exit code 2, no traceback.
"""

from __future__ import annotations

import hashlib
import json
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from groundwork.core.errors import ConfigError
from groundwork.checks import sources as sources_mod
from groundwork.checks.sources import load_copy, load_into_warehouse, load_sources, make_entry, split_lines
from groundwork.core.warehouse import connect
from cli_support import run_cli

RECORD_A = {"source_id": "src:a", "text": "Alpha."}
# the test vectors of docs/rules.md#test-vectors
HASH_A = "d23eb297bcac927f3ba353e9449abae1f593a18a9a64c8cd59c86838f91bd36f"
FS_RECORD = {"fairsharing_id": "FAIRsharing.b44s4", "name": "ISO 8601", "subjects": ["b", "a"]}
FS_HASH = "e5c8f3c01ebf87d9af8f789e68ffb40c39343d398d877589f0c1c3836e79d36a"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write_config(folder: Path, entries: list[dict] | str, name: str = "sources.yaml") -> Path:
    path = folder / name
    if isinstance(entries, str):
        path.write_text(entries, encoding="utf-8")
    else:
        path.write_text(json.dumps({"sources": entries}), encoding="utf-8")  # JSON is YAML
    return path


def data_file(folder: Path, name: str, data: bytes) -> dict:
    (folder / name).write_bytes(data)
    return {"path": name, "sha256": sha(data)}


def jsonl(*records) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()



@pytest.fixture()
def warehouse(tmp_path) -> str:
    path = tmp_path / "w.duckdb"
    connect(path).close()
    return str(path)


# ------------------------------------------------------------------------------------------
# Loading
# ------------------------------------------------------------------------------------------

def test_records_are_hashed_under_each_canonicalisation(tmp_path):
    entry = data_file(tmp_path, "r.jsonl", jsonl(RECORD_A))
    fs = data_file(tmp_path, "fs.json", json.dumps([FS_RECORD]).encode())
    cfg = write_config(tmp_path, [{"snapshot_refs": ["test:records"], "id_field": "source_id", **entry},
                                  {"snapshot_refs": ["fs"], "id_field": "fairsharing_id", **fs}])
    con = connect(":memory:")
    load_into_warehouse(con, cfg)
    rows = dict(con.execute("SELECT record_id, hash_identity FROM source_records").fetchall())
    assert rows["src:a"] == HASH_A
    fs_hash = con.execute("SELECT hash_fairsharing FROM source_records WHERE record_id = 'FAIRsharing.b44s4'").fetchone()[0]
    assert fs_hash == FS_HASH
    refs = con.execute("SELECT snapshot_ref, id_field FROM source_refs ORDER BY entry_index").fetchall()
    assert refs == [("test:records", "source_id"), ("fs", "fairsharing_id")]


def test_paths_are_relative_to_the_config_file(tmp_path, monkeypatch):
    sub = tmp_path / "conf"
    (sub / "data").mkdir(parents=True)
    entry = data_file(sub / "data", "r.jsonl", jsonl(RECORD_A))
    entry["path"] = "data/r.jsonl"
    cfg = write_config(sub, [{"snapshot_refs": ["test:records"], "id_field": "source_id", **entry}])
    monkeypatch.chdir(tmp_path)
    _, copies = load_sources(Path("conf") / "sources.yaml")
    assert copies[0].records["src:a"].hash_identity == HASH_A
    assert cfg.exists()


def test_json_array_after_leading_whitespace_and_later_duplicate_wins(tmp_path):
    first = {"source_id": "src:a", "text": "old"}
    entry = data_file(tmp_path, "r.json", b"  \n\t" + json.dumps([first, RECORD_A]).encode())
    cfg = write_config(tmp_path, [{"snapshot_refs": ["r"], "id_field": "source_id", **entry}])
    _, [copy] = load_sources(cfg)
    assert copy.format == "json-array"
    assert copy.records_read == 2 and list(copy.records) == ["src:a"]
    assert copy.records["src:a"].hash_identity == HASH_A


def test_jsonl_skips_blank_lines_and_keeps_int_float_distinction(tmp_path):
    data = b'\n{"source_id": "x", "n": 1.0}\n   \r\n{"source_id": "y", "n": 1}\n'
    entry = data_file(tmp_path, "r.jsonl", data)
    cfg = write_config(tmp_path, [{"snapshot_refs": ["r"], "id_field": "source_id", **entry}])
    _, [copy] = load_sources(cfg)
    assert copy.format == "jsonl"
    assert copy.records["x"].record_json == '{"n":1.0,"source_id":"x"}'
    assert copy.records["y"].record_json == '{"n":1,"source_id":"y"}'
    assert copy.records["x"].hash_identity == sha(b'{"n":1.0,"source_id":"x"}')


def test_loading_the_same_pinned_bytes_twice_is_a_no_op(tmp_path):
    entry = data_file(tmp_path, "r.jsonl", jsonl(RECORD_A, {"source_id": "src:b", "text": "Beta."}))
    cfg = write_config(tmp_path, [{"snapshot_refs": ["a", "a (stale)"], "id_field": "source_id", **entry}])
    con = connect(":memory:")
    first = load_into_warehouse(con, cfg)
    second = load_into_warehouse(con, cfg)
    assert first.copies_loaded and not first.copies_skipped
    assert second.copies_skipped == first.copies_loaded and not second.copies_loaded
    assert second.config_id == first.config_id
    assert con.execute("SELECT count(*) FROM source_records").fetchone()[0] == 2
    assert con.execute("SELECT count(*) FROM source_refs").fetchone()[0] == 2
    assert con.execute("SELECT count(*) FROM source_copies").fetchone()[0] == 1


def test_a_file_changed_after_loading_is_refused(tmp_path):
    entry = data_file(tmp_path, "r.jsonl", jsonl(RECORD_A))
    cfg = write_config(tmp_path, [{"snapshot_refs": ["a"], "id_field": "source_id", **entry}])
    con = connect(":memory:")
    load_into_warehouse(con, cfg)
    (tmp_path / "r.jsonl").write_bytes(jsonl({"source_id": "src:a", "text": "Forged."}))
    with pytest.raises(ConfigError, match="not the pinned"):
        load_into_warehouse(con, cfg)


def test_a_trusted_copy_is_read_again_only_once_its_file_changed(tmp_path, monkeypatch):
    """pinned_files="trust" (the nightly): the file of a loaded copy, as source_files recorded it
    when its bytes matched the pin (size, inode, device, mtime, ctime), is not read again; a file
    rewritten, even to the same size with its mtime set back, is read and refused."""
    import os
    import time
    from groundwork.checks import sources as sources_mod

    entry = data_file(tmp_path, "r.jsonl", jsonl(RECORD_A))
    cfg = write_config(tmp_path, [{"snapshot_refs": ["a"], "id_field": "source_id", **entry}])
    read = []
    for name in ("read_through", "check_pin"):   # every read of a data file: its pin checked
        real = getattr(sources_mod, name)
        monkeypatch.setattr(sources_mod, name, lambda e, real=real: read.append(e.path) or real(e))
    con = connect(":memory:")
    load_into_warehouse(con, cfg)                                # read, not recorded
    load_into_warehouse(con, cfg, pinned_files="trust")          # just written: read, not recorded
    assert con.execute("SELECT count(*) FROM source_files").fetchall() == [(0,)] and len(read) == 2
    monkeypatch.setattr(sources_mod, "SETTLE_NS", 0)             # as if written long ago
    read.clear()
    load_into_warehouse(con, cfg, pinned_files="trust")          # nothing recorded yet: read
    load_into_warehouse(con, cfg, pinned_files="trust")          # as recorded: not read
    assert read == ["r.jsonl"]
    assert con.execute("SELECT file, size, sha256 FROM source_files").fetchall() == [
        (str((tmp_path / "r.jsonl").resolve()), len(jsonl(RECORD_A)), entry["sha256"])]
    load_into_warehouse(con, cfg, pinned_files="record")         # a full scan reads every file
    assert read == ["r.jsonl"] * 2
    before = os.stat(tmp_path / "r.jsonl")
    time.sleep(0.05)   # past the file system's clock tick
    forged = jsonl({"source_id": "src:a", "text": "Alpha!"})
    assert len(forged) == before.st_size
    (tmp_path / "r.jsonl").write_bytes(forged)
    os.utime(tmp_path / "r.jsonl", ns=(before.st_atime_ns, before.st_mtime_ns))
    with pytest.raises(ConfigError, match="not the pinned"):
        load_into_warehouse(con, cfg, pinned_files="trust")
    # A copy not loaded yet is always read (its records are parsed from the bytes read).
    other = connect(":memory:")
    (tmp_path / "r.jsonl").write_bytes(jsonl(RECORD_A))
    load_into_warehouse(other, cfg, pinned_files="trust")
    assert other.execute("SELECT count(*) FROM source_records").fetchall() == [(1,)]


def test_nothing_is_written_when_a_later_entry_fails(tmp_path):
    good = data_file(tmp_path, "r.jsonl", jsonl(RECORD_A))
    cfg = write_config(tmp_path, [{"snapshot_refs": ["a"], "id_field": "source_id", **good},
                                  {"snapshot_refs": ["b"], "id_field": "source_id", "path": "r.jsonl",
                                   "sha256": "0" * 64}])
    con = connect(":memory:")
    with pytest.raises(ConfigError):
        load_into_warehouse(con, cfg)
    assert con.execute("SELECT count(*) FROM source_records").fetchone()[0] == 0
    assert con.execute("SELECT count(*) FROM source_configs").fetchone()[0] == 0


# ------------------------------------------------------------------------------------------
# Configuration errors through the CLI: exact one-line message, exit 2, no traceback
# ------------------------------------------------------------------------------------------

def assert_config_error(monkeypatch, capsys, cfg: Path, warehouse: str, expected: str) -> None:
    code, out, err = run_cli(monkeypatch, capsys, "verify", "--sources", str(cfg), "--warehouse", warehouse)
    assert code == 2
    assert out == ""
    assert err == f"groundwork: error: {expected}\n"
    assert "Traceback" not in err


def test_error_config_unreadable(tmp_path, monkeypatch, capsys, warehouse):
    cfg = tmp_path / "missing.yaml"
    assert_config_error(monkeypatch, capsys, cfg, warehouse,
                        f"cannot read {cfg}: [Errno 2] No such file or directory: '{cfg}'")


def test_error_config_not_yaml_is_one_line(tmp_path, monkeypatch, capsys, warehouse):
    cfg = write_config(tmp_path, "sources: [unclosed\n  - x: {\n")
    code, out, err = run_cli(monkeypatch, capsys, "verify", "--sources", str(cfg), "--warehouse", warehouse)
    assert code == 2 and out == ""
    assert err.startswith(f"groundwork: error: cannot read {cfg}: ")
    assert err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize("text", ["", "sources: {}\n", "- sources\n", "other: []\n", "sources:\n"])
def test_error_no_sources_list(tmp_path, monkeypatch, capsys, warehouse, text):
    cfg = write_config(tmp_path, text)
    assert_config_error(monkeypatch, capsys, cfg, warehouse, f"{cfg}: expected a top-level 'sources' list")


@pytest.mark.parametrize("entry", [
    {"snapshot_refs": ["a"], "path": "r.jsonl", "id_field": "source_id"},
    {"path": "r.jsonl", "id_field": "source_id", "sha256": "0" * 64},
    "r.jsonl",
    None,
])
def test_error_entry_lacks_a_key(tmp_path, monkeypatch, capsys, warehouse, entry):
    cfg = write_config(tmp_path, [entry])
    assert_config_error(monkeypatch, capsys, cfg, warehouse,
                        f"{cfg}: each source needs snapshot_refs, path, id_field and sha256")


def test_error_data_file_unreadable(tmp_path, monkeypatch, capsys, warehouse):
    cfg = write_config(tmp_path, [{"snapshot_refs": ["a"], "path": "gone.jsonl", "id_field": "source_id",
                                   "sha256": "0" * 64}])
    file = tmp_path / "gone.jsonl"
    assert_config_error(monkeypatch, capsys, cfg, warehouse,
                        f"source file {file}: [Errno 2] No such file or directory: '{file}'")


def test_error_pin_mismatch(tmp_path, monkeypatch, capsys, warehouse):
    data = jsonl(RECORD_A)
    (tmp_path / "r.jsonl").write_bytes(data)
    cfg = write_config(tmp_path, [{"snapshot_refs": ["a"], "path": "r.jsonl", "id_field": "source_id",
                                   "sha256": "0" * 64}])
    assert_config_error(monkeypatch, capsys, cfg, warehouse,
                        f"source file {tmp_path / 'r.jsonl'} has sha256 {sha(data)}, not the pinned {'0' * 64}")


@pytest.mark.parametrize("records", [
    [{"id": "src:a"}],                       # no id_field
    [RECORD_A, {"source_id": 7}],            # id not a string
    [RECORD_A, ["src:b"]],                   # record not an object
    [{"source_id": None}],
])
def test_error_record_without_string_id(tmp_path, monkeypatch, capsys, warehouse, records):
    entry = data_file(tmp_path, "r.jsonl", jsonl(*records))
    cfg = write_config(tmp_path, [{"snapshot_refs": ["a"], "id_field": "source_id", **entry}])
    assert_config_error(monkeypatch, capsys, cfg, warehouse,
                        f"source file {tmp_path / 'r.jsonl'}: a record has no string 'source_id'")


def test_error_snapshot_ref_listed_twice(tmp_path, monkeypatch, capsys, warehouse):
    entry = data_file(tmp_path, "r.jsonl", jsonl(RECORD_A))
    cfg = write_config(tmp_path, [{"snapshot_refs": ["a", "b"], "id_field": "source_id", **entry},
                                  {"snapshot_refs": ["c", "b"], "id_field": "source_id", **entry}])
    assert_config_error(monkeypatch, capsys, cfg, warehouse, f"{cfg}: snapshot_ref 'b' is listed twice")


def test_error_snapshot_refs_compared_as_strings(tmp_path, monkeypatch, capsys, warehouse):
    entry = data_file(tmp_path, "r.jsonl", jsonl(RECORD_A))
    cfg = write_config(tmp_path, "sources:\n"
                       f"  - {{snapshot_refs: [1], path: r.jsonl, id_field: source_id, sha256: {entry['sha256']}}}\n"
                       f"  - {{snapshot_refs: ['1'], path: r.jsonl, id_field: source_id, sha256: {entry['sha256']}}}\n")
    assert_config_error(monkeypatch, capsys, cfg, warehouse, f"{cfg}: snapshot_ref '1' is listed twice")


@pytest.mark.parametrize("data, fragment", [
    (b'{"source_id": "src:a"\n', ": line 1: not valid JSON: "),
    (b'\xef\xbb\xbf{"source_id": "src:a"}\n', ": line 1: not valid JSON: "),   # a BOM is not stripped
    (b'[{"source_id": "src:a"},]', ": not valid JSON: "),
    (b'{"source_id": "caf\xe9"}\n', ": not UTF-8: "),
])
def test_error_data_file_not_json(tmp_path, monkeypatch, capsys, warehouse, data, fragment):
    entry = data_file(tmp_path, "r.jsonl", data)
    cfg = write_config(tmp_path, [{"snapshot_refs": ["a"], "id_field": "source_id", **entry}])
    code, out, err = run_cli(monkeypatch, capsys, "verify", "--sources", str(cfg), "--warehouse", warehouse)
    assert code == 2 and out == ""
    assert err.startswith(f"groundwork: error: source file {tmp_path / 'r.jsonl'}{fragment}")
    assert err.count("\n") == 1 and "Traceback" not in err


def test_a_record_id_with_a_lone_surrogate_loads(tmp_path):
    data = b'{"source_id": "x\\ud800", "text": "lone"}\n{"source_id": "y", "text": "\\udc00"}\n'
    entry = data_file(tmp_path, "r.jsonl", data)
    cfg = write_config(tmp_path, [{"snapshot_refs": ["r"], "id_field": "source_id", **entry}])
    con = connect(":memory:")
    load_into_warehouse(con, cfg)
    rows = dict(con.execute("SELECT record_id, hash_identity_error FROM source_records").fetchall())
    assert set(rows) == {"x\ufffd", "y"}
    assert "surrogates not allowed" in rows["y"]  # the record cannot be hashed: S2 shows this error


def test_a_sources_yaml_nested_too_deep_for_the_yaml_parser_is_one_clear_error(tmp_path):
    """PyYAML's parser recurses: a value a few hundred levels deep exhausts the stack (the
    workbench's load as well). Once "internal error: RecursionError"; now a ConfigError (exit 2,
    one line) naming the file."""
    cfg = tmp_path / "sources.yaml"
    cfg.write_text("sources:\n- snapshot_refs: " + "[" * 2000 + "]" * 2000 + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=f"cannot read {cfg}: YAML nested too deeply to parse"):
        load_sources(cfg)


def test_snapshot_refs_that_are_mappings_with_any_keys_are_their_str(tmp_path):
    # docs/rules.md#sources-configuration: each ref is used as str() of it, whatever it is; a YAML
    # mapping's keys may be numbers, null, booleans or dates, which str() prints as Python does
    entry = data_file(tmp_path, "r.jsonl", jsonl(RECORD_A))
    cfg = write_config(tmp_path, "sources:\n"
                       "  - snapshot_refs: ['snap:a', {1: a}, {null: y}, {true: [2.5, {2026-01-01: b}]}]\n"
                       f"    path: r.jsonl\n    id_field: source_id\n    sha256: {entry['sha256']}\n")
    config, _ = load_sources(cfg)
    assert config.entries[0].snapshot_refs == (
        "snap:a", "{1: 'a'}", "{None: 'y'}", "{True: [2.5, {datetime.date(2026, 1, 1): 'b'}]}")


def test_a_json_error_anywhere_wins_over_an_earlier_record_without_id(tmp_path, monkeypatch, capsys, warehouse):
    # The workbench parses every line before it looks at a record (docs/rules.md#source-copies).
    entry = data_file(tmp_path, "r.jsonl", b'{"id": "src:a"}\n{"source_id": "src:b"}\n{"source_id": \n')
    cfg = write_config(tmp_path, [{"snapshot_refs": ["a"], "id_field": "source_id", **entry}])
    code, out, err = run_cli(monkeypatch, capsys, "verify", "--sources", str(cfg), "--warehouse", warehouse)
    assert (code, out) == (2, "")
    assert err.startswith(f"groundwork: error: source file {tmp_path / 'r.jsonl'}: line 3: not valid JSON: ")


@given(st.text(alphabet=st.sampled_from(["a", " ", "\r", "\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f",
                                         "\x85", "\u2028", "\u2029", "\u2027", "é"])))
def test_a_copy_is_split_into_lines_as_splitlines_does(text):
    assert list(split_lines(text)) == text.splitlines()


def _large_copy(folder: Path) -> tuple[bytes, dict]:
    lines = [json.dumps({"source_id": f"src:{i % 19000}", "name": f"Record {i}", "tags": ["a", "b", str(i)],
                         "meta": {"n": i, "x": 1.5, "description": "lorem ipsum " * 8}}) for i in range(20000)]
    data = ("\n".join(lines) + "\n").encode()
    return data, data_file(folder, "c.jsonl", data)


def test_a_jsonl_copy_is_indexed_without_holding_every_parsed_record(tmp_path):
    """A JSON Lines copy is parsed one line at a time: while it loads, Python holds its text and
    the records' index (their compact JSON and hashes), not every parsed value too (that was
    7.5 times the file's size)."""
    data, file = _large_copy(tmp_path)
    entry = make_entry(tmp_path / "sources.yaml", 0, {"snapshot_refs": ["r"], "id_field": "source_id", **file})
    tracemalloc.start()
    try:
        copy = load_copy(entry)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(copy.records) == 19000 and copy.records_read == 20000
    assert copy.records["src:5"].ord == 19005   # the later record of an id wins
    assert peak < 6 * len(data), peak / len(data)


def test_loading_a_copy_into_the_warehouse_holds_no_index_of_its_records(tmp_path, monkeypatch):
    """Into the warehouse, a JSON Lines copy goes a block, and its records a batch, at a time (the
    later of two records with one id kept there): Python does not hold the copy (its bytes and
    text were 2.2 times its size, its index of records 3 times, every parsed value 7.5 times)."""
    monkeypatch.setattr(sources_mod, "RECORD_BATCH", 1000)   # a batch, and a block read,
    monkeypatch.setattr(sources_mod, "BLOCK", 2**16)         # are small parts of a large copy
    data, file = _large_copy(tmp_path)
    cfg = write_config(tmp_path, [{"snapshot_refs": ["r"], "id_field": "source_id", **file}])
    warm = connect(tmp_path / "warm.duckdb")   # the modules a first load imports (pyarrow's, ~25 MB) are not the copy's
    try:
        load_into_warehouse(warm, cfg)
    finally:
        warm.close()
    con = connect(tmp_path / "w.duckdb")
    try:
        tracemalloc.start()
        try:
            load_into_warehouse(con, cfg)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert con.execute("SELECT records_read, record_count FROM source_copies").fetchall() == [(20000, 19000)]
        rows = con.execute("SELECT count(*), count(DISTINCT record_id), max(ord) FILTER (WHERE record_id = 'src:5') "
                           "FROM source_records").fetchall()
        assert rows == [(19000, 19000, 19005)]
    finally:
        con.close()
    assert peak < 0.5 * len(data), peak / len(data)   # a block, its lines, a batch of records: not the copy
