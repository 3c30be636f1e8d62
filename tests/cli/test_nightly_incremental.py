"""An incremental nightly (verdicts reused, lint_store kept, only changed pages rewritten) gives
the same reports as a nightly that recomputes everything, after any sequence of additions, edits,
deletions and rule changes (issue 16 point 1).

Two warehouses follow the same archive through a seeded random sequence of changes:

- ``incremental``: the nightly as it runs in production (one report directory, kept between
  nights; verdicts of unchanged runs reused; lint_store kept by keep_derived; on a night that
  names its baseline's passes, report_state read from changes_same_passes, or from the rows
  its baseline kept, report_store.state, when nothing at all changed);
- ``reference``: every check recomputed from scratch each night (no verdict reused, no
  lint_store) into an empty report directory.

Both record one ingest per nightly, so their ids agree; the reference records a lint and a verify
pass every night, the incremental one only when something they depend on changed (else it names
the passes that still hold: checks.current), so pass ids differ. What differs, and is masked
before the byte-for-byte comparison (``_masks``):

- timestamps of the nightly itself (generated_at, passes' started_at / finished_at, the trend's
  ``at``, junit timestamps: every ISO time on or after the test's start day; the archive's own
  times are older; the day of "failing since nightly #N (day)") and the Unix times / durations in
  summary.json and the metrics textfile;
- the report directory and warehouse paths (TMP/inc/... and TMP/ref/...: summary.json meta,
  summary.md);
- the ids of lint and verify passes (``lint pass #3``, ``"lint_id": 3``); which passes the
  incremental nightly names is checked apart: its own exactly when its ingest changed a run (or,
  for the lint pass, the rules changed), else the previous nightly's;
- ``.groundwork-manifest.json``, ``.groundwork-written.json`` and ``.groundwork-sections.json``
  (the incremental writer's own bookkeeping) are not compared.

After every night, the warehouse's per-nightly rows the reports read equal their recomputation
from the whole history: nightly_failing (failing since) the view failing_streaks, and the trend
counts (nightly_agent_counts, nightly_rule_counts) the queries over every pass they replace.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import random
import re
import shutil
from functools import partial
from pathlib import Path

import duckdb
import pytest

from groundwork.checks import lint as lint_mod
from groundwork.checks import rules as rules_mod
from groundwork.checks import verify as verify_mod
from groundwork.jobs import nightly as nightly_job
from groundwork.reports import data as rdata
from ingest_support import EXAMPLE

HELD_BACK = 12       # runs of the example archive that arrive later
EXTRA_STEPS = 3    # nights of mixed changes after each kind of change alone
NOT_COMPARED = {".groundwork-manifest.json", ".groundwork-written.json", ".groundwork-sections.json"}


def _masks(start_day: str):
    iso = re.compile(rb"(\d{4}-\d\d-\d\d)T\d\d:\d\d:\d\d(?:\.\d+)?Z")

    def mask_time(m: re.Match) -> bytes:
        return b"<now>" if m.group(1).decode() >= start_day else m.group(0)

    epoch = re.compile(rb'("(?:started|finished)_epoch": |"duration_seconds": |'
                       rb"groundwork_nightly_(?:duration_seconds|last_success_timestamp_seconds) )[0-9.e+-]+")
    pass_id = re.compile(rb'((?:[Ll]int|verify) pass #|"(?:baseline_)?(?:lint|verify)_id": )\d+')
    day = re.compile(rb"(nightly #\d+ \()(\d{4}-\d\d-\d\d)\)")

    def mask_day(m: re.Match) -> bytes:
        return m.group(1) + (b"<today>" if m.group(2).decode() >= start_day else m.group(2)) + b")"

    return lambda text: pass_id.sub(rb"\1<id>", day.sub(mask_day, epoch.sub(rb"\1<n>", iso.sub(mask_time, text))))


def _tree(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and p.name not in NOT_COMPARED}


class Archive:
    """A copy of the example archive, changed step by step (files are replaced, never edited in
    place: a new file in the run folder, as the workbench writes)."""

    def __init__(self, root: Path, rng: random.Random):
        shutil.copytree(EXAMPLE, root)
        self.root, self.runs, self.rng = root, root / "runs", rng
        self.index = {json.loads(line)["invocation_id"]: line
                      for line in (self.runs / "invocations.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)}
        present = self.present()
        self.held = rng.sample(present, HELD_BACK)
        for inv in self.held:
            shutil.rmtree(self.runs / inv)
        kept = [line for inv, line in self.index.items() if inv not in self.held]
        self._replace(self.runs / "invocations.jsonl", "".join(kept))

    def present(self) -> list[str]:
        return sorted(p.name for p in self.runs.iterdir() if p.is_dir() and p.name != "schemas")

    @staticmethod
    def _replace(path: Path, text: str) -> None:
        tmp = path.with_name(path.name + ".new")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)

    def add(self) -> str:
        if not self.held:
            return "add: nothing held back"
        chosen = [self.held.pop() for _ in range(min(len(self.held), self.rng.randint(1, 3)))]
        for inv in chosen:
            shutil.copytree(EXAMPLE / "runs" / inv, self.runs / inv)
            if inv in self.index:
                with open(self.runs / "invocations.jsonl", "a", encoding="utf-8") as fh:
                    fh.write(self.index[inv])
        return f"add {chosen}"

    def edit(self) -> str:
        inv = self.rng.choice(self.present())
        run = self.runs / inv
        kind = self.rng.choice(["drop-span", "break-envelope", "recorded-text"])
        if kind == "drop-span" and (run / "spans.jsonl").is_file():
            lines = (run / "spans.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
            self._replace(run / "spans.jsonl", "".join(lines[:-1]))
        elif kind == "break-envelope" and (run / "envelope.json").is_file():
            self._replace(run / "envelope.json", "{")
        else:
            self._replace(run / "grounding.txt", "grounding: passed (mode=none, 0 retrieval spans, 0 chat spans)\n")
        return f"edit {kind} {inv}"

    def delete(self) -> str:
        inv = self.rng.choice(self.present())
        shutil.rmtree(self.runs / inv)
        return f"delete {inv}"


def _changed_rules(root: Path) -> Path:
    """A copy of sql/rules/ in which N1 never fires (a rule change that resolves runs)."""
    shutil.copytree(rules_mod.RULES_DIR, root)
    path = root / "N1.sql"
    header, body = rules_mod.split_header(path.read_text(encoding="utf-8"))
    head = "".join(f"-- {k}: {v}\n" for k, v in header.items())
    path.write_text(f"{head}SELECT * FROM (\n{body.strip().rstrip(';')}\n) AS q WHERE false\n", encoding="utf-8")
    return root


def _run(archive: Archive, wh: Path, out: Path):
    return nightly_job.run_nightly(archive.runs, out=out, warehouse=wh, sources=archive.root / "sources.yaml")


def _sorted(con, sql: str, **params) -> list[tuple]:
    return sorted(con.execute(sql, params or None).fetchall(), key=repr)


def assert_kept_rows_equal_the_history(wh: Path, nightly_id: int, where: str) -> None:
    """The per-nightly rows nightly ``nightly_id`` recorded equal their recomputation from the
    history: its failing runs and since which nightly each fails (the view failing_streaks), its
    agent counts, and the rule counts of every nightly (the queries over every pass)."""
    con = duckdb.connect(str(wh), read_only=True)
    try:
        kept = _sorted(con, "SELECT invocation_id, since_nightly_id FROM nightly_failing WHERE nightly_id = $n", n=nightly_id)
        streaks = _sorted(con, "SELECT invocation_id, since_nightly_id FROM failing_streaks WHERE nightly_id = $n", n=nightly_id)
        assert kept == streaks, ("nightly_failing", where)
        failing = _sorted(con, "SELECT invocation_id FROM nightly_changes WHERE nightly_id = $n AND failing", n=nightly_id)
        assert [(inv,) for inv, _ in kept] == failing and all(since <= nightly_id for _, since in kept), where
        agents = _sorted(con, "SELECT nightly_id, agent_id, runs, failing FROM nightly_agent_counts WHERE nightly_id = $n", n=nightly_id)
        assert agents == _sorted(con, rdata.query("agent_counts_from_history")[0], nightlies=[nightly_id]), ("agents", where)
        every = [r[0] for r in con.execute("SELECT nightly_id FROM nightly_counted").fetchall()]
        assert nightly_id in every, where
        assert _sorted(con, "SELECT * FROM nightly_rule_counts") == \
            _sorted(con, rdata.query("rule_counts_from_history")[0], nightlies=every), ("rules", where)
    finally:
        con.close()


@pytest.mark.parametrize("seed", [7, 11])
def test_incremental_nightly_reports_equal_a_nightly_that_recomputes_everything(tmp_path, monkeypatch, seed):
    start_day = dt.datetime.now(dt.timezone.utc).date().isoformat()
    mask = _masks(start_day)
    rng = random.Random(seed)
    archive = Archive(tmp_path / "archive", rng)
    changed_rules = _changed_rules(tmp_path / "rules-changed")
    inc_wh, inc_out = tmp_path / "inc" / "warehouse.duckdb", tmp_path / "inc" / "out"
    ref_wh = tmp_path / "ref" / "warehouse.duckdb"
    original_rules = rules_mod.RULES_DIR
    rules = original_rules
    history = []
    hashes = set()
    # Night 0: the first nightly; nights 1 and 2: nothing changed (the second reads the rows of
    # report_state the first one read); then each kind of change alone, in a seeded order, then
    # seeded mixtures.
    singles = [["add"], ["edit"], ["delete"], ["rules"]]
    rng.shuffle(singles)
    plan = [[], ["nothing"], ["nothing"], *singles] + [rng.sample(["add", "edit", "delete", "rules", "nothing"], rng.randint(2, 3))
                                          for _ in range(EXTRA_STEPS)]
    previous = None
    for step, actions in enumerate(plan):
        rules_before = rules
        for action in actions:
            if action == "rules":
                rules = changed_rules if rules == original_rules else original_rules
                history.append(f"rules -> {rules.name}")
            elif action != "nothing":
                history.append(getattr(archive, action)())
        monkeypatch.setattr(rules_mod, "RULES_DIR", rules)
        inc = _run(archive, inc_wh, inc_out)
        runs_changed = previous is None or inc.ingest.changed_runs != []
        assert inc.verify.kept == (not runs_changed), (step, history)
        assert inc.lint.kept == (not runs_changed and rules == rules_before), (step, history)
        if inc.lint.kept:
            assert (inc.lint.lint_id, inc.verify.lint_id) == (previous.lint.lint_id, previous.verify.lint_id)
        if inc.lint.kept and inc.verify.kept:
            # The baseline's passes: report_state was read from changes_same_passes, not the view
            # (the reference's passes are new every night, so it reads the view).
            with duckdb.connect(str(inc_wh), read_only=True) as con:
                assert rdata.same_passes(rdata._one(con, "nightly_passes", nightly=inc.nightly_id)), (step, history)
        previous = inc
        ref_out = tmp_path / "ref" / "out"
        shutil.rmtree(ref_out, ignore_errors=True)   # an empty report directory every night
        with monkeypatch.context() as m:
            m.setattr(nightly_job, "lint_warehouse", partial(lint_mod.lint_warehouse, reuse=False))
            m.setattr(nightly_job, "verify_warehouse", partial(verify_mod.verify_warehouse, reuse=False))
            m.setattr(nightly_job, "keep_derived", lambda con, **kw: "unavailable")
            ref = _run(archive, ref_wh, ref_out)
        where = f"step {step} after {history}"
        assert inc.exit_status == ref.exit_status, where
        for key in ("runs_failing", "new_failing", "resolved", "still_failing", "gone", "runs_linted", "runs_verified"):
            assert inc.totals[key] == ref.totals[key], (key, where)
        inc_files, ref_files = _tree(inc_out), _tree(ref_out)
        assert sorted(inc_files) == sorted(ref_files), where
        for name, body in ref_files.items():
            body = body.replace(b"/ref/", b"/inc/")   # TMP/ref/{out,warehouse.duckdb} -> TMP/inc/...
            assert mask(inc_files[name]) == mask(body), (name, where)
        hashes.add(inc.lint.ruleset_hash)
        assert_kept_rows_equal_the_history(inc_wh, inc.nightly_id, where)
        assert_kept_rows_equal_the_history(ref_wh, ref.nightly_id, where)
    assert len(hashes) == 2, "the rule change took effect"


FAILING_N1 = "01a22a33-cc8f-721d-9706-f81a30449b62"   # fails N1 only (violation/N1/none-calls-a-model)


def test_failing_since_is_the_first_nightly_of_the_current_failing_streak(tmp_path, monkeypatch):
    """A run that fails, passes (N1 switched off), then fails again: its page says it fails since
    the nightly its second streak began, and the page is not rewritten while that holds."""
    archive = tmp_path / "archive"
    shutil.copytree(EXAMPLE, archive)
    changed_rules = _changed_rules(tmp_path / "rules-changed")
    wh, out = tmp_path / "warehouse.duckdb", tmp_path / "out"
    page = out / "runs" / FAILING_N1 / "index.html"
    since_line = re.compile(r'<th>Failing since</th><td id="failing-since">nightly #(\d+) \((\d{4}-\d\d-\d\d)\)</td>')
    seen, original = [], rules_mod.RULES_DIR
    for night, rules in enumerate([None, None, changed_rules, None, None], start=1):
        monkeypatch.setattr(rules_mod, "RULES_DIR", rules or original)
        res = nightly_job.run_nightly(archive / "runs", out=out, warehouse=wh, sources=archive / "sources.yaml")
        assert res.nightly_id == night
        assert_kept_rows_equal_the_history(wh, night, f"night {night}")
        # The report directory says whose outputs it holds: the next nightly looks only at what changed since.
        assert json.loads((out / ".groundwork-written.json").read_bytes()) == {"nightly_id": night, "warehouse": str(wh)}
        if rules is changed_rules:
            assert not page.exists()
            seen.append(None)
            continue
        m = since_line.search(page.read_text(encoding="utf-8"))
        assert m is not None, f"night {night}"
        seen.append(int(m.group(1)))
        with duckdb.connect(str(wh), read_only=True) as con:   # the day that nightly started
            assert m.group(2) == str(con.execute("SELECT CAST(started_at AS DATE) FROM nightlies WHERE nightly_id = $n",
                                                 {"n": seen[-1]}).fetchone()[0]), f"night {night}"
        listed = "".join(p.read_text(encoding="utf-8") for p in (out / "failing").glob("since-*.html"))
        assert re.search(rf'{FAILING_N1}</a></td>((?!</tr>).)*<td class="since">nightly #{seen[-1]} \(', listed, re.S), night
        if night in (2, 5):   # nothing changed since the night before: the page was kept
            assert page.stat().st_mtime_ns == mtime, f"night {night}"
        mtime = page.stat().st_mtime_ns
    assert seen == [1, 1, None, 4, 4]
