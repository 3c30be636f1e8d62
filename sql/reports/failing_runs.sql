-- failing_runs: the failing runs of report_state, the latest failing streaks first (the nightly
-- they have been failing since, newest first: the runs new tonight lead), then most recently
-- completed first; $limit of them from $offset (NULL $limit: all). The completion is formatted with
-- $iso (reports/data.py ISO_FORMAT). The order and the columns a list
-- page shows (all but change and verdict_changed) do not change from one night to the next while its verdicts do not.
SELECT invocation_id, agent_id, grounding_mode AS mode, strftime(completed_at, $iso) AS completed_at, codes, violations,
       g_status, s_status, since_nightly_id, since_date, change, verdict_changed
FROM report_state
WHERE failing
ORDER BY since_nightly_id DESC NULLS LAST, report_state.completed_at DESC NULLS LAST, invocation_id
LIMIT $limit OFFSET $offset
