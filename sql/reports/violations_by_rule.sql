-- violations_by_rule: per check (lint, verify) and rule code, the violations of the passes, the
-- runs with one, and those of them new in report_state.
-- $lint, $verify: the passes.
SELECT l.kind AS check_kind, v.code,
       COUNT(*) AS violations, COUNT(DISTINCT v.invocation_id) AS runs,
       COUNT(DISTINCT v.invocation_id) FILTER (WHERE st.change = 'new') AS new_runs
FROM report_violations v
JOIN lints l ON l.lint_id = v.lint_id
JOIN report_state st ON st.invocation_id = v.invocation_id
WHERE v.lint_id = $lint OR v.lint_id = $verify
GROUP BY ALL
ORDER BY check_kind, code
