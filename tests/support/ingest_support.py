"""Helpers for the ingest tests: small archives copied from the corpus, then damaged on purpose."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb

from groundwork.core.warehouse import apply_schema
from groundwork.ingest import ingest_archive

CORPUS = Path(__file__).parent.parent / "fixtures" / "corpus"
CORPUS_RUNS = CORPUS / "runs"
EXAMPLE = Path(__file__).resolve().parent.parent.parent / "examples" / "archive"  # the bundled example archive
EXAMPLE_RUNS = EXAMPLE / "runs"


def expected() -> dict[str, dict]:
    """expected.jsonl by invocation_id."""
    out = {}
    for line in (CORPUS / "expected.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            doc = json.loads(line)
            out[doc["invocation_id"]] = doc
    return out


def scenario(name: str) -> str:
    """The invocation id of a corpus scenario (first match)."""
    for inv, doc in expected().items():
        if doc["scenario"] == name:
            return inv
    raise KeyError(name)


PASS_RETRIEVAL = "pass/retrieval/one-source"
PASS_NONE = "pass/none/record"
PASS_INPUT_ONLY = "pass/input_only/review"


def archive(tmp_path: Path, *scenarios: str, index: bool = False) -> tuple[Path, list[str]]:
    """A runs/ folder holding copies of the named corpus scenarios; returns (runs_dir, ids)."""
    runs = tmp_path / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    ids = []
    for name in scenarios:
        inv = scenario(name)
        shutil.copytree(CORPUS_RUNS / inv, runs / inv)
        ids.append(inv)
    if index:
        shutil.copy(CORPUS_RUNS / "invocations.jsonl", runs / "invocations.jsonl")
    return runs, ids


def synthetic_runs(folder: Path, runs: int, seed: int) -> Path:
    """The runs/ folder of a synthetic archive (groundwork synth, 30 % violating) made in ``folder``."""
    from groundwork.synth import generate

    generate(folder / "synth", runs, seed=seed, violation_rate=0.3, workers=1)
    return folder / "synth" / "runs"


def fresh_con(path: str = ":memory:") -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(path)
    apply_schema(con, comments=path != ":memory:")
    return con


def ingest(runs: Path, con=None, **kw):
    con = con or fresh_con()
    kw.setdefault("workers", 0)
    result = ingest_archive(con, runs, **kw)
    return con, result


def issues(con, inv: str | None = None) -> list[tuple]:
    """(kind, path, line, effect) of the recorded issues, sorted."""
    if inv is None:
        rows = con.execute("SELECT kind, path, line, effect FROM ingest_issues").fetchall()
    else:
        rows = con.execute("SELECT kind, path, line, effect FROM ingest_issues WHERE invocation_id = ?", [inv]).fetchall()
    return sorted(rows, key=lambda r: (r[0], r[1], r[2] or 0))


def run_row(con, inv: str) -> dict:
    cur = con.execute("SELECT * FROM runs WHERE invocation_id = ?", [inv])
    cols = [d[0] for d in cur.description]
    rows = cur.fetchall()
    assert len(rows) == 1, rows
    return dict(zip(cols, rows[0]))


def rows(con, sql: str, params=None) -> list[dict]:
    cur = con.execute(sql, params or [])
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, r)) for r in cur.fetchall()]


def span_lines(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "spans.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]


def write_span_lines(run_dir: Path, docs: list[dict]) -> None:
    (run_dir / "spans.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")


def envelope(run_dir: Path) -> dict:
    return json.loads((run_dir / "envelope.json").read_text(encoding="utf-8"))


def write_envelope(run_dir: Path, doc) -> None:
    (run_dir / "envelope.json").write_text(json.dumps(doc, indent=2), encoding="utf-8")


ORDERED_TABLES = {
    "runs": "invocation_id",
    "spans": "invocation_id, ord",
    "payload_refs": "invocation_id, ord",
    "evidence": "invocation_id, ord",
    "delegations": "invocation_id, ord",
    "run_files": "invocation_id, file_name",
    "invocation_index": "line_no",
    "class_schemas": "digest",
    "archive_files": "path",
    "ingest_issues": "invocation_id, path, line, kind, message",
}
IGNORED_COLUMNS = {"ingest_id"}


def snapshot(con) -> dict[str, list[tuple]]:
    """Every ingest table's content, ingest ids left out, in a stable order (ingests excluded: it is the log)."""
    out = {}
    for table, order in ORDERED_TABLES.items():
        cols = [r[0] for r in con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = ? ORDER BY ordinal_position",
            [table]).fetchall() if r[0] not in IGNORED_COLUMNS]
        sel = ", ".join(f'"{c}"::VARCHAR' for c in cols)
        out[table] = con.execute(f"SELECT {sel} FROM {table} ORDER BY {order}, 1").fetchall()
    return out
