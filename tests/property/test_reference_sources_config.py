"""groundwork's sources.yaml loader fails with exactly the texts of the reference (docs/rules.md#sources-configuration),
which are the workbench's configuration error texts."""

from __future__ import annotations

import hashlib

import pytest

from groundwork.core.errors import ConfigError
from groundwork.checks.sources import load_sources
from reference import sources as refsrc

# ----------------------------------------- configuration errors (docs/rules.md#sources-configuration)

def _pin(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()

GOOD = b'{"id": "a", "v": 1}\n'
BAD_ID = b'{"id": 5}\n'
NOT_OBJECT = b'[1, {"id": "a"}]'
CONFIG_CASES = {
    "empty file": "",
    "top level is a list": "- a\n",
    "sources is not a list": "sources: {a: 1}\n",
    "entry is not a mapping": "sources: [x]\n",
    "entry lacks a key": "sources:\n  - {snapshot_refs: [a], path: good.jsonl, id_field: id}\n",
    "data file missing": "sources:\n  - {snapshot_refs: [a], path: nope.jsonl, id_field: id, sha256: x}\n",
    "pin mismatch": f"sources:\n  - {{snapshot_refs: [a], path: good.jsonl, id_field: id, sha256: '{'0' * 64}'}}\n",
    "record id not a string": f"sources:\n  - {{snapshot_refs: [a], path: badid.jsonl, id_field: id, sha256: {_pin(BAD_ID)}}}\n",
    "record not an object": f"sources:\n  - {{snapshot_refs: [a], path: notobj.json, id_field: id, sha256: {_pin(NOT_OBJECT)}}}\n",
    "ref listed twice": (f"sources:\n  - {{snapshot_refs: [a, b], path: good.jsonl, id_field: id, sha256: {_pin(GOOD)}}}\n"
                         f"  - {{snapshot_refs: [c, b], path: good.jsonl, id_field: id, sha256: {_pin(GOOD)}}}\n"),
    "valid": f"sources:\n  - {{snapshot_refs: [a, 5], path: good.jsonl, id_field: id, sha256: {_pin(GOOD)}}}\n",
}

@pytest.mark.parametrize("case", sorted(CONFIG_CASES))
def test_sources_config_errors_match_reference(case, tmp_path):
    """groundwork's sources.yaml loader fails with exactly the reference's texts
    (docs/rules.md#sources-configuration)."""
    (tmp_path / "good.jsonl").write_bytes(GOOD)
    (tmp_path / "badid.jsonl").write_bytes(BAD_ID)
    (tmp_path / "notobj.json").write_bytes(NOT_OBJECT)
    cfg = tmp_path / "sources.yaml"
    cfg.write_text(CONFIG_CASES[case], encoding="utf-8")
    try:
        refsrc.load_sources(cfg)
        expected = None
    except refsrc.ConfigError as exc:
        expected = str(exc)
    try:
        load_sources(cfg)
        actual = None
    except ConfigError as exc:
        actual = str(exc)
    assert actual == expected
    assert (expected is None) == (case == "valid")
