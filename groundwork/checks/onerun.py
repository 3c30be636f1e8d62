"""The lint of a warehouse holding one run (the drop-in `groundwork lint SPANS ENVELOPE`): the
same rule files, derived relations, base query and message templates as groundwork.checks.lint,
on one connection, without Arrow or worker threads: the derived relations one statement each,
then the base query and every rule file together as one statement (``one_statement``).

``lint_warehouse`` judges many runs column by column in Arrow (pyarrow.compute), in a private
attached database, with two worker threads; for one run in a process of its own, importing
pyarrow and starting those threads costs more than the lint itself. Here the derived relations
are tables of the (throwaway, in-memory) warehouse itself, and the verdict is built from the
one run's rows as ``checks.lint._assemble`` builds each run's: the workbench's violations of a
run it cannot lint are not reported (its findings are), a lintable run with a violation fails,
and its grounding.txt is the grounding template's text (tests/cli/test_dropin.py checks the
text against the workbench's on every corpus run and against lint_warehouse's on every rule case).
"""

from __future__ import annotations


from groundwork.checks import derived, rules as rules_mod
from groundwork.checks.messages import grounding_text, render_rows
from groundwork.checks.verdicts import CYCLE_REASON, FAILED, PASSED, UNLINTABLE, RunVerdict, base_sql
from groundwork.core.engine import duckdb


def derive(con) -> None:
    """Create the derived relations (docs/rules.md#derived-relations) in ``con``'s own schema,
    over every run it holds: tables, except the cheap views a lint also leaves as views."""
    for relation in derived.RELATIONS:
        kind = "TABLE" if relation.name in derived.MATERIALISE else "VIEW"
        con.execute(f"CREATE {kind} {relation.name} AS\n{relation.body}")


def _as_list(rule: rules_mod.Rule, alias: str) -> str:
    """A scalar subquery: the rows of ``rule`` as one list of structs (one per row, its fields
    the rule's result columns), in the order ``Rule.sorted_sql`` gives them; NULL when none."""
    keys = ", ".join(f"{alias}.{column}" for column in ("invocation_id",) + rule.order)
    return f"(SELECT list({alias} ORDER BY {keys}) FROM (\n{rule.body}\n) AS {alias})"


def one_statement(chosen: tuple[rules_mod.Rule, ...]) -> str:
    """One SELECT of one row holding the base query's rows (column 0) and each rule's (column
    i + 1 for ``chosen[i]``), each a list of structs: on one run's few rows, DuckDB's fixed cost
    per statement (a transaction, a result, a call from Python) is a fair share of a rule's, so
    the drop-in runs the base query and its ~20 rule files as one statement. Each rule file's
    body is used as it is (the same SELECT any lint runs); the combination is DuckDB's SQL."""
    columns = [f"(SELECT list(base) FROM (\n{base_sql()}\n) AS base)"]
    columns += [_as_list(rule, f"rule_{i}") for i, rule in enumerate(chosen)]
    return "SELECT " + ",\n".join(columns)


def _rows(found: list[dict] | None) -> tuple[list[str], list[tuple]]:
    """(column names, rows as tuples) of one column of ``one_statement``'s row."""
    if not found:
        return [], []
    return list(found[0]), [tuple(row.values()) for row in found]


def _results(con, chosen: tuple[rules_mod.Rule, ...]) -> tuple[list[tuple], list]:
    """The base query's rows and each rule's (column names, rows), by one statement; a rule
    file DuckDB refuses is named by running the rules one by one (``rules.run``)."""
    params = {"cycle_reason": CYCLE_REASON}
    for rule in chosen:
        params.update(rules_mod.bind(rule, None))
    try:
        row = con.execute(one_statement(chosen), params).fetchone()
    except duckdb.Error:
        found = [rules_mod.run(con, rule) for rule in chosen]  # raises RuleFileError naming the file
        return con.execute(base_sql(), {"cycle_reason": CYCLE_REASON}).fetchall(), found
    return _rows(row[0])[1], [_rows(found) for found in row[1:]]


def lint_one(con, invocation_id: str, chosen: tuple[rules_mod.Rule, ...] | None = None) -> RunVerdict:
    """The lint verdict of run ``invocation_id``, the only run of the warehouse ``con`` (whose
    schema holds the run tables and the relations the rules read besides the derived ones), by
    the rules ``chosen`` (every rule file's, in report order: ``rules.load_rules()``, when None)."""
    chosen = rules_mod.load_rules() if chosen is None else chosen
    derive(con)
    base, found = _results(con, chosen)
    if len(base) != 1 or base[0][0] != invocation_id:
        raise ValueError(f"lint_one: the warehouse must hold run {invocation_id!r} alone")
    _, lintable, reason, mode, n_retrieval, n_chat, _, _ = base[0]
    lintable = bool(lintable)
    verdict = RunVerdict(invocation_id, PASSED, mode, n_retrieval if lintable else 0, n_chat if lintable else 0,
                         reason=reason)
    for rule, (columns, rows) in zip(chosen, found):
        finding = rule.kind != "rule"
        if not rows or not (lintable or finding):
            continue
        for text in render_rows(rule.template, columns, rows):
            if finding:
                verdict.findings.append((rule.code, text))
            else:
                verdict.codes.append(rule.code)
                verdict.violations.append(text)
    if not lintable:
        verdict.status = UNLINTABLE
        return verdict
    failing = bool(verdict.violations)
    verdict.status = FAILED if failing else PASSED
    text = grounding_text(not failing, mode, verdict.retrieval_count, verdict.chat_count, list(verdict.violations))
    verdict.summary = text[:-1]
    return verdict
