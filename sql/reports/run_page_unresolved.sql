-- run_page_unresolved: the unresolved evidence items of verify pass $verify for the runs of
-- report_batch, by sequence number.
SELECT u.invocation_id, u.seq, u.item
FROM verify_unresolved u JOIN report_batch b USING (invocation_id)
WHERE u.lint_id = $verify
ORDER BY u.seq
