-- run_page_runs: the runs of the temp table report_batch (the run pages being written) with their
-- verdicts, texts and the nightly it has been failing since in report_state. No parameters.
-- The batch's rows are picked by rowid, from a scan of invocation_id alone: a join with report_batch
-- read every column of every row (spans, evidence: ~0.1-0.2 s CPU per batch at 100,000 runs).
SELECT r.invocation_id, r.run_path, r.agent_id, r.agent_version, r.grounding_mode, r.outcome_status,
       r.succeeded, r.withheld, r.problem_type, r.completed_at, r.conversation_id, r.parent_invocation_id,
       r.telemetry_trace_id, r.span_count, r.evidence_count, r.delegation_count, r.missing,
       r.recorded_grounding, r.recorded_sources, r.unlintable_reason, r.unverifiable_reason,
       st.g_status, st.g_summary, st.s_status, st.s_summary, st.since_nightly_id, st.since_date, st.codes
FROM runs r LEFT JOIN report_state st USING (invocation_id)
WHERE r.rowid IN (SELECT rowid FROM runs WHERE invocation_id IN (SELECT invocation_id FROM report_batch))
