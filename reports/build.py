"""Render every report of a nightly into one output directory.

Layout of OUT:
    fleet.html                 the fleet report (self-contained: inline CSS, inline SVG, no script)
    rules.html                 what each rule code means (every code on a page links to it)
    summary.md, summary.json   summaries for chat/e-mail and for machines
    failing/page-<n>.html      every failing run, paged
    runs/<slug>/index.html     a page per failing run
    runs/<slug>/grounding.txt  today's texts for every run judged
    runs/<slug>/sources.txt
    junit.xml                  CI: a testcase per rule and agent
    metrics/groundwork.prom    Prometheus textfile collector
    violations.jsonl           one object per violation
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from groundwork.reports import data, fleet, machine, runpage


@dataclass
class ReportResult:
    out_dir: Path
    fleet_html: Path
    totals: dict
    runs: runpage.RunOutputs
    files: list[Path] = field(default_factory=list)
    seconds: dict = field(default_factory=dict)


def build_reports(con, out: Path, p: data.Passes, meta: dict, *, state_ready: bool = False) -> ReportResult:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    t = time.perf_counter()
    d = fleet.collect(con, p, meta, state_ready=state_ready)
    seconds = {"data": time.perf_counter() - t}
    t = time.perf_counter()
    files = fleet.write(out, d, con=con)
    seconds["fleet"] = time.perf_counter() - t
    t = time.perf_counter()
    runs = runpage.write_all(con, out, p, meta)
    seconds["runs"] = time.perf_counter() - t
    # Machine outputs last: the metrics file says the nightly succeeded, so it is written only
    # once everything else is.
    t = time.perf_counter()
    now = time.time()
    meta = dict(meta, finished_epoch=round(now, 3), duration_seconds=round(now - meta.get("started_epoch", now), 3))
    files += machine.write(con, out, p, d["totals"], meta)
    seconds["machine"] = time.perf_counter() - t
    return ReportResult(out_dir=out, fleet_html=out / "fleet.html", totals=d["totals"], runs=runs, files=files, seconds=seconds)
