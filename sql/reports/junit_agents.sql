-- junit_agents: the agents of report_state with runs judged by check $check ('grounding': a
-- grounding verdict, 'sources': a source-check verdict), by id (NULL last).
SELECT DISTINCT agent_id
FROM report_state
WHERE CASE $check WHEN 'grounding' THEN g_status WHEN 'sources' THEN s_status END IS NOT NULL
ORDER BY agent_id NULLS LAST
