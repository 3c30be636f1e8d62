-- violations_by_rule: per check (lint, verify) and rule code, the violations of the passes, the
-- runs with one, and those of them new in report_state.
-- No parameters: the passes' violations are report_pass_violations (reports/data.py build_state).
SELECT check_kind, code,
       COUNT(*) AS violations, COUNT(DISTINCT invocation_id) AS runs,
       COUNT(DISTINCT invocation_id) FILTER (WHERE change = 'new') AS new_runs
FROM report_pass_violations
GROUP BY ALL
ORDER BY check_kind, code
