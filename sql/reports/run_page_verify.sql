-- run_page_verify: the source-check verdicts of verify pass $verify for the runs of report_batch.
SELECT v.invocation_id, v.status, v.verified, v.unresolved_count, v.reason
FROM verify_verdicts v JOIN report_batch b USING (invocation_id)
WHERE v.lint_id = $verify
