-- violations_by_rule_mode: the passes' violations per rule code and grounding mode ('(none)' for
-- runs without one).
-- No parameters: the passes' violations are report_pass_violations (reports/data.py build_state).
SELECT code, COALESCE(grounding_mode, '(none)') AS mode, COUNT(*) AS violations
FROM report_pass_violations
GROUP BY ALL
