"""A lint verdict of one run (``RunVerdict``) and the per-run query every lint pass starts
from (``base_sql``: lintable, reason, mode and counts), for groundwork.checks.lint (many runs,
column by column in Arrow) and groundwork.checks.onerun (the drop-in's one run, without Arrow).
"""

from __future__ import annotations

from dataclasses import dataclass, field

PASSED, FAILED, UNLINTABLE = "passed", "failed", "unlintable"
CYCLE_REASON = "span-id cycle reachable from invoke_agent: the workbench linter never returns (docs/rules.md#gw1)"


@dataclass(slots=True)
class RunVerdict:
    """One run's verdict: the workbench's report (docs/rules.md#grounding-text) plus groundwork's findings."""

    invocation_id: str
    status: str
    mode: str | None
    retrieval_count: int
    chat_count: int
    violations: list[str] = field(default_factory=list)
    codes: list[str] = field(default_factory=list)
    findings: list[tuple[str, str]] = field(default_factory=list)
    summary: str | None = None
    reason: str | None = None

    @property
    def passed(self) -> bool:
        return self.status == PASSED

    @property
    def grounding_txt(self) -> str | None:
        """Exact grounding.txt content (None when the workbench could not lint the run)."""
        return None if self.summary is None else self.summary + "\n"

    def report(self) -> dict:
        """The workbench's report object (docs/rules.md#grounding-text) plus status, reason and findings."""
        return {
            "invocation_id": self.invocation_id,
            "passed": self.passed,
            "mode": self.mode,
            "violations": list(self.violations),
            "retrieval_count": self.retrieval_count,
            "chat_count": self.chat_count,
            "status": self.status,
            "reason": self.reason,
            "findings": [message for _, message in self.findings],
        }


# A run is unlintable when ingest found a crash whatever step the workbench stops at
# (runs.lintable), when its span walk never ends (lint_cycles), or when the workbench gets past
# its early stops and then reads an envelope value it crashes on (lint_judged.crash_reason,
# docs/rules.md#early-stops): a run stopped at step 1 or 3 gets its report whatever those hold.
BASE_SQL = """
SELECT r.invocation_id,
       r.lintable AND c.invocation_id IS NULL AND j.crash_reason IS NULL AS lintable,
       CASE WHEN NOT r.lintable THEN coalesce(r.unlintable_reason, 'unlintable')
            WHEN c.invocation_id IS NOT NULL THEN $cycle_reason
            ELSE j.crash_reason END AS reason,
       CASE WHEN r.grounding_mode_truthy THEN r.grounding_mode END AS mode,
       coalesce(n.retrieval_count, 0) AS retrieval_count,
       coalesce(n.chat_count, 0) AS chat_count,
       r.ingest_id,
       x.context_key{kept}
FROM runs r
LEFT JOIN lint_cycles c USING (invocation_id)
LEFT JOIN lint_judged j USING (invocation_id)
LEFT JOIN lint_counts n USING (invocation_id)
LEFT JOIN {context} x USING (invocation_id)
{kept_join}{where}
"""


def base_sql() -> str:
    """The per-run query of a full pass (every run): lintable, reason, mode and counts; binds
    ``$cycle_reason`` (CYCLE_REASON)."""
    return BASE_SQL.format(where="", kept="", kept_join="", context="lint_context")
