"""When a recorded check pass still holds: the one definition of "nothing changed" since a pass.

A pass's verdicts depend on the rows of the runs (an ingest that loads a run gives it a new,
larger ``runs.ingest_id``; one that marks a run missing or back changes what its delegating
runs' GW3/GW4 findings see) and on the checks themselves (the rule files, templates and code:
``lints.ruleset_hash``; the groundwork version; for the source check, the sources
configuration: ``lints.config_id``). Each pass records the latest ingest when it read the runs
(``lints.ingest_id``) and each ingest how many runs it changed (``ingests.runs_changed``), so
"nothing changed since the pass" is read from a few rows of ``ingests`` and ``lints``, without
looking at any run:

- every ingest after the pass's finished and changed no run (``runs_changed`` 0: an unfinished
  ingest, or one an older groundwork recorded, counts as a change);
- the pass judged every run (``all_runs``) and, for a lint pass, applied every rule;
- no pass of the same kind recorded since gives some run a verdict under other checks (another
  rule set, groundwork version or sources configuration): ``latest_lint`` / ``latest_verify``
  read each run's latest pass, so pointing back at an older one would not make it today's.

Rows written to the run tables by anything but an ingest (``load_single``: the drop-in's
in-memory warehouse) are not seen here; no warehouse file holds them.
"""

from __future__ import annotations

from groundwork.core.engine import duckdb

# An ingest after ingest {after} that changed a run, or may have (unfinished, or not counted).
_CHANGED_AFTER = ("SELECT 1 FROM ingests i WHERE i.ingest_id > {after}"
                  " AND (i.finished_at IS NULL OR coalesce(i.runs_changed, 1) <> 0)")

_CURRENT_SQL = f"""
WITH pass AS (
    SELECT lint_id, ingest_id, ruleset_hash, tool_version, config_id FROM lints
    WHERE kind = $kind AND all_runs AND coalesce(all_rules, true) AND ruleset_hash = $ruleset
      AND tool_version = $tool_version AND config_id IS NOT DISTINCT FROM $config_id
    ORDER BY lint_id DESC LIMIT 1)
SELECT p.lint_id FROM pass p
WHERE p.ingest_id IS NOT NULL
  AND NOT EXISTS ({_CHANGED_AFTER.format(after="p.ingest_id")})
  AND NOT EXISTS (SELECT 1 FROM lints l WHERE l.kind = $kind AND l.lint_id > p.lint_id
                  AND coalesce(l.all_rules, true)
                  AND (l.ruleset_hash IS DISTINCT FROM p.ruleset_hash OR l.tool_version IS DISTINCT FROM p.tool_version
                       OR l.config_id IS DISTINCT FROM p.config_id))
"""


def latest_ingest(con: duckdb.DuckDBPyConnection) -> int | None:
    """The latest ingest's id (what a pass records as ``lints.ingest_id``); None before any."""
    return con.execute("SELECT max(ingest_id) FROM ingests").fetchall()[0][0]


def current_pass(con: duckdb.DuckDBPyConnection, kind: str, ruleset_hash: str, tool_version: str,
                 config_id: int | None = None) -> int | None:
    """The recorded pass of ``kind`` (lint or verify) that still holds for every run of the
    warehouse under these checks, or None (see the module's definition)."""
    rows = con.execute(_CURRENT_SQL, {"kind": kind, "ruleset": ruleset_hash, "tool_version": tool_version,
                                      "config_id": config_id}).fetchall()
    return rows[0][0] if rows else None


def runs_changed_since(con: duckdb.DuckDBPyConnection, ingest_id: int | None) -> bool:
    """Whether some ingest after ``ingest_id`` changed a run, or may have (unfinished, or not
    counted); True for None (nothing known)."""
    if ingest_id is None:
        return True
    return con.execute(f"SELECT EXISTS ({_CHANGED_AFTER.format(after='$id')})", {"id": ingest_id}).fetchall()[0][0]
