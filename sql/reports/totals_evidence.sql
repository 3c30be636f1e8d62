-- totals_evidence: one row: evidence items the verify pass verified against a pinned copy, and
-- those without an independent copy.
-- $verify: the verify pass.
SELECT COALESCE(SUM(verified), 0) AS evidence_verified, COALESCE(SUM(unresolved_count), 0) AS evidence_unresolved
FROM verify_verdicts WHERE lint_id = $verify
