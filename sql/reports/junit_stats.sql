-- junit_stats: per rule code and agent of report_state, the violations check pass $pass_id found and
-- the runs with one.
SELECT v.code, st.agent_id, COUNT(*), COUNT(DISTINCT v.invocation_id)
FROM report_violations v JOIN report_state st USING (invocation_id)
WHERE v.lint_id = $pass_id
GROUP BY ALL
