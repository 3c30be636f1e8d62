-- violations_jsonl: one row per violation of the passes (report_pass_violations: reports/data.py
-- build_state), by invocation id, check kind and sequence number: invocation id, agent, grounding
-- mode, completion (report_state's), check ('grounding' or 'sources'), sequence number, code,
-- message, change class. The completion is formatted with $iso (reports/data.py ISO_FORMAT: as
-- every time in the reports).
SELECT invocation_id, agent_id, grounding_mode, strftime(completed_at, $iso),
       CASE check_kind WHEN 'lint' THEN 'grounding' ELSE 'sources' END, seq, code, message, change
FROM report_pass_violations
ORDER BY invocation_id, check_kind, seq
