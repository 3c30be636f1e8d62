-- violations_jsonl: one row per violation of passes $lint and $verify, by invocation id, check kind
-- and sequence number: invocation id, agent, grounding mode, completion (report_state's), check
-- ('grounding' or 'sources'), sequence number, code, message, change class. The completion is
-- formatted with $iso (reports/data.py ISO_FORMAT: as every time in the reports).
SELECT v.invocation_id, st.agent_id, st.grounding_mode, strftime(st.completed_at, $iso),
       CASE l.kind WHEN 'lint' THEN 'grounding' ELSE 'sources' END, v.seq, v.code, v.message, st.change
FROM report_violations v JOIN lints l ON l.lint_id = v.lint_id
JOIN report_state st USING (invocation_id)
WHERE v.lint_id = $lint OR v.lint_id = $verify
ORDER BY v.invocation_id, l.kind, v.seq
