"""Investigation views on hand-made rows: span_tree, run_summary, violation_messages, citations;
the derived relations as their files define them."""

from __future__ import annotations

import pytest

from groundwork.core.warehouse import connect

T0 = "TIMESTAMP '2026-09-25 10:00:00'"


@pytest.fixture
def con():
    con = connect(":memory:")
    yield con
    con.close()


def add_spans(con, run, spans):
    """spans: (name, span_id, parent_id, start offset ms, end offset ms)."""
    for ord_, (name, sid, parent, start, end) in enumerate(spans):
        con.execute(f"""INSERT INTO spans (invocation_id, ord, line_no, name, span_id, parent_id, trace_id, start_time, end_time)
                        VALUES (?, ?, ?, ?, ?, ?, 't', {T0} + INTERVAL (?) MILLISECOND, {T0} + INTERVAL (?) MILLISECOND)""",
                    [run, ord_, ord_ + 1, name, sid, parent, start, end])


def tree(con, run):
    return con.execute("""SELECT ord, name, in_tree, depth, path, duration_us, start_offset_us FROM span_tree
                          WHERE invocation_id = ? ORDER BY ord, depth""", [run]).fetchall()


def test_span_tree_depth_path_and_durations(con):
    add_spans(con, "r", [
        ("policy_gate", "p", "root", 1, 2),
        ("invoke_agent", "root", None, 0, 100),
        ("retrieval", "ret", "root", 10, 12),
        ("chat", "chat", "ret", 20, 90),
        ("retrieval", "lost", "nowhere", 5, 6),
    ])
    assert tree(con, "r") == [
        (0, "policy_gate", True, 1, "invoke_agent/policy_gate", 1000, 1000),
        (1, "invoke_agent", True, 0, "invoke_agent", 100000, 0),
        (2, "retrieval", True, 1, "invoke_agent/retrieval", 2000, 10000),
        (3, "chat", True, 2, "invoke_agent/retrieval/chat", 70000, 20000),
        (4, "retrieval", False, None, None, 1000, None),
    ]


def test_span_tree_stops_at_a_cycle_through_the_root(con):
    """docs/rules.md#gw1: a root whose parent_id names its own descendant makes the workbench loop forever."""
    add_spans(con, "c", [
        ("invoke_agent", "root", "child", 0, 10),
        ("chat", "child", "root", 1, 2),
    ])
    assert [(o, n, d) for o, n, _, d, *_ in tree(con, "c")] == [(0, "invoke_agent", 0), (1, "chat", 1)]


def test_span_tree_counts_children_of_a_duplicated_span_once_per_copy(con):
    add_spans(con, "d", [
        ("invoke_agent", "root", None, 0, 10),
        ("delegate", "dup", "root", 1, 2),
        ("delegate", "dup", "root", 1, 2),
        ("chat", "kid", "dup", 3, 4),
    ])
    rows = tree(con, "d")
    assert [r[:2] for r in rows].count((3, "chat")) == 2


def test_run_summary_takes_the_latest_pass_and_reads_the_recorded_verdicts(con):
    con.execute("""
        INSERT INTO runs (invocation_id, agent_id, grounding_mode, recorded_grounding, recorded_sources) VALUES
          ('a', 'r3', 'retrieval', 'grounding: passed [retrieval] (1 retrieval, 0 chat spans)' || chr(10),
                'sources: 1 verified, 0 unresolved' || chr(10)),
          ('b', 'r3', 'retrieval', 'grounding: FAILED [retrieval]' || chr(10) || '  - G3: x' || chr(10),
                'sources: 0 verified, 0 unresolved; FAILED' || chr(10) || '  - S1: y' || chr(10)),
          ('c', 'hello', 'none', NULL, NULL);
        INSERT INTO lints (lint_id, kind) VALUES (1, 'lint'), (2, 'verify'), (3, 'lint');
        INSERT INTO lint_verdicts (lint_id, invocation_id, status, passed, summary) VALUES
          (1, 'a', 'passed', true, 'grounding: passed [retrieval] (1 retrieval, 0 chat spans)'),
          (1, 'b', 'passed', true, 'grounding: passed [retrieval] (0 retrieval, 0 chat spans)'),
          (3, 'a', 'failed', false, 'grounding: FAILED [retrieval]' || chr(10) || '  - G1: c' || chr(10) || '  - G3: d');
        INSERT INTO verify_verdicts (lint_id, invocation_id, status, passed, summary) VALUES
          (2, 'a', 'passed', true, 'sources: 1 verified, 0 unresolved');
        INSERT INTO lint_violations VALUES (3, 'a', 0, 'G1', 'G1: c'), (3, 'a', 1, 'G3', 'G3: d'), (1, 'b', 0, 'GW1', 'old');
    """)
    rows = con.execute("""SELECT invocation_id, lint_id, lint_status, lint_violation_count, lint_codes, verify_status,
                                 recorded_lint_status, recorded_verify_status, lint_matches_recorded, verify_matches_recorded
                          FROM run_summary ORDER BY 1""").fetchall()
    assert rows == [
        ("a", 3, "failed", 2, "G1,G3", "passed", "passed", "passed", False, True),
        ("b", 1, "passed", 1, "GW1", None, "failed", "failed", False, None),
        ("c", None, None, 0, None, None, None, None, None, None),
    ]
    assert con.execute("SELECT invocation_id, check_kind, seq, code, workbench_rule, message FROM violation_messages ORDER BY 1, 3").fetchall() == [
        ("a", "lint", 0, "G1", True, "G1: c"), ("a", "lint", 1, "G3", True, "G3: d"), ("b", "lint", 0, "GW1", False, "old")]


def test_citations_join_evidence_retrievals_and_delegations(con):
    con.execute("""
        INSERT INTO runs (invocation_id, envelope_invocation_id) VALUES ('r', 'r');
        INSERT INTO payload_refs VALUES
          ('r', 0, '$.grounded_on[0]', 'ref', 'src:a', 'h1', NULL),
          ('r', 1, '$.items[0].grounded_on[0]', 'ref', 'src:b', 'h2', NULL),
          ('r', 2, '$.grounded_on[1]', 'ref', 'invocation:kid', 'hk', NULL),
          ('r', 3, '$.grounded_on[2]', 'malformed', NULL, NULL, '{"source_id": "x"}');
        INSERT INTO evidence (invocation_id, ord, source_id, content_hash, snapshot_ref, computed_hash) VALUES
          ('r', 0, 'src:a', 'h1', 'snapshot:v1', 'h1'), ('r', 1, 'src:a', 'h1', 'live', NULL);
        INSERT INTO delegations (invocation_id, ord, delegated_invocation_id, content_hash) VALUES ('r', 0, 'kid', 'hk');
    """)
    add_spans(con, "r", [("invoke_agent", "root", None, 0, 10), ("retrieval", "s1", "root", 1, 2)])
    con.execute("UPDATE spans SET dd_source_id = 'src:a', dd_content_hash = 'h1' WHERE span_id = 's1'")
    assert con.execute("""SELECT ord, kind, cites, evidence_matches, evidence_ord, snapshot_ref, evidence_content_hashes,
                                 retrieval_matches, delegation_matches FROM citations ORDER BY ord""").fetchall() == [
        (0, "ref", "record", 2, 0, "snapshot:v1", True, 1, 0),
        (1, "ref", "record", 0, None, None, None, 0, 0),
        (2, "ref", "delegation", 0, None, None, None, 0, 1),
        (3, "malformed", None, 0, None, None, None, 0, 0),
    ]


# ------------------------------------------------------------ derived relations, from their files

def test_each_derived_relation_reads_only_those_of_earlier_files():
    """The file name order of sql/schema/30_derived/ is the derivation order the lint follows."""
    from groundwork.checks import derived

    seen: set[str] = set()
    for relation in derived.RELATIONS:
        assert derived.reads(relation.body) - {relation.name} <= seen, relation.path.name
        seen.add(relation.name)
    assert derived.NAMES[0] == "lint_runs" and len(derived.NAMES) == len(set(derived.NAMES)) == 13


def test_the_warehouse_views_are_the_derived_files(con):
    from groundwork.checks import derived

    for relation in derived.RELATIONS:
        view = con.execute(f"SELECT * FROM {relation.name} LIMIT 0").description
        body = con.execute(f"SELECT * FROM ({relation.body}) AS b LIMIT 0").description
        assert [d[0] for d in view] == [d[0] for d in body], relation.name


def test_a_derived_file_that_is_not_one_view_is_refused(tmp_path):
    from groundwork.checks import derived
    from groundwork.core.errors import GroundworkError

    bad = tmp_path / "01_lint_runs.sql"
    bad.write_text("-- header\nCREATE OR REPLACE VIEW lint_other AS\nSELECT 1;\n", encoding="utf-8")
    with pytest.raises(GroundworkError, match="01_lint_runs.sql: its first statement must be CREATE OR REPLACE VIEW lint_runs AS"):
        derived.view_body(bad)
    bad.write_text("CREATE OR REPLACE VIEW lint_runs AS\nSELECT 1;\nDROP TABLE runs;\n", encoding="utf-8")
    with pytest.raises(GroundworkError, match="only COMMENT ON statements"):
        derived.view_body(bad)
    bad.write_text("-- header\nCREATE OR REPLACE VIEW lint_runs AS\nSELECT 'a;b' AS x -- c;d\n;\nCOMMENT ON VIEW lint_runs IS 'x;y';\n", encoding="utf-8")
    assert derived.view_body(bad) == "SELECT 'a;b' AS x -- c;d"  # derive() wraps bodies on lines of their own


def test_a_pass_over_some_runs_derives_and_numbers_only_them():
    """A watch batch of two runs derives two runs, numbered 1 and 2 in lint_runs' order (mode,
    then id), however many runs the warehouse holds."""
    import groundwork.ingest as ingest
    from groundwork.checks import derived
    from ingest_support import CORPUS

    con = connect(":memory:")
    ingest.ingest_archive(con, CORPUS / "runs", workers=0)
    everyone = con.execute("SELECT invocation_id, mode FROM lint_runs ORDER BY run_key").fetchall()
    some = [everyone[-1][0], everyone[0][0]]  # the last run of the whole order, then the first
    with derived.materialised(con, some) as workspace:
        workspace.wait()
        keys = con.execute(f"SELECT run_key, invocation_id FROM {workspace.schema}.lint_runs ORDER BY run_key").fetchall()
    assert len(everyone) > 50
    assert keys == [(1, everyone[0][0]), (2, everyone[-1][0])]
