-- runs_by_change: the first $top runs of report_state in change class $change (new, still,
-- resolved, gone), most recently completed first.
SELECT invocation_id, agent_id, grounding_mode AS mode, completed_at, codes, change,
       g_status, s_status, gb_status, sb_status, verdict_changed
FROM report_state WHERE change = $change
ORDER BY completed_at DESC NULLS LAST, invocation_id
LIMIT $top
