-- trend_agents_by_completion: per slot of $width (an interval) of run completion, from $since to $last (completion_range),
-- and agent of $agents (the runs without an agent too when $null_agent): the runs of
-- report_state judged now and those failing.
SELECT time_bucket(CAST($width AS INTERVAL), completed_at) AS slot, agent_id, COUNT(*) AS runs,
       COUNT(*) FILTER (WHERE failing) AS failing
FROM report_state
WHERE (g_status IS NOT NULL OR s_status IS NOT NULL) AND completed_at BETWEEN $since AND $last
  AND (agent_id IN (SELECT UNNEST($agents)) OR (agent_id IS NULL AND $null_agent))
GROUP BY ALL
