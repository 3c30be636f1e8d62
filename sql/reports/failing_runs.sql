-- failing_runs: the failing runs of report_state, new first, then most recently completed first;
-- $limit of them from $offset (NULL $limit: all).
SELECT invocation_id, agent_id, grounding_mode AS mode, completed_at, codes, violations,
       g_status, s_status, change, verdict_changed
FROM report_state
WHERE failing
ORDER BY (change = 'new') DESC, completed_at DESC NULLS LAST, invocation_id
LIMIT $limit OFFSET $offset
