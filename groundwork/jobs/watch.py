"""`groundwork watch`: lint and verify each run as it lands (README.md#watch).

How a run is found: the workbench appends a run's line to ``runs/invocations.jsonl`` before it
writes the run's spans, grounding.txt and sources.txt (docs/rules.md#run-folder), so the watch
reads the new lines of the index (``landing.IndexTail``) each time the operating system reports
a change at the archive root (watchfiles, not recursive: one watch however large the archive)
or, without file events, every ``poll`` seconds. A named run waits until its folder is complete
(docs/rules.md#complete-run-folders; checked every TICK while any run waits), then goes into the
next batch.

A batch opens the warehouse, ingests only its runs (``ingest_runs``), lints and verifies them
(recorded passes: their verdicts are then in latest_lint / latest_verify), and closes it again,
so the watch holds no connection between batches and ``groundwork sql``, ``query`` and
``nightly`` get the file in between (README.md#sharing-the-warehouse). When another process holds
the warehouse, the batch waits and is tried again; new runs keep being collected meanwhile.

On start (and whenever the index was replaced, or more runs waited than MAX_WAITING), the watch
catches up: every run folder of the archive that has no verdict for its current rows, and every
one an ingest loaded while it was still being written that is complete now, is judged. So a restart picks up whatever landed while the
watch was down, and nothing per run is kept in memory between batches.
"""

from __future__ import annotations

import itertools
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from groundwork.checks.lint import PASSED, lint_warehouse
from groundwork.checks.sources import check_sources
from groundwork.checks.verify import verify_warehouse
from groundwork.core.engine import arrow
from groundwork.core.errors import GroundworkError, WarehouseLocked
from groundwork.core.escape import visible
from groundwork.core.pathtext import checked_path
from groundwork.core.regular import not_regular
from groundwork.core.warehouse import DEFAULT_PATH, RETRY_PAUSE, connect, job_memory
from groundwork.ingest import issues as K
from groundwork.ingest.load import ingest_memory, ingest_runs
from groundwork.jobs.landing import MAX_WAITING, SETTLE, IndexTail, Waiting, is_complete, run_name_ok
from groundwork.reports.output import write_atomic
from groundwork.reports.render import render

TICK = 0.05          # seconds between two looks at the waiting runs (and at the index)
GAP = RETRY_PAUSE + 0.01  # seconds at least between two batches' opens: another process retrying gets in
RETRY = 1.0          # seconds before a batch is tried again after finding the warehouse locked
OPEN_WAIT = 0.5      # seconds a batch's open waits for another process's lock
BATCH = 500          # runs per batch, at most
DEFAULT_POLL = 1.0   # seconds between two looks at the index when file events are unavailable

# The run folders of the archive that may need a verdict, with whether they have none: not in the
# warehouse, or without a lint verdict for their current rows (runs.ingest_id), or (with a sources
# file) without a verify verdict after that lint. The others were loaded while still being written
# (no sources.txt, or a file missing): they need one only if their folder is complete now.
_UNJUDGED_SQL = """
WITH judged AS (
    SELECT v.invocation_id, v.ingest_id, min(v.lint_id) AS lint_id
    FROM lint_verdicts v JOIN lints l USING (lint_id)
    WHERE l.kind = 'lint' AND coalesce(l.all_rules, true)
      AND v.invocation_id IN (SELECT name FROM watch_folders)
    GROUP BY v.invocation_id, v.ingest_id
), flagged AS (
    SELECT d.name,
           g.invocation_id IS NULL
           OR ($verify AND NOT EXISTS (SELECT 1 FROM verify_verdicts s
                                       WHERE s.invocation_id = d.name AND s.lint_id > g.lint_id)) AS unjudged,
           r.recorded_sources IS NULL
           OR EXISTS (SELECT 1 FROM ingest_issues i WHERE i.invocation_id = d.name AND i.kind = $missing) AS incomplete
    FROM watch_folders d
    LEFT JOIN runs r ON r.invocation_id = d.name
    LEFT JOIN judged g ON g.invocation_id = d.name AND g.ingest_id = r.ingest_id
)
SELECT name, unjudged FROM flagged WHERE unjudged OR incomplete ORDER BY name
"""


@dataclass
class Tally:
    """What the metrics textfile shows (reports/templates/watch.prom): bounded label sets."""

    started: float = field(default_factory=time.time)
    runs: dict = field(default_factory=dict)        # (check, status) -> runs
    violations: dict = field(default_factory=dict)  # (check, rule code) -> violations
    batches: int = 0
    lock_waits: int = 0
    waiting: int = 0
    ready: int = 0
    last_latency: float = 0.0
    last_batch: float = 0.0
    polling: bool = False

    def count(self, table: dict, key, n: int = 1) -> None:
        table[key] = table.get(key, 0) + n

    def text(self) -> str:
        view = dict(vars(self), runs=sorted(self.runs.items()), violations=sorted(self.violations.items()))
        return render("watch.prom", w=view)


@dataclass
class Judged:
    """One batch, as ``on_batch`` gets it: the runs given verdicts, when each was found complete
    (time.monotonic) and when the verdicts were committed (both clocks)."""

    runs: list[str]
    found: dict[str, float]
    committed: float
    committed_wall: float
    failing: list[str]


def failing_line(invocation_id: str, lint_verdict, verify_verdict) -> str:
    """One line for a run that failed a check, in the form of the lint/verify text reports'
    header lines (``run ID: failed``, ``run ID: unlintable: REASON``), the source check's part
    named ``sources``."""
    parts = []
    for prefix, v in (("", lint_verdict), ("sources ", verify_verdict)):
        if v is None or v.passed:
            continue
        reason = f": {visible(v.reason)}" if v.status in ("unlintable", "unverifiable") and v.reason else ""
        parts.append(f"{prefix}{v.status}{reason}")
    return f"run {visible(invocation_id)}: {'; '.join(parts)}"


class Watch:
    def __init__(self, runs_dir, *, warehouse=DEFAULT_PATH, sources=None, metrics=None, poll: float | None = None,
                 settle: float | None = None, stop: threading.Event | None = None,
                 out: Callable[[str], None] | None = None, err: Callable[[str], None] | None = None,
                 on_batch: Callable[[Judged], None] | None = None):
        self.root = str(runs_dir)
        self.warehouse = str(warehouse)
        self.sources = None if sources is None else str(sources)
        self.metrics = None if metrics is None else Path(metrics)
        self.poll = poll
        self.stop = stop or threading.Event()
        self.out = out or _printer(sys.stdout)
        self.err = err or _printer(sys.stderr)
        self.on_batch = on_batch
        self.tail = IndexTail(self.root)
        self.waiting = Waiting(self.root, SETTLE if settle is None else settle)
        self.ready: dict[str, float] = {}   # complete runs for the next batch -> when found complete
        self.rescan = True
        self.next_open = 0.0
        self.locked = False
        self.root_mtime = None
        self.tally = Tally(polling=poll is not None)
        self.metrics_text = None

    # -- the loop ------------------------------------------------------------------------

    def run(self) -> int:
        """Watch until ``stop`` is set; 0. Raises GroundworkError when the job cannot go on."""
        self._check_inputs()
        self.tail.skip_to_end()  # what is there already, the catch-up finds
        self._write_metrics()
        for added in self._wakeups():
            self._step(added)
        return 0

    def _check_inputs(self) -> None:
        checked_path(self.root, "RUNS_DIR")
        ingest_memory()
        job_memory()
        if not os.path.isdir(self.root):
            raise GroundworkError(f"runs directory {self.root} does not exist or is not a directory")
        if self.sources is not None:
            problem = not_regular(self.sources)
            if problem:
                raise GroundworkError(f"sources file {self.sources} {problem}")
            # a bad sources.yaml fails now, not at the first run (the records are not kept)
            check_sources(self.sources, records_to=lambda rows: None)
        if self.poll is not None and not self.poll > 0:
            raise GroundworkError("--poll takes a number of seconds above 0")
        if not self.waiting.settle >= 0:   # negative (or NaN): a folder still being written would be judged
            raise GroundworkError("--settle takes a number of seconds, 0 or more")
        if self.warehouse != ":memory:":
            try:
                Path(self.warehouse).parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise GroundworkError(f"cannot create the folder of warehouse {self.warehouse}: {exc.strerror}") from None

    def _wakeups(self):
        """Yield the names of entries added at the archive root (maybe none) each time there is
        something to look at, until ``stop`` is set: on file events (and every TICK), or by polling."""
        poll = self.poll
        if poll is None:
            try:
                import watchfiles

                yield ()
                for changes in watchfiles.watch(self.root, watch_filter=None, debounce=200, step=20,
                                                rust_timeout=int(TICK * 1000), yield_on_timeout=True,
                                                stop_event=self.stop, recursive=False, force_polling=False,
                                                raise_interrupt=False):
                    yield [os.path.basename(path) for change, path in changes if change == watchfiles.Change.added]
                return
            except Exception as exc:  # noqa: BLE001 - no file events here (inotify limits, a file system without them)
                poll = DEFAULT_POLL
                self.tally.polling = True
                self.err(f"groundwork watch: file events unavailable ({type(exc).__name__}: {exc}); "
                         f"polling every {poll:g} s")
        while not self.stop.is_set():
            yield ()
            self.stop.wait(TICK if self.waiting.runs or self.ready or self.rescan else poll)

    def _step(self, added) -> None:
        now = time.monotonic()
        if self.rescan and not self.ready and now >= self.next_open:
            self._catch_up()
            now = time.monotonic()
        names, replaced = self.tail.read()
        if replaced:
            self.rescan = True
        if self.tally.polling and self.tail.ident is None:
            self._root_changed()  # an archive without an index: a new folder changes the root
        for name in itertools.chain(added, names):
            if run_name_ok(name):
                self._named(name, now)
        for name in self.waiting.landed(now):
            self.ready.setdefault(name, now)
        if self.waiting.overflowed:
            self.waiting.overflowed, self.rescan = False, True
        if self.ready and 0 < self.next_open - now <= TICK:
            # due before the next look: open on time rather than up to TICK later
            self.stop.wait(self.next_open - now)
            now = time.monotonic()
        if self.ready and now >= self.next_open:
            self._judge(list(itertools.islice(self.ready, BATCH)))
        self._write_metrics()

    def _root_changed(self) -> None:
        try:
            mtime = os.stat(self.root).st_mtime_ns
        except OSError:
            return
        if self.root_mtime is not None and mtime != self.root_mtime:
            self.rescan = True
        self.root_mtime = mtime

    def _named(self, name: str, now: float) -> None:
        if name in self.ready:
            return
        if len(self.ready) >= MAX_WAITING:
            self.rescan = True  # found again by the catch-up once the warehouse is free
            return
        if is_complete(os.path.join(self.root, name)):
            self.ready[name] = now
        else:
            self.waiting.add(name, now)  # an entry that is no folder is dropped once settled

    # -- the warehouse -------------------------------------------------------------------

    def _open(self):
        """The warehouse, or None when another process holds it (tried again after RETRY)."""
        try:
            con = connect(self.warehouse, wait=OPEN_WAIT, memory=job_memory())
        except WarehouseLocked as exc:
            self.tally.lock_waits += 1
            if not self.locked:
                self.err(f"groundwork watch: {exc}; {len(self.ready)} runs wait")
                self.locked = True
            self.next_open = time.monotonic() + RETRY
            return None
        self.locked = False
        return con

    def _catch_up(self) -> None:
        """Queue every complete run folder that needs a verdict (see _UNJUDGED_SQL)."""
        con = self._open()
        if con is None:
            return
        try:
            with os.scandir(self.root) as it:
                names = [e.name for e in it if run_name_ok(e.name) and _is_dir(e)]
            pa = arrow()
            con.register("watch_folders", pa.table({"name": pa.array(names, pa.string())}))
            try:
                todo = con.execute(_UNJUDGED_SQL, {"verify": self.sources is not None,
                                                   "missing": K.MISSING_FILE}).fetchall()
            finally:
                con.unregister("watch_folders")
        except OSError as exc:
            raise GroundworkError(f"cannot list {self.root}: {exc.strerror or exc}") from None
        finally:
            con.close()
        del names
        self.rescan = False
        now = time.monotonic()
        for name, unjudged in todo:
            if is_complete(os.path.join(self.root, name)):
                self.ready.setdefault(name, now)
            elif unjudged:
                self.waiting.add(name, now)

    def _judge(self, names: list[str]) -> None:
        con = self._open()
        if con is None:
            return
        try:
            ingest_runs(con, self.root, names)
            present = [r[0] for r in con.execute(
                "SELECT invocation_id FROM runs WHERE invocation_id IN (SELECT unnest($names::VARCHAR[])) "
                "ORDER BY invocation_id", {"names": names}).fetchall()]
            lint_bad, verify_bad = {}, {}
            if present:
                lint = lint_warehouse(con, runs=present, record=True)
                lint_bad = {v.invocation_id: v for v in lint.not_passed()}
                for status, n in lint.counts.items():
                    self.tally.count(self.tally.runs, ("grounding", status), n)
                for v in lint_bad.values():
                    for code in v.codes:
                        self.tally.count(self.tally.violations, ("grounding", code))
                if self.sources is not None:
                    verify = verify_warehouse(con, self.sources, runs=present, record=True, pinned_files="trust")
                    for v in verify.runs:
                        self.tally.count(self.tally.runs, ("sources", v.status))
                        for code in v.codes:
                            self.tally.count(self.tally.violations, ("sources", code))
                        if v.status != PASSED:
                            verify_bad[v.invocation_id] = v
        finally:
            con.close()
        committed, committed_wall = time.monotonic(), time.time()
        found = {name: self.ready.pop(name) for name in names}
        failing = sorted(set(lint_bad) | set(verify_bad))
        for name in failing:
            self.out(failing_line(name, lint_bad.get(name), verify_bad.get(name)))
        t = self.tally
        t.batches += 1
        t.last_batch = committed_wall
        t.last_latency = max((committed - found[n] for n in present), default=0.0)
        self.next_open = committed + GAP
        if self.on_batch is not None:
            self.on_batch(Judged(present, {n: found[n] for n in present}, committed, committed_wall, failing))

    def _write_metrics(self) -> None:
        if self.metrics is None:
            return
        self.tally.waiting, self.tally.ready = len(self.waiting), len(self.ready)
        text = self.tally.text()
        if text != self.metrics_text:
            try:
                write_atomic(self.metrics, text)
            except OSError as exc:
                raise GroundworkError(f"cannot write the metrics file {self.metrics}: {exc.strerror or exc}") from None
            self.metrics_text = text


def _is_dir(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir(follow_symlinks=True)
    except OSError:
        return False


def _printer(stream):
    def emit(line: str) -> None:
        stream.write(line + "\n")
        stream.flush()
    return emit


def run_watch(runs_dir, **options) -> int:
    """Run a Watch (options as Watch takes them) until SIGTERM or SIGINT; 0 when stopped so.

    The signals only set the stop event: a batch being written is finished first. They are
    caught from before the Watch is made (loading sources.yaml can take seconds), so a signal
    during start-up stops it the same way."""
    stop = options.pop("stop", None) or threading.Event()
    previous = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGINT):
            previous[sig] = signal.signal(sig, lambda *_: stop.set())
    try:
        return Watch(runs_dir, stop=stop, **options).run()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
