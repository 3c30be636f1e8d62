-- violations_by_rule_agent_mode: the $top largest groups of the passes' violations by check,
-- rule code, agent and grounding mode (violations, runs, runs new in report_state), and in
-- groups the number of groups in all.
-- $lint, $verify: the passes; $top: how many groups.
SELECT l.kind AS check_kind, v.code, st.agent_id, st.grounding_mode AS mode,
       COUNT(*) AS violations, COUNT(DISTINCT v.invocation_id) AS runs,
       COUNT(DISTINCT v.invocation_id) FILTER (WHERE st.change = 'new') AS new_runs,
       COUNT(*) OVER () AS groups
FROM report_violations v
JOIN lints l ON l.lint_id = v.lint_id
JOIN report_state st ON st.invocation_id = v.invocation_id
WHERE v.lint_id = $lint OR v.lint_id = $verify
GROUP BY ALL
ORDER BY violations DESC, code, agent_id NULLS LAST, mode NULLS LAST
LIMIT $top
