-- run_page_delegations: the delegations of the runs of report_batch, in order. No parameters.
SELECT d.invocation_id, d.ord, d.delegated_invocation_id, d.content_hash, d.delegated_agent_id, d.delegated_status
FROM delegations d JOIN report_batch b USING (invocation_id)
ORDER BY d.ord
