-- run_page_violations: the violations of passes $lint and $verify for the runs of report_batch,
-- with the kind of check that found them, by kind and sequence number: the first $cap of each
-- run (a page lists no more: reports/runpage.py PAGE_ROWS), each row with the run's number of
-- violations (total).
SELECT v.invocation_id, l.kind AS check_kind, v.seq, v.code, v.message,
       count(*) OVER (PARTITION BY v.invocation_id) AS total
FROM report_violations v JOIN report_batch b USING (invocation_id) JOIN lints l ON l.lint_id = v.lint_id
WHERE v.lint_id = $lint OR v.lint_id = $verify
QUALIFY row_number() OVER (PARTITION BY v.invocation_id ORDER BY l.kind, v.seq) <= $cap
ORDER BY l.kind, v.seq
