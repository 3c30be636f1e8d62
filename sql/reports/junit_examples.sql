-- junit_examples: per rule code and agent of report_state, the first $examples violations of check
-- pass $pass_id (by invocation id, then sequence number): code, agent, invocation id, message.
SELECT code, agent_id, invocation_id, message FROM (
    SELECT v.code, st.agent_id, v.invocation_id, v.message,
           ROW_NUMBER() OVER (PARTITION BY v.code, st.agent_id ORDER BY v.invocation_id, v.seq) AS rk
    FROM report_violations v JOIN report_state st USING (invocation_id)
    WHERE v.lint_id = $pass_id)
WHERE rk <= $examples
ORDER BY code, agent_id, rk
