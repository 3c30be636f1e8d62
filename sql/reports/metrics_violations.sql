-- metrics_violations: the violations of passes $lint and $verify counted by check kind (lints.kind),
-- rule code, agent and grounding mode (report_state's).
SELECT l.kind, v.code, st.agent_id, st.grounding_mode, COUNT(*)
FROM report_violations v JOIN lints l ON l.lint_id = v.lint_id
JOIN report_state st USING (invocation_id)
WHERE v.lint_id = $lint OR v.lint_id = $verify
GROUP BY ALL
