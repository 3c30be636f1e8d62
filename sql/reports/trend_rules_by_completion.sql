-- trend_rules_by_completion: per slot of $width (an interval) of run completion, from $since to $last (completion_range),
-- and rule code: the runs of report_state with a violation of it in the passes
-- (report_pass_violations: reports/data.py build_state).
SELECT time_bucket(CAST($width AS INTERVAL), completed_at) AS slot, code, COUNT(DISTINCT invocation_id) AS runs
FROM report_pass_violations
WHERE completed_at BETWEEN $since AND $last
GROUP BY ALL
