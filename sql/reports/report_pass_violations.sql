-- report_pass_violations: the violations of passes $lint and $verify (report_violations) of the
-- runs of report_state, each with its pass's check kind (lints.kind) and its run's agent,
-- grounding mode, completion and change class. reports/data.py build_state keeps it as a temp
-- table beside report_state, which the per-rule, per-mode and per-agent counts, the metrics and
-- violations.jsonl read instead of joining the same three tables once each.
SELECT v.lint_id, v.invocation_id, v.seq, v.code, v.message, l.kind AS check_kind,
       st.agent_id, st.grounding_mode, st.completed_at, st.change
FROM report_violations v
JOIN lints l ON l.lint_id = v.lint_id
JOIN report_state st ON st.invocation_id = v.invocation_id
WHERE v.lint_id = $lint OR v.lint_id = $verify
