"""Rule files: the header format, the registry, and conventions every file of sql/rules/ keeps."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from groundwork.checks import rules
from groundwork.checks.messages import TEMPLATES_DIR
from groundwork.core.errors import GroundworkError
from groundwork.core.paths import RULES_DIR
from groundwork.core.warehouse import apply_schema

ALL = rules.load_rules(kinds=rules.KINDS)
LINT = rules.load_rules()
WORKBENCH_CODES = ("G0", "E1", "G1", "G2", "G3", "G4", "R1", "R2", "R3", "N1", "D1", "D2", "D3")
CASES_DIR = Path(__file__).parent.parent / "rules"

GOOD = """-- code: G1
-- title: t
-- kind: rule
-- step: 8
-- modes: retrieval
-- needs_succeeded: false
-- order: ord
SELECT invocation_id, 1 AS ord FROM lint_judged WHERE mode = $mode
"""


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# ------------------------------------------------------------------------------- header parser


def test_header_is_parsed_into_a_rule(tmp_path):
    rule = rules.parse_rule(_write(tmp_path, "G1.sql", GOOD))
    assert (rule.code, rule.kind, rule.step, rule.modes, rule.order) == ("G1", "rule", 8, ("retrieval",), ("ord",))
    assert rule.needs_succeeded == "false"
    assert rule.params == ("mode",)
    assert rule.body.startswith("SELECT invocation_id")
    assert rule.template == "messages/G1.txt.j2"


@pytest.mark.parametrize("change, problem", [
    (("-- order: ord\n", "-- order: ord\n-- severity: error\n"), "unknown header key(s) severity"),
    (("-- title: t\n", ""), "missing header key(s) title"),
    (("-- kind: rule\n", "-- kind: check\n"), "kind 'check'"),
    (("-- modes: retrieval\n", "-- modes: retrieval, telepathy\n"), "modes"),
    (("-- needs_succeeded: false\n", "-- needs_succeeded: maybe\n"), "needs_succeeded"),
    (("-- step: 8\n", "-- step: 9\n"), "step: 1..8"),
    (("-- code: G1\n", "-- code: G5\n"), "file name must be G5.sql"),
    (("SELECT invocation_id", "DELETE FROM runs; SELECT invocation_id"), "single SELECT"),
    (("FROM lint_judged", "FROM lint_judged; SELECT 1"), "single statement"),
    (("-- order: ord\n", "-- order: ord\n-- order: ord\n"), "given twice"),
])
def test_a_bad_header_is_an_error_naming_the_file(tmp_path, change, problem):
    path = _write(tmp_path, "G1.sql", GOOD.replace(*change))
    with pytest.raises(rules.RuleFileError) as info:
        rules.parse_rule(path)
    assert str(info.value).startswith("rule file G1.sql: ")
    assert problem in str(info.value)
    assert isinstance(info.value, GroundworkError)  # the CLI turns it into one line and exit 2


def test_only_rule_files_have_a_step(tmp_path):
    text = GOOD.replace("-- kind: rule", "-- kind: finding").replace("G1", "GW9")
    with pytest.raises(rules.RuleFileError, match="only kind: rule files have a step"):
        rules.parse_rule(_write(tmp_path, "GW9.sql", text))


def test_a_split_rule_may_add_a_check_name_to_the_stem(tmp_path):
    text = GOOD.replace("-- step: 8\n", "-- step: 2\n").replace("G1", "G0")
    assert rules.parse_rule(_write(tmp_path, "G0_tree.sql", text)).code == "G0"
    with pytest.raises(rules.RuleFileError, match="file name"):
        rules.parse_rule(_write(tmp_path, "G0-tree.sql", text))


def test_registry_refuses_two_files_reporting_the_same_code_at_the_same_step(tmp_path):
    _write(tmp_path, "G1.sql", GOOD)
    _write(tmp_path, "G1_again.sql", GOOD)
    with pytest.raises(rules.RuleFileError, match="both report G1 at step 8"):
        rules.load_rules(tmp_path)


def test_parameters_are_bound_by_name_never_pasted(tmp_path):
    rule = rules.parse_rule(_write(tmp_path, "G1.sql", GOOD))
    assert rules.bind(rule, {"mode": "x'; DROP TABLE runs; --", "other": 1}) == {"mode": "x'; DROP TABLE runs; --"}
    with pytest.raises(rules.RuleFileError, match=r"no value for parameter\(s\) \$mode"):
        rules.bind(rule, {})


def test_selecting_an_unknown_code_is_an_error():
    assert [r.code for r in rules.select(LINT, ["g1"])] == ["G1"]
    with pytest.raises(GroundworkError, match="unknown rule code"):
        rules.select(LINT, ["G9"])


# ------------------------------------------------------------------------- the spec's order


def test_step8_order_contains_every_modes_list_in_order():
    for mode, codes in rules.MODE_RULES.items():
        positions = [rules.STEP8_ORDER.index(c) for c in codes]
        assert positions == sorted(positions), mode


def test_lint_rules_run_in_report_order():
    ranks = [r.rank for r in LINT]
    assert ranks == sorted(ranks)
    steps = [r.step for r in LINT if r.code == "G0"]
    assert steps == [1, 2, 3, 4, 5, 6]
    assert [r.code for r in LINT if r.kind == "finding"] == ["GW1", "GW2", "GW3", "GW4"]


# ------------------------------------------------------------------- conventions, every file


def test_every_workbench_rule_code_has_a_file():
    assert {r.code for r in LINT if r.kind == "rule"} == set(WORKBENCH_CODES)


@pytest.mark.parametrize("rule", ALL, ids=lambda r: r.stem)
def test_rule_file_runs_on_the_empty_schema(rule):
    con = duckdb.connect()
    apply_schema(con)
    con.execute(f"SELECT * FROM ({rule.body}) AS r LIMIT 0", {p: None for p in rule.params} or None)
    names = [d[0] for d in con.description]
    assert names[0] == "invocation_id"
    assert set(rule.order) <= set(names), "order columns must be result columns"


@pytest.mark.parametrize("rule", [r for r in ALL if r.code != "S0"], ids=lambda r: r.stem)
def test_every_rule_that_reports_violations_has_its_message_template(rule):
    """messages/<stem>.txt.j2 for lint rules, findings and source rules alike (S0 lists unresolved
    items, never a violation: it has no message, docs/rules.md#s0)."""
    assert rule.template == f"messages/{rule.stem}.txt.j2"
    assert (TEMPLATES_DIR / rule.template).is_file()


@pytest.mark.parametrize("rule", ALL, ids=lambda r: r.stem)
def test_every_rule_file_has_its_case_folder(rule):
    """One case folder per rule file, named by its stem (tests/rules/README.md), source rules included."""
    cases = [p.stem for p in (CASES_DIR / rule.stem).glob("*.json")]
    assert any(c.startswith("pass_") for c in cases), f"tests/rules/{rule.stem}/ needs a pass_ case"
    assert any(c.startswith("fail_") for c in cases), f"tests/rules/{rule.stem}/ needs a fail_ case"


def test_every_case_folder_belongs_to_a_rule_file():
    folders = {p.name for p in CASES_DIR.iterdir() if p.is_dir()}
    assert folders == {rule.stem for rule in ALL}


@pytest.mark.parametrize("rule", [r for r in LINT if r.kind == "rule"], ids=lambda r: r.stem)
def test_mode_rules_match_the_spec_mode_lists(rule):
    if rule.step == 8:
        assert set(rule.modes) == {m for m, codes in rules.MODE_RULES.items() if rule.code in codes}
    else:
        assert rule.modes == rules.MODES


def test_rule_files_read_only_the_derived_relations():
    tables = {"runs", "spans", "payload_refs", "evidence", "delegations"}
    for rule in LINT:
        sql = rule.body.lower()
        for table in tables - ({"runs"} if rule.code in ("GW3", "GW4") else set()):
            assert f"from {table}\n" not in sql and f"from {table} " not in sql and f"join {table} " not in sql, (rule.stem, table)


def test_ruleset_hash_changes_with_any_rule_file(tmp_path):
    path = _write(tmp_path, "G1.sql", GOOD)
    before = rules.ruleset_hash((rules.parse_rule(path),))
    path.write_text(GOOD + "\n-- comment\n", encoding="utf-8")
    assert rules.ruleset_hash((rules.parse_rule(path),)) != before
    assert rules.RULES_DIR == RULES_DIR


def test_docstring_examples():
    import doctest

    assert doctest.testmod(rules).failed == 0
