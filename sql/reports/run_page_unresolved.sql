-- run_page_unresolved: the unresolved evidence items of verify pass $verify for the runs of
-- report_batch, by sequence number: the first $cap of each run (reports/runpage.py PAGE_ROWS),
-- each row with the run's number of unresolved items (total).
SELECT u.invocation_id, u.seq, u.item, count(*) OVER (PARTITION BY u.invocation_id) AS total
FROM verify_unresolved u JOIN report_batch b USING (invocation_id)
WHERE u.lint_id = $verify
QUALIFY row_number() OVER (PARTITION BY u.invocation_id ORDER BY u.seq) <= $cap
ORDER BY u.seq
