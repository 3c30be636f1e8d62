-- junit_unjudged: per agent of report_state, the runs whose verdict of check $check ('grounding':
-- the grounding verdict, 'sources': the source-check verdict) is $status (unlintable,
-- unverifiable): how many, and the first $examples invocation ids.
SELECT agent_id, COUNT(*), LIST(invocation_id ORDER BY invocation_id)[1:$examples]
FROM report_state
WHERE CASE $check WHEN 'grounding' THEN g_status WHEN 'sources' THEN s_status END = $status
GROUP BY agent_id
