"""Memory does not follow one file's size (docs/rules.md#too-large-runs): a 2 GiB spans.jsonl
that is one line (a sparse file: no disk written) is hashed as it streams by, never held; the
line is recorded, the run kept unlintable, and the ingest's peak RSS stays within a bound
that does not depend on the file (before: ~2 bytes of RSS per byte of the file)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from ingest_support import PASS_RETRIEVAL, archive

GIB = 1 << 30
# what one ingest may add to the RSS of the process that imported groundwork: a block being
# hashed and the rows of the other lines; nothing near the file's size
BOUND_MB = 128

PROBE = """
import json, resource, sys
import duckdb
from groundwork.core.warehouse import apply_schema
from groundwork.ingest import ingest_archive
con = duckdb.connect(":memory:")
apply_schema(con, comments=False)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
ingest_archive(con, sys.argv[1], workers=0)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
rows = con.execute("SELECT path, line, kind, effect, message FROM ingest_issues").fetchall()
lintable = con.execute("SELECT lintable, span_count FROM runs").fetchall()
print(json.dumps({"added_mb": (peak - before) / 1024, "issues": rows, "runs": lintable}))
"""


def test_a_2_gib_line_is_recorded_and_skipped_in_bounded_memory(tmp_path):
    runs, (inv,) = archive(tmp_path, PASS_RETRIEVAL)
    spans = runs / inv / "spans.jsonl"
    before = spans.read_bytes()
    assert before.endswith(b"\n")
    lines = before.count(b"\n")
    with open(spans, "ab") as fh:
        fh.write(b'{"name": "x", "attributes": {"dd.note": "')
        fh.truncate(2 * GIB)  # the rest of the line: zeros, not written to disk
    out = subprocess.run([sys.executable, "-c", PROBE, str(runs)], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "GROUNDWORK_INGEST_WORKERS": "0"})
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["added_mb"] < BOUND_MB, got["added_mb"]
    (path, line, kind, effect, message), = got["issues"]
    assert (path, line, kind, effect) == (f"{inv}/spans.jsonl", lines + 1, "line-too-long", "unlintable")
    assert message.startswith(f"line is {2 * GIB - len(before):,} bytes, over the 16 MiB")
    assert got["runs"] == [[False, lines]]  # the other lines loaded
