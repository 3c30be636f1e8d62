-- totals_violations: one row: the violations (and groundwork findings) of the lint pass and of
-- the verify pass.
-- $lint, $verify: the passes.
SELECT
    COUNT(*) FILTER (WHERE lint_id = $lint) AS lint_violations,
    COUNT(*) FILTER (WHERE lint_id = $verify) AS verify_violations
FROM report_violations WHERE lint_id = $lint OR lint_id = $verify
