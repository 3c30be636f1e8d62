"""The nightly compliance job: ingest what is new or changed, lint, verify, render every report.

Exit status: 0 when nothing new fails, 1 when some run fails a check it did not fail at the
previous finished nightly (runs new to the warehouse included), 2 when the job could not be done.
"New", "resolved" and "still failing" are the view nightly_changes (docs/schema.md#nightly_changes):
the exit status, the reports and the nightlies row's counts all read it.

Idempotent: unchanged run folders are not reloaded, every report file is rewritten in place
(per-run files only when their content changes), and a second nightly over an unchanged
archive compares with the first one, so it reports nothing new and exits 0. Each nightly adds one
lint pass (and one verify pass) to the append-only history; a nightly that could not finish
(exit 2) is recorded but never becomes the baseline of the next one.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from groundwork import __version__
from groundwork.checks.lint import lint_warehouse
from groundwork.checks.store import keep_derived
from groundwork.checks.verify import verify_warehouse
from groundwork.core.errors import GroundworkError
from groundwork.core.warehouse import DEFAULT_PATH, connect
from groundwork.ingest import ingest_archive, parsers
from groundwork.reports import data as rdata
from groundwork.reports.build import build_reports


@dataclass
class NightlyResult:
    exit_status: int
    nightly_id: int
    out_dir: Path
    fleet_html: Path
    totals: dict
    ingest: object = None
    lint: object = None
    verify: object = None
    reports: object = None
    seconds: dict = field(default_factory=dict)   # wall seconds per phase, and total
    cpu: dict = field(default_factory=dict)       # CPU seconds of this process per phase (all its threads)


def _utcnow() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


def _check_inputs(runs_dir: Path, sources: Path | None, out: Path) -> None:
    if not runs_dir.is_dir():
        raise GroundworkError(f"runs directory {runs_dir} does not exist or is not a directory")
    if sources is not None and not sources.is_file():
        raise GroundworkError(f"sources file {sources} does not exist")
    if out.exists() and not out.is_dir():
        raise GroundworkError(f"--out {out} exists and is not a directory")
    if runs_dir.resolve() == out.resolve() or runs_dir.resolve() in out.resolve().parents:
        raise GroundworkError(f"--out {out} is inside the archive {runs_dir}; reports are never written into the archive")
    # Fail before a long ingest, not after it.
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise GroundworkError(f"cannot create the report directory {out}: {exc.strerror or exc}") from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise GroundworkError(f"the report directory {out} is not writable")


def _start(con, runs_dir: Path, out: Path) -> int:
    nid = con.execute("SELECT COALESCE(MAX(nightly_id), 0) + 1 FROM nightlies").fetchone()[0]
    con.execute(
        "INSERT INTO nightlies (nightly_id, started_at, runs_dir, out_dir) VALUES (?, ?, ?, ?)",
        [nid, _utcnow(), str(runs_dir.resolve()), str(out.resolve())],
    )
    return nid


class _Phases:
    """Wall and CPU seconds of each phase of the job (``with phases("lint"): ...``)."""

    def __init__(self):
        self.seconds: dict = {}
        self.cpu: dict = {}

    @contextlib.contextmanager
    def __call__(self, name: str):
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            yield
        finally:
            self.seconds[name] = time.perf_counter() - wall
            self.cpu[name] = time.process_time() - cpu


def _attr(obj, *names):
    for n in names:
        v = getattr(obj, n, None)
        if v is not None:
            return v
    return None


def run_nightly(runs_dir, *, out, warehouse=DEFAULT_PATH, sources=None, progress=None) -> NightlyResult:
    """Run the whole job, writing the reports to ``out``; raise GroundworkError when it cannot
    be done (the nightly row then records exit status 2 and the reason)."""
    runs_dir, out = Path(runs_dir), Path(out)
    sources = Path(sources) if sources is not None else None
    _check_inputs(runs_dir, sources, out)
    started, started_cpu = time.time(), time.process_time()
    if str(warehouse) != ":memory:":
        try:
            Path(warehouse).parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise GroundworkError(f"cannot create the folder of warehouse {warehouse}: {exc.strerror}") from None
    # The parser processes start while the warehouse opens (as in `groundwork ingest`), and stop
    # once the ingest is done.
    parser_pool = contextlib.ExitStack()
    pool = parser_pool.enter_context(parsers(None, runs_dir))
    try:
        con = connect(warehouse)
    except BaseException:
        parser_pool.close()
        raise
    phase = _Phases()
    try:
        nid = _start(con, runs_dir, out)
        try:
            with phase("ingest"), parser_pool:
                ingest = ingest_archive(con, runs_dir, progress=progress, parsers=pool)
            with phase("lint"):
                lint = lint_warehouse(con, record=True)
            verify = None
            if sources is not None:
                with phase("verify"):
                    verify = verify_warehouse(con, sources, record=True, reuse=True)
            lint_id = _attr(lint, "lint_id")
            verify_id = _attr(verify, "lint_id", "verify_id") if verify is not None else None
            if lint_id is None:
                raise GroundworkError("the lint pass was not recorded in the warehouse history")
            ingest_id = _attr(ingest, "ingest_id")
            # The nightly's passes first: nightly_passes / nightly_changes compare them with the
            # previous finished nightly's.
            con.execute("UPDATE nightlies SET ingest_id = ?, lint_id = ?, verify_id = ? WHERE nightly_id = ?",
                        [ingest_id, lint_id, verify_id, nid])
            p = rdata.nightly_passes(con, nid, ingest_id)
            meta = {
                "tool_version": __version__,
                "nightly_id": nid,
                "generated_at": _utcnow().strftime("%Y-%m-%dT%H:%M:%SZ"),
                "runs_dir": str(runs_dir.resolve()),
                "out_dir": str(out.resolve()),
                "warehouse": str(warehouse),
                "sources": None if sources is None else str(sources.resolve()),
                "baseline_nightly_id": p.baseline_nightly_id,
                "started_epoch": started,
            }
            # Counts first (the trend chart shows this nightly too), exit status last.
            with phase("build_state"):
                rdata.build_state(con, p)
                totals = rdata.totals(con, p)
            con.execute(
                "UPDATE nightlies SET baseline_nightly_id = ?, baseline_lint_id = ?, baseline_verify_id = ?, "
                "runs_failing = ?, new_failing = ?, resolved = ?, still_failing = ? WHERE nightly_id = ?",
                [p.baseline_nightly_id, p.baseline_lint_id, p.baseline_verify_id,
                 totals["runs_failing"], totals["new_failing"], totals["resolved"], totals["still_failing"], nid],
            )
            try:
                with phase("reports"):
                    reports = build_reports(con, out, p, meta, state_ready=True)
            except OSError as exc:
                raise GroundworkError(f"cannot write the reports to {out}: {exc.strerror or exc}") from None
            status = 1 if reports.totals["new_failing"] else 0
            con.execute("UPDATE nightlies SET finished_at = ?, exit_status = ? WHERE nightly_id = ?", [_utcnow(), status, nid])
        except BaseException as exc:
            msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            try:
                con.execute("UPDATE nightlies SET finished_at = ?, exit_status = 2, error = ? WHERE nightly_id = ?",
                            [_utcnow(), msg[:1000], nid])
            except Exception:  # noqa: BLE001 - the original error matters more
                pass
            raise
        # The job is done and recorded. Keep the runs' derived relations in the warehouse (only
        # new or reloaded runs are derived again), so that a full re-lint, e.g. after a rule file
        # changed, evaluates the rules without deriving first. A cache: failing here fails nothing.
        with phase("keep_derived"):
            try:
                keep_derived(con)
            except duckdb.Error:
                pass
    finally:
        parser_pool.close()
        con.close()
    phase.seconds["total"] = time.time() - started
    phase.cpu["total"] = time.process_time() - started_cpu
    return NightlyResult(exit_status=status, nightly_id=nid, out_dir=out, fleet_html=reports.fleet_html,
                         totals=reports.totals, ingest=ingest, lint=lint, verify=verify, reports=reports,
                         seconds=phase.seconds, cpu=phase.cpu)
