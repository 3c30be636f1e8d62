"""The derived relations a warehouse file keeps between lints (schema lint_store).

store.keep_derived builds lint_store (after a lint has answered, or after an ingest); a full lint
of a warehouse file then reads the derived relations of docs/rules.md#derived-relations from it instead of deriving them
again; only runs that are new, reloaded (another runs.ingest_id), removed or without an ingest_id
are derived again, and a store built with other derived views is not read (keep_derived builds
it again).
The oracle everywhere is a lint of the same archive in a fresh in-memory warehouse (which derives
everything for the pass and keeps nothing). To see that a run's relations were (not) derived
again, a test alters a kept row by hand: a run read from the store shows the altered count.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings

import groundwork.ingest as ingest
from groundwork.checks.lint import lint_warehouse
from groundwork.checks import derived, store
from groundwork.checks.store import keep_derived
from groundwork.core.paths import DERIVED_DIR
from groundwork.core.warehouse import connect, size_bytes
from ingest_support import CORPUS
from property_support import disagreements, reference_lint, sql_lint_verdicts
from strategies import archives, write_archive

EXPECTED = {d["scenario"]: d for d in map(json.loads, (CORPUS / "expected.jsonl").read_text(encoding="utf-8").splitlines())}
A = EXPECTED["violation/N1/none-calls-a-model"]["invocation_id"]
B = EXPECTED["violation/R3/input_only-no-evidence"]["invocation_id"]
C = EXPECTED["pass/retrieval/one-source"]["invocation_id"]
RUN_TABLES = ("runs", "spans", "payload_refs", "evidence", "delegations", "ingest_issues", "run_files")


def oracle(runs_dir: Path) -> dict:
    con = connect(":memory:")
    try:
        ingest.ingest_archive(con, runs_dir)
        return lint_warehouse(con, reuse=False, record=False).by_id()
    finally:
        con.close()


def lint(con, **kwargs) -> dict:
    return lint_warehouse(con, reuse=False, **kwargs).by_id()


TAMPER = 7  # what tamper() adds to a run's kept chat count


def tamper(con, *runs: str) -> None:
    """Alter the kept chat count of these runs (the verdict prints it)."""
    for run in runs:
        con.execute("UPDATE lint_store.lint_counts SET chat_count = chat_count + ? WHERE invocation_id = ?", [TAMPER, run])


def lint_reading(con, archive: Path, *, kept: str, fresh: tuple[str, ...]) -> dict:
    """Lint: each run of ``fresh`` must get the oracle's verdict (derived again), the tampered
    run ``kept`` its kept relations (chat count TAMPER higher). Returns the oracle's verdicts."""
    want = oracle(archive)
    got = lint(con)
    for run in fresh:
        assert got[run] == want[run]
    assert got[kept].chat_count == want[kept].chat_count + TAMPER  # unchanged run: kept relations
    return want


def reloaded_by_hand(con, runs: int) -> None:
    """Record an ingest that changed ``runs`` runs, as the one that reloads them does
    (ingests.runs_changed): keep_derived compares the runs with the store only after one."""
    con.execute("INSERT INTO ingests (ingest_id, runs_dir, started_at, finished_at, runs_changed) "
                "SELECT max(ingest_id) + 1, 'by hand', now(), now(), $n FROM ingests", {"n": runs})


def store_rows(con) -> dict:
    names = [r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() WHERE schema_name = 'lint_store' ORDER BY 1").fetchall()]
    return {name: sorted(con.execute(f"SELECT * FROM lint_store.{name}").fetchall(), key=repr) for name in names}


@pytest.fixture
def archive(tmp_path) -> Path:
    runs = tmp_path / "runs"
    for run in (A, B, C):
        shutil.copytree(CORPUS / "runs" / run, runs / run)
    return runs


@pytest.fixture
def warehouse(tmp_path, archive):
    con = connect(tmp_path / "w.duckdb")
    ingest.ingest_archive(con, archive)
    yield con
    con.close()


def has_store(con) -> bool:
    return con.execute("SELECT count(*) FROM duckdb_schemas() WHERE schema_name = 'lint_store'").fetchall() == [(1,)]


def test_a_lint_never_builds_the_store_keep_derived_does_and_the_next_lint_reads_it(warehouse, archive):
    want = oracle(archive)
    assert lint(warehouse) == want
    assert not has_store(warehouse)
    assert keep_derived(warehouse) == "built"
    assert keep_derived(warehouse) == "fresh"
    assert warehouse.execute("SELECT count(*) FROM lint_store.derived_runs").fetchall() == [(3,)]
    assert store_rows(warehouse)["lint_judged"] == sorted(warehouse.execute("SELECT * FROM main.lint_judged").fetchall(), key=repr)
    tamper(warehouse, A)
    got = lint(warehouse, record=False)
    assert got[A].chat_count == want[A].chat_count + TAMPER  # read from the store, not derived again
    assert got[B] == want[B]


def test_keep_derived_compares_no_run_while_no_ingest_changed_one(warehouse, archive, monkeypatch):
    """keep_derived remembers the latest ingest it brought the store up to date after; while every
    ingest since changed no run (ingests.runs_changed 0) it answers fresh without comparing the
    runs with the store, and once one did, it derives the changed run again."""
    assert keep_derived(warehouse) == "built"
    compared = []
    real = store._changed_runs
    monkeypatch.setattr(store, "_changed_runs", lambda con: compared.append(1) or real(con))
    ingest.ingest_archive(warehouse, archive)   # nothing changed
    assert keep_derived(warehouse) == "fresh" and compared == []
    envelope = archive / A / "envelope.json"
    doc = json.loads(envelope.read_text(encoding="utf-8"))
    doc["grounding_mode"] = "retrieval"
    envelope.write_text(json.dumps(doc), encoding="utf-8")
    ingest.ingest_archive(warehouse, archive)
    assert keep_derived(warehouse) == "refreshed" and compared == [1]
    assert keep_derived(warehouse) == "fresh" and compared == [1]
    # An ingest that did not finish may have changed runs: compared again.
    warehouse.execute("INSERT INTO ingests (ingest_id, runs_dir, started_at) SELECT max(ingest_id) + 1, 'x', now() FROM ingests")
    assert keep_derived(warehouse) == "fresh" and compared == [1, 1]
    assert lint(warehouse) == oracle(archive)


def test_the_nightlys_lint_keeps_what_it_derived_for_the_changed_runs(warehouse, archive, monkeypatch):
    """lint_warehouse(keep_store=True), judging only a reloaded run, puts the relations it
    derived for it in the store: keep_derived then has nothing to compare or derive, and a full
    lint reads the store (the unchanged run's tampered rows kept, the reloaded run's new ones)."""
    lint_warehouse(warehouse)
    assert keep_derived(warehouse) == "built"
    tamper(warehouse, B)
    envelope = archive / A / "envelope.json"
    doc = json.loads(envelope.read_text(encoding="utf-8"))
    doc["grounding_mode"] = "retrieval"
    envelope.write_text(json.dumps(doc), encoding="utf-8")
    ingest.ingest_archive(warehouse, archive)
    judged = lint_warehouse(warehouse, keep_store=True)
    assert judged.reused == 2   # only A judged
    compared = []
    monkeypatch.setattr(store, "_changed_runs", lambda con: compared.append(1))
    assert keep_derived(warehouse) == "fresh" and compared == []
    monkeypatch.undo()
    assert store._changed_runs(warehouse).num_rows == 0
    lint_reading(warehouse, archive, kept=B, fresh=(A, C))
    # Without keep_store the store is left as it was.
    doc["grounding_mode"] = "input_only"
    envelope.write_text(json.dumps(doc), encoding="utf-8")
    ingest.ingest_archive(warehouse, archive)
    lint_warehouse(warehouse)
    assert store._changed_runs(warehouse).column("invocation_id").to_pylist() == [A]


def test_keep_derived_builds_under_a_memory_cap_and_restores_the_setting(warehouse):
    def limit() -> str:
        return warehouse.execute("SELECT CAST(current_setting('memory_limit') AS VARCHAR)").fetchall()[0][0]

    def about(a: str, b: str) -> bool:
        return abs(size_bytes(a) / size_bytes(b) - 1) < 0.05

    seen = []
    real_start = store._start_store
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setattr(store, "_start_store", lambda con, target: (seen.append(limit()), real_start(con, target)))
    try:
        before = limit()  # DuckDB's default
        assert keep_derived(warehouse) == "built"
        assert seen == ["256.0 MiB"] and about(limit(), before)
        warehouse.execute("SET memory_limit = '3GB'")  # the user's
        before = limit()
        warehouse.execute("DROP SCHEMA lint_store CASCADE")
        assert keep_derived(warehouse) == "built"
        assert seen[-1] == "256.0 MiB" and limit() == before
        warehouse.execute("SET memory_limit = '100MB'")  # lower than the cap: left alone
        before = limit()
        warehouse.execute("DROP SCHEMA lint_store CASCADE")
        assert keep_derived(warehouse) == "built"
        assert seen[-1] == before and limit() == before
    finally:
        monkeypatch.undo()


def test_a_reloaded_run_is_derived_again_and_alone(warehouse, archive):
    keep_derived(warehouse)
    tamper(warehouse, A, B)
    envelope = archive / A / "envelope.json"
    doc = json.loads(envelope.read_text(encoding="utf-8"))
    doc["grounding_mode"] = "retrieval"
    envelope.write_text(json.dumps(doc), encoding="utf-8")
    ingest.ingest_archive(warehouse, archive)
    want = lint_reading(warehouse, archive, kept=B, fresh=(A, C))
    assert want[A].mode == "retrieval"


def test_a_new_run_is_derived_alone_with_a_key_of_its_own(warehouse, archive):
    keep_derived(warehouse)
    tamper(warehouse, B)
    # a run whose id sorts before a kept one: derived alone, its row number is a kept run's key
    new = min(p.name for p in (CORPUS / "runs").iterdir() if p.is_dir() and p.name not in (A, B, C))
    assert new < max(A, B, C)
    shutil.copytree(CORPUS / "runs" / new, archive / new)
    ingest.ingest_archive(warehouse, archive)
    lint_reading(warehouse, archive, kept=B, fresh=(new, A, C))
    assert warehouse.execute("SELECT count(DISTINCT run_key), count(*) FROM lint_store.lint_runs").fetchall() == [(4, 4)]


def test_when_many_runs_changed_the_lint_derives_for_itself_and_keep_derived_catches_up(warehouse, archive, monkeypatch):
    monkeypatch.setattr(store, "REFRESH_FLOOR", 0)
    keep_derived(warehouse)
    tamper(warehouse, B)
    warehouse.execute("UPDATE runs SET ingest_id = ingest_id + 100 WHERE invocation_id = ?", [A])  # 1 of 3: > 10 %
    reloaded_by_hand(warehouse, 1)
    before = store_rows(warehouse)
    want = oracle(archive)
    assert lint(warehouse) == want  # B read from the runs, not from the (altered) store
    assert store_rows(warehouse) == before
    assert keep_derived(warehouse) == "refreshed"  # 1 of 3: not over half, derived again alone
    assert lint(warehouse)[B].chat_count == want[B].chat_count + TAMPER
    warehouse.execute("UPDATE runs SET ingest_id = ingest_id + 100 WHERE invocation_id <> ?", [C])  # 2 of 3
    reloaded_by_hand(warehouse, 2)
    assert keep_derived(warehouse) == "built"
    assert lint(warehouse) == want


def test_a_changed_run_is_derived_again_even_when_the_counts_of_runs_agree(warehouse, archive):
    # As many runs and the same largest ingest_id as when the store was kept: the lint starts
    # on the store, sees the one run whose ingest_id differs and derives it again.
    keep_derived(warehouse)
    assert warehouse.execute("SELECT count(DISTINCT ingest_id) FROM runs").fetchall() == [(1,)]
    assert store.store_runs_agree(warehouse) == 3
    tamper(warehouse, A, B)
    warehouse.execute("UPDATE runs SET ingest_id = ingest_id - 1 WHERE invocation_id = ?", [A])
    assert store.store_runs_agree(warehouse) == 3
    lint_reading(warehouse, archive, kept=B, fresh=(A, C))


def test_a_removed_run_leaves_the_store(warehouse, archive):
    keep_derived(warehouse)
    for table in RUN_TABLES:
        warehouse.execute(f"DELETE FROM {table} WHERE invocation_id = ?", [A])
    got = lint(warehouse)
    shutil.rmtree(archive / A)
    assert got == oracle(archive)
    for name, rows in store_rows(warehouse).items():
        if name != "derived_state":
            assert not any(A in row for row in rows), name


def test_a_run_without_ingest_id_is_derived_on_every_lint(warehouse, archive):
    warehouse.execute("UPDATE runs SET ingest_id = NULL WHERE invocation_id = ?", [A])
    keep_derived(warehouse)
    tamper(warehouse, A, B)
    lint_reading(warehouse, archive, kept=B, fresh=(A,))


def outdated_store_is_ignored_then_rebuilt(warehouse, archive) -> None:
    want = oracle(archive)
    assert lint(warehouse) == want  # derived for the pass, the store left aside
    assert keep_derived(warehouse) == "built"
    assert lint(warehouse) == want
    assert keep_derived(warehouse) == "fresh"


def test_a_change_to_the_derived_views_rebuilds_every_run(warehouse, archive, tmp_path, monkeypatch):
    keep_derived(warehouse)
    tamper(warehouse, A, B, C)
    # Another groundwork's derived relations: lint_counts' file says the same rows differently.
    files = tmp_path / "30_derived"
    shutil.copytree(DERIVED_DIR, files)
    counts = next(files.glob("*_lint_counts.sql"))
    select = derived.view_body(counts)
    counts.write_text(f"CREATE OR REPLACE VIEW lint_counts AS\nSELECT * FROM ({select}) AS same_rows;\n", encoding="utf-8")
    monkeypatch.setattr(derived, "RELATIONS", derived.load_relations(files))
    outdated_store_is_ignored_then_rebuilt(warehouse, archive)


def test_an_interrupted_build_is_done_again(warehouse, archive):
    keep_derived(warehouse)
    tamper(warehouse, A)
    warehouse.execute("DELETE FROM lint_store.derived_state")  # as if the build died before the end
    outdated_store_is_ignored_then_rebuilt(warehouse, archive)


def test_a_kept_relation_dropped_by_hand_rebuilds_the_store(warehouse, archive):
    keep_derived(warehouse)
    tamper(warehouse, A)
    warehouse.execute("DROP TABLE lint_store.lint_tree")
    outdated_store_is_ignored_then_rebuilt(warehouse, archive)


def test_a_lint_of_some_runs_derives_them_apart_and_leaves_the_store_alone(warehouse, archive):
    keep_derived(warehouse)
    tamper(warehouse, A)
    before = store_rows(warehouse)
    got = lint(warehouse, runs=[A])
    assert got == {A: oracle(archive)[A]}
    assert store_rows(warehouse) == before


def test_a_read_only_warehouse_lints_without_a_store(tmp_path, archive):
    path = tmp_path / "ro.duckdb"
    con = connect(path)
    ingest.ingest_archive(con, archive)
    con.close()
    con = connect(path, read_only=True)
    try:
        assert lint(con, record=False) == oracle(archive)
        assert keep_derived(con) == "unavailable"
        assert not has_store(con)
    finally:
        con.close()


def test_the_corpus_through_the_store_is_linted_as_in_memory(tmp_path):
    want = oracle(CORPUS / "runs")
    con = connect(tmp_path / "corpus.duckdb")
    try:
        ingest.ingest_archive(con, CORPUS / "runs")
        assert lint(con) == want  # no store yet
        assert keep_derived(con) == "built"
        assert lint(con) == want  # reads it
        listed = [v.invocation_id for v in lint_warehouse(con, reuse=False, record=False).verdicts]
        assert listed == sorted(want)  # verdicts come in invocation_id order
    finally:
        con.close()


@settings(max_examples=max(4, settings.default.max_examples // 3))
@given(archives())
def test_lints_through_the_store_agree_with_the_reference(runs):
    expected = {run.name: reference_lint(run) for run in runs}
    with tempfile.TemporaryDirectory() as tmp:
        root = write_archive(runs, Path(tmp) / "runs")
        con = connect(Path(tmp) / "w.duckdb")
        try:
            ingest.ingest_archive(con, root)
            for _ in range(2):  # derived for the pass, then read from the store
                actual = sql_lint_verdicts(con, lint_warehouse(con, reuse=False).lint_id)
                problems = disagreements(runs, expected, actual)
                assert not problems, f"{len(problems)} of {len(runs)} runs disagree; first:\n{problems[0]}"
                keep_derived(con)
        finally:
            con.close()
