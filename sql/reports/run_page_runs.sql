-- run_page_runs: the runs of the temp table report_batch (the run pages being written) with their
-- verdicts, texts and the nightly it has been failing since in report_state. No parameters.
SELECT r.invocation_id, r.run_path, r.agent_id, r.agent_version, r.grounding_mode, r.outcome_status,
       r.succeeded, r.withheld, r.problem_type, r.completed_at, r.conversation_id, r.parent_invocation_id,
       r.telemetry_trace_id, r.span_count, r.evidence_count, r.delegation_count, r.missing,
       r.recorded_grounding, r.recorded_sources, r.unlintable_reason, r.unverifiable_reason,
       st.g_status, st.g_summary, st.s_status, st.s_summary, st.since_nightly_id, st.since_date, st.codes
FROM runs r JOIN report_batch b USING (invocation_id) LEFT JOIN report_state st USING (invocation_id)
