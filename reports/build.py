"""Render every report of a nightly into one output directory.

Layout of OUT:
    fleet.html                 the fleet report (self-contained: inline CSS, inline SVG, no script)
    rules.html                 what each rule code means (every code on a page links to it)
    summary.md, summary.json   summaries for chat/e-mail and for machines
    failing/index.html         every failing run: the list's pages by the nightly each run has
                               failed since (failing/since-<N>.html, since-<N>-2.html, ...)
    runs/<slug>/index.html     a page per failing run
    runs/<slug>/grounding.txt  today's texts for every run judged
    runs/<slug>/sources.txt
    junit.xml                  CI: a testcase per rule and agent
    metrics/groundwork.prom    Prometheus textfile collector (a nightly's: written once it has
                               finished, ReportResult.publish_metrics)
    violations.jsonl           one object per violation
"""

from __future__ import annotations

import contextlib
import datetime as dt
import time
from dataclasses import dataclass, field
from pathlib import Path

from groundwork import __version__
from groundwork.reports import data, fleet, machine, manifests, runpage, sections


@dataclass
class ReportResult:
    out_dir: Path
    fleet_html: Path
    totals: dict
    runs: runpage.RunOutputs
    files: list[Path] = field(default_factory=list)
    seconds: dict = field(default_factory=dict)
    warnings: list = field(default_factory=list)  # findings of severity warn: code, title, runs, findings, listed
    metrics: object = None  # with defer_metrics: the metrics textfile still to write (publish_metrics)

    def publish_metrics(self) -> Path | None:
        """Write the deferred metrics textfile (its last-success timestamp is now); call it once
        the nightly has finished, on the connection the reports were built on."""
        if self.metrics is None:
            return None
        path, self.metrics = self.metrics(), None
        self.files.append(path)
        return path


def build_reports(con, out: Path, p: data.Passes, meta: dict, *, state_ready: bool = False,
                  defer_metrics: bool = False, totals: dict | None = None, key: str | None = None) -> ReportResult:
    """Every report file of ``p`` into ``out``. With ``defer_metrics`` the metrics textfile,
    which says the nightly succeeded, is left to ``ReportResult.publish_metrics``. ``state_ready``:
    data.build_state(con, p) has run; ``totals``: data.totals(con, p) after it; ``key``:
    sections.key(con, p), when the caller has it."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    t = time.perf_counter()
    kept = sections.keyed(out, key) if key is not None else sections.load(con, out, p)
    d = fleet.collect(con, p, meta, state_ready=state_ready, kept=kept, totals=totals)
    seconds = {"data": time.perf_counter() - t}
    t = time.perf_counter()
    manifest = manifests.load(out)
    files = fleet.write(out, d, con=con, manifest=manifest)
    seconds["fleet"] = time.perf_counter() - t
    t = time.perf_counter()
    runs = runpage.write_all(con, out, p, meta, manifest)
    manifests.finish(out, manifest, runpage.written(meta))
    seconds["runs"] = time.perf_counter() - t
    # Machine outputs last: the metrics file says the nightly succeeded, so it is written only
    # once everything else is (with defer_metrics: once the caller's nightly has finished).
    t = time.perf_counter()
    files += machine.write(con, out, p, d["totals"], meta, metrics=not defer_metrics, kept=kept)
    kept.save()
    seconds["machine"] = time.perf_counter() - t
    result = ReportResult(out_dir=out, fleet_html=out / "fleet.html", totals=d["totals"], runs=runs, files=files,
                          seconds=seconds, warnings=d["warnings"])
    if defer_metrics:
        result.metrics = lambda: machine.write_metrics(con, out, d["totals"], meta)
    return result


def _no_phase(name: str):
    return contextlib.nullcontext()


def nightly_reports(con, out: Path, *, nightly_id: int, ingest_id: int | None, generated_at: dt.datetime,
                    runs_dir: str, warehouse: str, sources: str | None, started_epoch: float,
                    severities: dict[str, str], phase=_no_phase) -> ReportResult:
    """The report phase of a nightly whose nightlies row names its passes (ingest_id, lint_id,
    verify_id), for the local nightly and `groundwork spark run --reports` alike: the passes
    compared with the previous finished nightly's, tonight's counts (build_state, totals) into
    the nightlies row, then every report file. The metrics textfile is deferred: the caller
    marks the nightly finished, then calls ``publish_metrics``. ``phase(name)`` (a context
    manager) times "build_state" and "reports". ``severities``: the finding codes' severities
    (data.finding_severities), recorded first: nightly_changes judges findings by them."""
    data.record_severities(con, nightly_id, severities)
    p = data.nightly_passes(con, nightly_id, ingest_id)
    meta = {
        "tool_version": __version__,
        "nightly_id": nightly_id,
        "generated_at": generated_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "runs_dir": runs_dir,
        "out_dir": str(Path(out).resolve()),
        "warehouse": warehouse,
        "sources": sources,
        "baseline_nightly_id": p.baseline_nightly_id,
        "started_epoch": started_epoch,
    }
    # Counts first (the trend chart shows this nightly too), exit status last (the caller's).
    with phase("build_state"):
        # What tonight's rows read (besides the baseline): the kept sections' key, under which
        # the rows are kept for the next nightly too.
        key = sections.key(con, p)
        data.build_state(con, p, keep=key)
        totals = data.totals(con, p)
    con.execute(
        "UPDATE nightlies SET baseline_nightly_id = ?, baseline_lint_id = ?, baseline_verify_id = ?, "
        "runs_failing = ?, new_failing = ?, resolved = ?, still_failing = ? WHERE nightly_id = ?",
        [p.baseline_nightly_id, p.baseline_lint_id, p.baseline_verify_id,
         totals["runs_failing"], totals["new_failing"], totals["resolved"], totals["still_failing"], nightly_id],
    )
    with phase("reports"):
        return build_reports(con, out, p, meta, state_ready=True, defer_metrics=True, totals=totals, key=key)
