-- run_page_lint: the grounding verdicts of lint pass $lint for the runs of report_batch.
SELECT v.invocation_id, v.status, v.mode, v.retrieval_count, v.chat_count, v.reason
FROM lint_verdicts v JOIN report_batch b USING (invocation_id)
WHERE v.lint_id = $lint
