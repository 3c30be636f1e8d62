-- violations_by_rule_mode: the passes' violations per rule code and grounding mode ('(none)' for
-- runs without one).
-- $lint, $verify: the passes.
SELECT v.code, COALESCE(st.grounding_mode, '(none)') AS mode, COUNT(*) AS violations
FROM report_violations v
JOIN report_state st ON st.invocation_id = v.invocation_id
WHERE v.lint_id = $lint OR v.lint_id = $verify
GROUP BY ALL
