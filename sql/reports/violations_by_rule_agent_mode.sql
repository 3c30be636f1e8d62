-- violations_by_rule_agent_mode: the $top largest groups of the passes' violations by check,
-- rule code, agent and grounding mode (violations, runs, runs new in report_state), and in
-- groups the number of groups in all.
-- $top: how many groups (the passes' violations are report_pass_violations: reports/data.py build_state).
SELECT check_kind, code, agent_id, grounding_mode AS mode,
       COUNT(*) AS violations, COUNT(DISTINCT invocation_id) AS runs,
       COUNT(DISTINCT invocation_id) FILTER (WHERE change = 'new') AS new_runs,
       COUNT(*) OVER () AS groups
FROM report_pass_violations
GROUP BY ALL
ORDER BY violations DESC, code, agent_id NULLS LAST, mode NULLS LAST
LIMIT $top
