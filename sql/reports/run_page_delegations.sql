-- run_page_delegations: the delegations of the runs of report_batch, in order. No parameters.
-- The batch's rows are picked by rowid, from a scan of invocation_id alone: a join with report_batch
-- read every column of every row (spans, evidence: ~0.1-0.2 s CPU per batch at 100,000 runs).
SELECT d.invocation_id, d.ord, d.delegated_invocation_id, d.content_hash, d.delegated_agent_id, d.delegated_status
FROM delegations d
WHERE d.rowid IN (SELECT rowid FROM delegations WHERE invocation_id IN (SELECT invocation_id FROM report_batch))
ORDER BY d.ord
