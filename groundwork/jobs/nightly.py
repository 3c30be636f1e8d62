"""The nightly compliance job: ingest what is new or changed, lint, verify, render every report.

Exit status: 0 when nothing new fails, 1 when some run fails a check it did not fail at the
previous finished nightly (runs new to the warehouse included), 2 when the job could not be done.
"New", "resolved" and "still failing" are the view nightly_changes (docs/schema.md#nightly_changes):
the exit status, the reports and the nightlies row's counts all read it.

Idempotent: unchanged run folders are not reloaded, every report file is rewritten in place
(per-run files only when their content changes), and a second nightly over an unchanged
archive compares with the first one, so it reports nothing new and exits 0. Each nightly adds one
lint pass (and one verify pass) to the append-only history, unless nothing those passes depend on
changed since the latest ones (groundwork.checks.current): its nightlies row then names those
passes, and compared with a baseline that names the same passes it finds nothing new. A nightly
that did not finish every step (exit 2, or killed) is recorded but never becomes the baseline of
the next one.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

from groundwork.checks.lint import lint_warehouse
from groundwork.checks.store import keep_derived
from groundwork.checks.sources import check_config
from groundwork.checks.verify import verify_warehouse
from groundwork.core.engine import duckdb
from groundwork.core.errors import GroundworkError
from groundwork.core.outdir import make_dirs, ready_dir
from groundwork.core.regular import not_regular
from groundwork.core.warehouse import DEFAULT_PATH, connect, job_memory
from groundwork.ingest import ingest_archive, ingest_memory, parsers
from groundwork.ingest.runs_folder import check_runs_dir
from groundwork.reports import data as rdata
from groundwork.reports.build import nightly_reports


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
    severities: dict = field(default_factory=dict)  # finding code -> error / warn / off, as recorded
    warnings: list = field(default_factory=list)    # findings of severity warn: code, runs, findings, first_run


def _utcnow() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


def _remove_empty(folders: list[Path]) -> None:
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:
            pass


def _check_inputs(runs_dir: Path, sources: Path | None, out: Path, created: list[Path]) -> None:
    check_runs_dir(runs_dir)
    ingest_memory()
    job_memory()
    problem = None if sources is None else not_regular(sources)
    if problem:
        raise GroundworkError(f"sources file {sources} {problem}")
    if sources is not None:
        check_config(sources)   # a malformed file fails now, not after the ingest and the lint
    runs, report = runs_dir.resolve(), out.resolve()
    if runs == report or runs in report.parents:
        raise GroundworkError(f"--out {out} is inside the archive {runs_dir}; reports are never written into the archive")
    if report in runs.parents:
        # e.g. --out the run store (the parent of runs/): the report's own runs/<id>/ folders
        # would be the archive's run folders, their grounding.txt and sources.txt overwritten
        raise GroundworkError(f"--out {out} holds the archive {runs_dir}; reports are never written into the archive, "
                              "give a report folder outside it")
    # Fail before a long ingest, not after it.
    created.extend(ready_dir(out, "report directory"))


def _start(con, runs_dir: Path, out: Path) -> int:
    nid = con.execute("SELECT COALESCE(MAX(nightly_id), 0) + 1 FROM nightlies").fetchone()[0]
    con.execute(
        "INSERT INTO nightlies (nightly_id, started_at, runs_dir, out_dir) VALUES (?, ?, ?, ?)",
        [nid, _utcnow(), str(runs_dir.resolve()), str(out.resolve())],
    )
    return nid


CRASH_ENV = "GROUNDWORK_NIGHTLY_CRASH"  # fault injection for the kill -9 test: the name of a step


def _crash_point(step: str) -> None:
    """Kill this process (SIGKILL, as kill -9 would) when $GROUNDWORK_NIGHTLY_CRASH names ``step``."""
    if os.environ.get(CRASH_ENV) == step:
        os.kill(os.getpid(), signal.SIGKILL)


class _Phases:
    """Wall and CPU seconds of each phase of the job (``with phases("lint"): ...``); ``on_start(name)``
    is told as each phase starts (the command's progress line)."""

    def __init__(self, on_start=None):
        self.seconds: dict = {}
        self.cpu: dict = {}
        self.on_start = on_start

    @contextlib.contextmanager
    def __call__(self, name: str):
        if self.on_start is not None:
            self.on_start(name)
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


FULL_SCAN_EVERY = 7  # nightlies: the ingest lists and compares every run folder every 7th night


def full_scan_due(con, runs_dir: Path, every: int) -> bool:
    """Whether tonight's ingest is a full scan: ``every`` > 0 and ``every`` - 1 finished
    nightlies of this archive have run since its last full scan (or there was none). The count
    is read from the warehouse (nightlies, ingests.scan), so it survives between runs."""
    if every <= 0:
        return False
    since, full = con.execute("""
        WITH last AS (SELECT max(ingest_id) AS id FROM ingests
                      WHERE runs_dir = $dir AND scan = 'full' AND finished_at IS NOT NULL)
        SELECT count(n.nightly_id) FILTER (WHERE n.ingest_id > last.id), any_value(last.id) IS NOT NULL
        FROM last LEFT JOIN nightlies n ON n.exit_status IN (0, 1) AND n.runs_dir = $dir""",
        {"dir": str(runs_dir.resolve())}).fetchall()[0]
    return not full or since >= every - 1


def run_nightly(runs_dir, *, out, warehouse=DEFAULT_PATH, sources=None, progress=None,
                full_scan: bool = False, full_scan_every: int | None = None, workers: int | None = None,
                config=None, on_phase=None) -> NightlyResult:
    """Run the whole job, writing the reports to ``out``; raise GroundworkError when it cannot
    be done (the nightly row then records exit status 2 and the reason).

    The ingest is a quick scan (what is new since the last one), or a full scan of every run
    folder with ``full_scan`` or when ``full_scan_due`` (every ``full_scan_every`` nightlies,
    default FULL_SCAN_EVERY). ``workers``: the ingest's parser processes. ``config`` (a
    groundwork.core.config.Config) sets the finding severities (default: docs/rules.md#severities).
    ``on_phase(name)`` is called as each phase starts."""
    severities = rdata.finding_severities(config)  # a bad [severity] fails before the ingest
    runs_dir, out = Path(runs_dir), Path(out)
    sources = Path(sources) if sources is not None else None
    created: list[Path] = []  # folders made for this nightly: removed again when it cannot start
    try:
        _check_inputs(runs_dir, sources, out, created)
        if str(warehouse) != ":memory:":
            try:
                created[:0] = make_dirs(Path(warehouse).parent)
            except OSError as exc:
                raise GroundworkError(f"cannot create the folder of warehouse {warehouse}: {exc.strerror}") from None
    except BaseException:
        _remove_empty(created)
        raise
    started, started_cpu = time.time(), time.process_time()
    # The parser processes start while the warehouse opens (as in `groundwork ingest`) when many
    # runs will be parsed, and stop once the ingest is done (a quick scan starts its own if it
    # finds many new runs).
    parser_pool = contextlib.ExitStack()
    early = full_scan or str(warehouse) == ":memory:" or not Path(warehouse).exists()
    pool = parser_pool.enter_context(parsers(workers if early else 0, runs_dir))
    try:
        con = connect(warehouse, memory=job_memory())
    except BaseException:
        parser_pool.close()
        _remove_empty(created)
        raise
    phase = _Phases(on_phase)
    try:
        nid = _start(con, runs_dir, out)
        try:
            with phase("ingest"), parser_pool:
                every = FULL_SCAN_EVERY if full_scan_every is None else full_scan_every
                full = full_scan or full_scan_due(con, runs_dir, every)
                ingest = ingest_archive(con, runs_dir, progress=progress, parsers=pool if early else None,
                                        full_scan=full, workers=workers)
            with phase("lint"):
                lint = lint_warehouse(con, record=True, same_pass=True, keep_store=True)
                lint.release()   # recorded: the reports read the verdicts from the warehouse
            verify = None
            if sources is not None:
                with phase("verify"):
                    # A full scan reads every file again, the pinned copies' included.
                    verify = verify_warehouse(con, sources, record=True, reuse=True, same_pass=True,
                                              pinned_files="record" if full else "trust")
                    verify.release()
            lint_id = _attr(lint, "lint_id")
            verify_id = _attr(verify, "lint_id", "verify_id") if verify is not None else None
            if lint_id is None:
                raise GroundworkError("the lint pass was not recorded in the warehouse history")
            ingest_id = _attr(ingest, "ingest_id")
            # The nightly's passes first: nightly_passes / nightly_changes compare them with the
            # previous finished nightly's.
            con.execute("UPDATE nightlies SET ingest_id = ?, lint_id = ?, verify_id = ? WHERE nightly_id = ?",
                        [ingest_id, lint_id, verify_id, nid])
            try:
                reports = nightly_reports(
                    con, out, nightly_id=nid, ingest_id=ingest_id, generated_at=_utcnow(), runs_dir=str(runs_dir.resolve()),
                    warehouse=str(warehouse), sources=None if sources is None else str(sources.resolve()),
                    started_epoch=started, severities=severities, phase=phase)
            except OSError as exc:
                raise GroundworkError(f"cannot write the reports to {out}: {exc.strerror or exc}") from None
            status = 1 if reports.totals["new_failing"] else 0
            # Keep the runs' derived relations in the warehouse (only new or reloaded runs are
            # derived again), so that a full re-lint, e.g. after a rule file changed, evaluates the
            # rules without deriving first. A cache: failing here fails nothing.
            _crash_point("keep-derived")
            with phase("keep_derived"):
                try:
                    keep_derived(con)
                except duckdb.Error:
                    pass
            # Finished: only now does this nightly become the baseline of the next (nightly_passes
            # reads exit_status). One killed before this line has none, so the next nightly compares
            # with the same baseline as this one and reports the same new failures.
            con.execute("UPDATE nightlies SET finished_at = ?, exit_status = ? WHERE nightly_id = ?", [_utcnow(), status, nid])
            # Only a finished nightly claims success: the metrics textfile's last-success timestamp.
            try:
                reports.publish_metrics()
            except OSError as exc:
                raise GroundworkError(f"cannot write the metrics to {out}: {exc.strerror or exc}") from None
        except BaseException as exc:
            msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            try:
                con.execute("UPDATE nightlies SET finished_at = ?, exit_status = 2, error = ? WHERE nightly_id = ?",
                            [_utcnow(), msg[:1000], nid])
            except Exception:  # noqa: BLE001 - the original error matters more
                pass
            raise
    finally:
        parser_pool.close()
        con.close()
    phase.seconds["total"] = time.time() - started
    phase.cpu["total"] = time.process_time() - started_cpu
    return NightlyResult(exit_status=status, nightly_id=nid, out_dir=out, fleet_html=reports.fleet_html,
                         totals=reports.totals, ingest=ingest, lint=lint, verify=verify, reports=reports,
                         seconds=phase.seconds, cpu=phase.cpu, severities=severities, warnings=reports.warnings)
