"""Write a synthetic archive: plan the groups, generate them in worker processes, write the files.

Layout of OUT:

    OUT/runs/<invocation_id>/{envelope.json,request.json,spans.jsonl,grounding.txt,sources.txt}
    OUT/runs/invocations.jsonl        store order (children before parents)
    OUT/runs/schemas/<digest>.json    class schemas
    OUT/sources.yaml                  pinned snapshot copies (OUT/snapshots/...)
    OUT/truth.jsonl                   the expected verdicts, one line per run folder (store order)
    OUT/synth.json                    parameters and counts

Determinism: groups are planned from --seed alone; each block of CHUNK groups is generated from
its own random stream (seed, block number), so the bytes do not depend on the worker count.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import time
from dataclasses import dataclass
from pathlib import Path

import orjson

from groundwork.core.errors import GroundworkError

from groundwork.synth import scenarios as S
from groundwork.synth.pools import FC_FILE, FC_REF, FS_FILE, FS_REF, FS_STALE, pools, set_records

CHUNK = 200
T0_US = 1_790_812_800_000_000          # 2026-10-01T00:00:00Z
GROUP_STEP_US = 1_800_000
_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL
_FILES = ("envelope.json", "request.json", "spans.jsonl", "grounding.txt", "sources.txt")


@dataclass
class SynthResult:
    out: Path
    runs: int
    groups: int
    violating_groups: int
    seconds: float
    scenarios: dict

    @property
    def runs_per_second(self) -> float:
        return self.runs / self.seconds if self.seconds else 0.0


def plan(runs: int, seed: int, violation_rate: float) -> list[tuple[int, int, int]]:
    """Return [(group, scenario index, children)] whose folders add up to exactly ``runs``.

    Scenario index >= 0 names S.CLEAN[i]; < 0 names S.VIOLATIONS[-i - 1]. Violating groups cycle
    through every violation scenario in a seeded order, so each appears once before any repeats.
    """
    rng = random.Random(f"plan:{seed}")
    clean = [f for f, _ in S.CLEAN]
    weights = [w for _, w in S.CLEAN]
    cum, acc = [], 0
    for w in weights:
        acc += w
        cum.append(acc)
    vorder: list[int] = []
    out, left, g = [], runs, 0
    while left > 0:
        if rng.random() < violation_rate:
            if not vorder:
                vorder = list(range(len(S.VIOLATIONS)))
                rng.shuffle(vorder)
            vi = vorder.pop()
            fn, idx = S.VIOLATIONS[vi], -vi - 1
        else:
            ci = _pick(cum, rng.random() * acc)
            fn, idx = clean[ci], ci
        nchild = rng.randint(1, 3)
        size = S.SIZES[fn]
        size = 1 + nchild if size == "ds" else size
        if size > left:
            fn, idx, size = S.s_pass_hw, clean.index(S.s_pass_hw), 1
        out.append((g, idx, nchild))
        left -= size
        g += 1
    return out


def _pick(cum, x):
    for i, c in enumerate(cum):
        if x < c:
            return i
    return len(cum) - 1


def _scenario(idx: int):
    return S.CLEAN[idx][0] if idx >= 0 else S.VIOLATIONS[-idx - 1]


def _gen_chunk(args) -> tuple[bytes, bytes, int, dict]:
    runs_dir, seed, block, groups = args
    ctx = S.Ctx(seed * 1_000_003 + block)
    idx_parts, truth_parts, n = [], [], 0
    counts: dict[str, int] = {}
    for g, sidx, nchild in groups:
        t0 = T0_US + g * GROUP_STEP_US + ctx.rng.randrange(0, 400_000)
        ctx.new_group(t0)
        ctx.nchild = nchild
        for b in _scenario(sidx)(ctx, t0):
            idx_parts.append(b.index_line)
            if b.files:
                d = f"{runs_dir}/{b.iid}"
                os.mkdir(d)
                for name in _FILES:
                    fd = os.open(f"{d}/{name}", _FLAGS, 0o644)
                    os.write(fd, b.files[name])
                    os.close(fd)
                truth_parts.append(orjson.dumps(b.truth))
                n += 1
                sc = b.truth["scenario"]
                counts[sc] = counts.get(sc, 0) + 1
    return b"".join(idx_parts), b"\n".join(truth_parts) + (b"\n" if truth_parts else b""), n, counts


def _write(path: Path, data: bytes) -> None:
    fd = os.open(path, _FLAGS, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def sources_yaml() -> str:
    P = pools()
    return ("# Pinned source copies of the synthetic fleet (paths relative to this file).\n"
            "sources:\n"
            f"  - snapshot_refs: [\"{FS_REF}\", \"{FS_STALE}\"]\n"
            f"    path: {FS_FILE}\n"
            "    id_field: fairsharing_id\n"
            f"    sha256: {P.fs_sha}\n"
            f"  - snapshot_refs: [\"{FC_REF}\"]\n"
            f"    path: {FC_FILE}\n"
            "    id_field: source_id\n"
            f"    sha256: {P.fc_sha}\n")


MAX_RUNS = 10_000_000      # what a plan (a list of every run) and a disk can take
MAX_RECORDS = 1_000_000    # records of the pinned snapshot, held in memory while written
MAX_WORKERS = 64


def generate(out, runs: int, seed: int = 0, violation_rate: float = 0.05, workers: int = 2,
             records: int = 400, progress=None) -> SynthResult:
    """Write a synthetic archive of exactly ``runs`` run folders to ``out`` (see module doc).

    ``records`` sizes the pinned FAIRsharing snapshot that retrieval runs cite.
    """
    if not 1 <= runs <= MAX_RUNS:
        raise GroundworkError(f"--runs must be between 1 and {MAX_RUNS:,}")
    if not 0.0 <= violation_rate <= 1.0:
        raise GroundworkError("--violation-rate must be between 0 and 1")
    if not 10 <= records <= MAX_RECORDS:
        raise GroundworkError(f"--records must be between 10 and {MAX_RECORDS:,}")
    if not 1 <= workers <= MAX_WORKERS:
        raise GroundworkError(f"--workers must be between 1 and {MAX_WORKERS}")
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise GroundworkError(f"{out} is not a directory; choose a new directory")
    if out.exists() and any(out.iterdir()):
        raise GroundworkError(f"{out} exists and is not empty; choose a new directory")
    started = time.perf_counter()
    set_records(records)
    P = pools()
    runs_dir = out / "runs"
    try:
        (runs_dir / "schemas").mkdir(parents=True)
        (out / "snapshots").mkdir()
        _write(out / FS_FILE, P.fs_bytes)
        _write(out / FC_FILE, P.fc_bytes)
        _write(out / "sources.yaml", sources_yaml().encode("ascii"))
        for digest, body in P.schemas.values():
            _write(runs_dir / "schemas" / f"{digest}.json", body)
    except OSError as exc:
        raise GroundworkError(f"cannot write the archive to {out}: {exc.strerror or exc}") from None

    groups = plan(runs, seed, violation_rate)
    blocks = [(str(runs_dir), seed, i // CHUNK, groups[i:i + CHUNK]) for i in range(0, len(groups), CHUNK)]
    counts: dict[str, int] = {}
    written = 0
    idx_fd = os.open(runs_dir / "invocations.jsonl", _FLAGS, 0o644)
    truth_fd = os.open(out / "truth.jsonl", _FLAGS, 0o644)
    try:
        if workers > 1 and len(blocks) > 1:
            ctx = multiprocessing.get_context("fork")
            with ctx.Pool(workers) as pool:
                results = pool.imap(_gen_chunk, blocks, chunksize=1)
                written = _collect(results, idx_fd, truth_fd, counts, progress)
        else:
            written = _collect(map(_gen_chunk, blocks), idx_fd, truth_fd, counts, progress)
    finally:
        os.close(idx_fd)
        os.close(truth_fd)
    seconds = time.perf_counter() - started
    violating = sum(1 for _, s, _ in groups if s < 0)
    manifest = {"generator": "groundwork synth", "runs": written, "groups": len(groups), "seed": seed,
                "violation_rate": violation_rate, "snapshot_records": len(P.fs), "violating_groups": violating,
                "sources": "sources.yaml", "truth": "truth.jsonl", "scenarios": dict(sorted(counts.items()))}
    _write(out / "synth.json", (json.dumps(manifest, indent=2) + "\n").encode("ascii"))
    return SynthResult(out, written, len(groups), violating, seconds, counts)


def _collect(results, idx_fd, truth_fd, counts, progress) -> int:
    written = 0
    for idx, truth, n, c in results:
        os.write(idx_fd, idx)
        os.write(truth_fd, truth)
        written += n
        for k, v in c.items():
            counts[k] = counts.get(k, 0) + v
        if progress:
            progress(written)
    return written
