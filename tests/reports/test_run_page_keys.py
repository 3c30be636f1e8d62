"""A run page is written again whenever what it shows changes, not only when the run's own files
do: GW3 prints the hash of the delegated child's envelope, so a child edited twice changes its
parent's page twice. (Found by an outside-in run: after the second edit, the parent's page still
showed the first edit's hash while violations.jsonl showed the second's, and a nightly from
scratch showed the second's.)"""

from __future__ import annotations

import html
import json
import os
import re
import shutil

from groundwork.core.escape import slug
from groundwork.jobs.nightly import run_nightly
from ingest_support import EXAMPLE

PARENT = "01a22a33-c7f5-7265-be07-2fbbc9e443a2"   # delegates to CHILD, which is in the example archive
CHILD = "01a22a33-c801-72fb-8c19-80d6c5812263"


def _edit_child(runs, version: str) -> None:
    """The child's envelope.json replaced by one with another agent_version (another hash)."""
    path = runs / CHILD / "envelope.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["agent_version"] = version
    tmp = path.with_name("envelope.json.new")
    tmp.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    os.replace(tmp, path)


def _gw3(text: str) -> list[str]:
    return re.findall(r"GW3: [^<\n\"]*", text)


def test_a_parent_page_shows_the_gw3_message_of_its_child_as_it_is_now(tmp_path):
    shutil.copytree(EXAMPLE, tmp_path / "archive")
    runs, wh, out = tmp_path / "archive" / "runs", tmp_path / "warehouse.duckdb", tmp_path / "out"
    run_nightly(runs, out=out, warehouse=wh)
    assert not (out / "runs" / slug(PARENT) / "index.html").exists()   # passes: no page yet
    shown = []
    for version in ("9.9.1", "9.9.2"):
        _edit_child(runs, version)
        run_nightly(runs, out=out, warehouse=wh, full_scan=True)   # a full scan sees the edit in place
        listed = [json.loads(line)["message"] for line in (out / "violations.jsonl").read_text(encoding="utf-8").splitlines()
                  if json.loads(line)["invocation_id"] == PARENT and json.loads(line)["code"] == "GW3"]
        page = html.unescape((out / "runs" / slug(PARENT) / "index.html").read_text(encoding="utf-8"))
        assert len(listed) == 1
        assert _gw3(page) == listed, version
        shown.append(listed[0])
    assert shown[0] != shown[1]   # the two edits hash differently: the page changed with the child
