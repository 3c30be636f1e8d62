-- trend_rules_by_completion: per slot of $width (an interval) of run completion, from $since on,
-- and rule code: the runs of report_state with a violation of it in pass $lint or $verify.
SELECT time_bucket(CAST($width AS INTERVAL), st.completed_at) AS slot, v.code, COUNT(DISTINCT v.invocation_id) AS runs
FROM report_violations v JOIN report_state st USING (invocation_id)
WHERE (v.lint_id = $lint OR v.lint_id = $verify) AND st.completed_at >= $since
GROUP BY ALL
