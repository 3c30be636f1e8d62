-- metrics_violations: the passes' violations (report_pass_violations: reports/data.py
-- build_state) counted by check kind (lints.kind), rule code, agent and grounding mode
-- (report_state's).
SELECT check_kind, code, agent_id, grounding_mode, COUNT(*)
FROM report_pass_violations
GROUP BY ALL
