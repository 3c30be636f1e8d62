"""Speed of the source check: N evidence items against a pinned copy of N records (default 100,000).

    .venv/bin/python -m tests.bench_source_check [N] [ITEMS_PER_RUN]

Not a test (pytest does not collect it). Builds a JSONL copy of N records and a warehouse with
N / ITEMS_PER_RUN runs of ITEMS_PER_RUN evidence items each (rows multiplied with INSERT …
SELECT from the loaded copy, so every item cites a real record under its hash; 1 % are altered
to give S2, 1 % cite missing records (S1), 1 % have no copy (unresolved)), then times:

- loading the copy (parse + hash every record; done once per pinned file),
- ``verify_warehouse`` over every run (rules, texts, history), with the copy already loaded.
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
import time
from pathlib import Path

from groundwork.checks.sources import load_into_warehouse
from groundwork.checks.verify import verify_warehouse
from groundwork.core.warehouse import connect


def build(tmp: Path, n: int) -> Path:
    lines = [json.dumps({"source_id": f"src:{i:07d}", "text": f"Record number {i}.", "year": 2000 + i % 25,
                         "score": (i % 100) / 10, "tags": ["a", "b", str(i % 7)]}) for i in range(n)]
    data = ("\n".join(lines) + "\n").encode()
    (tmp / "copy.jsonl").write_bytes(data)
    cfg = tmp / "sources.yaml"
    cfg.write_text(f"sources:\n  - snapshot_refs: ['bench:v1']\n    path: copy.jsonl\n    id_field: source_id\n"
                   f"    sha256: {hashlib.sha256(data).hexdigest()}\n", encoding="utf-8")
    return cfg


def main(n: int = 100_000, per_run: int = 10) -> None:
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        cfg = build(tmp, n)
        con = connect(tmp / "bench.duckdb")
        t = time.perf_counter()
        loaded = load_into_warehouse(con, cfg)
        load_s = time.perf_counter() - t
        copy_id = loaded.copies_loaded[0]
        runs = n // per_run
        con.execute("INSERT INTO runs (invocation_id, verifiable, grounding_mode, agent_id) "
                    "SELECT printf('run-%07d', i), TRUE, 'retrieval', printf('agent.%d', i % 5) FROM range(?) t(i)",
                    [runs])
        con.execute("""
            INSERT INTO evidence (invocation_id, ord, source_id, content_hash, canonicalisation, snapshot_ref)
            SELECT printf('run-%07d', (k // ?)), CAST(k % ? AS INTEGER),
                   CASE WHEN k % 100 = 1 THEN 'src:missing' || k ELSE record_id END,
                   CASE WHEN k % 100 = 2 THEN repeat('0', 64) ELSE hash_identity END,
                   'dd-json-document-v1',
                   CASE WHEN k % 100 = 3 THEN 'live' ELSE 'bench:v1' END
            FROM (SELECT row_number() OVER (ORDER BY record_id) - 1 AS k, record_id, hash_identity
                  FROM source_records WHERE copy_id = ?) r
        """, [per_run, per_run, copy_id])
        items = con.execute("SELECT count(*) FROM evidence").fetchone()[0]
        t = time.perf_counter()
        result = verify_warehouse(con, cfg)
        verify_s = time.perf_counter() - t
        con.close()
    failed = result.count("failed")
    print(f"copy: {n} records loaded (parsed, hashed, written) in {load_s:.2f} s")
    print(f"verify: {items} evidence items in {runs} runs against {n} records: {verify_s:.2f} s "
          f"({failed} runs failed, {sum(r.verified for r in result.runs)} items verified, "
          f"{sum(len(r.unresolved) for r in result.runs)} unresolved; history recorded)")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:]))
