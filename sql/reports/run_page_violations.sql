-- run_page_violations: the violations of passes $lint and $verify for the runs of report_batch,
-- with the kind of check that found them, by kind and sequence number.
SELECT v.invocation_id, l.kind AS check_kind, v.seq, v.code, v.message
FROM report_violations v JOIN report_batch b USING (invocation_id) JOIN lints l ON l.lint_id = v.lint_id
WHERE v.lint_id = $lint OR v.lint_id = $verify
ORDER BY l.kind, v.seq
