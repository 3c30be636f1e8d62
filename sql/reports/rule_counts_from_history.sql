-- violations_by_pass: violations per pass and rule code, for the passes $passes (a list of
-- lint_ids), and the runs with one.
SELECT lint_id, code, COUNT(*) AS n, COUNT(DISTINCT invocation_id) AS runs
FROM report_violations
WHERE lint_id IN (SELECT UNNEST($passes))
GROUP BY ALL
