"""A source copy read a block at a time (groundwork.checks.sources: the pin, then UTF-8, checked
in one pass through the file, then a JSON Lines copy parsed a line at a time, never held whole)
gives what the reference's whole-file reading gives (tests/reference/sources.py, written from
docs/rules.md#source-copies alone): the same records, the same error where the workbench fails.

Blocks of a few bytes put every block boundary inside lines, separators and UTF-8 sequences."""

from __future__ import annotations

import hashlib
import json
import tempfile
from pathlib import Path
from unittest import mock

from hypothesis import given, settings, strategies as st

from groundwork.checks import sources as sources_mod
from groundwork.core.errors import ConfigError
from reference import sources as refsrc

LINES = [b'{"source_id": "a", "t": 1}', b'{"source_id": "b", "t": "\xc3\xa9"}', b'{"source_id": "a", "t": 2}',
         b'', b'   ', b'{"id": "c"}', b'{bad', b'["a"]', b'{"source_id": "\xe2\x82\xac"}', b'\xff{"source_id": "d"}',
         b'{"source_id": "e\xe2\x82"}', b'{"source_id": "f", "n": 12345678901234567890}']
SEPARATORS = [b"\n", b"\r\n", b"\r", "\u2028".encode(), "\x85".encode(), b"\x0b", b"\x1e"]


def _reference(cfg: Path):
    try:
        copies = refsrc.load_sources(cfg)
    except refsrc.ConfigError as exc:
        return "config", str(exc)
    except json.JSONDecodeError as exc:
        return "json", str(exc)
    except UnicodeDecodeError as exc:
        return "utf-8", str(exc)
    copy = copies.by_ref["r"]
    return "records", {rid: json.dumps(rec, sort_keys=True) for rid, rec in copy.records.items()}


def _groundwork(cfg: Path, file: Path):
    try:
        _, [copy] = sources_mod.load_sources(cfg)
    except ConfigError as exc:
        text = str(exc)
        for kind, prefix in (("json", f"source file {file}: not valid JSON: "), ("utf-8", f"source file {file}: not UTF-8: ")):
            if text.startswith(prefix):
                return kind, text[len(prefix):]
        if text.startswith(f"source file {file}: line "):   # "line N: not valid JSON: <json's message>"
            return "json", text.split(": not valid JSON: ", 1)[1]
        return "config", text
    return "records", {rid: json.dumps(json.loads(r.record_json), sort_keys=True) for rid, r in copy.records.items()}


@settings(max_examples=300, deadline=None)
@given(parts=st.lists(st.tuples(st.sampled_from(LINES), st.sampled_from(SEPARATORS)), max_size=8),
       lead=st.sampled_from([b"", b" ", b"\n", b"\t "]), tail=st.booleans(), block=st.integers(1, 9))
def test_a_copy_read_a_block_at_a_time_is_the_whole_files(parts, lead, tail, block):
    data = lead + b"".join(line + sep for line, sep in parts)
    if parts and not tail:
        data = data[:-len(parts[-1][1])]   # no separator after the last line
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        file = folder / "c.jsonl"
        file.write_bytes(data)
        cfg = folder / "sources.yaml"
        cfg.write_text("sources:\n  - {snapshot_refs: [r], path: c.jsonl, id_field: source_id, "
                       f"sha256: {hashlib.sha256(data).hexdigest()}}}\n", encoding="utf-8")
        with mock.patch.object(sources_mod, "BLOCK", block):
            got = _groundwork(cfg, file)
        assert got == _reference(cfg), data
