-- violations_by_pass: violations per pass and rule code, for the passes $passes (a list of
-- lint_ids).
SELECT lint_id, code, COUNT(*) AS n
FROM report_violations
WHERE lint_id IN (SELECT UNNEST($passes))
GROUP BY ALL
