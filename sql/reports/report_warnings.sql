-- report_warnings: per finding code of severity warn (report_warn_codes), the runs of lint pass
-- $lint with that finding and the findings, by code.
-- $lint: the nightly's lint pass.
SELECT v.code, COUNT(DISTINCT v.invocation_id) AS runs, COUNT(*) AS findings,
       MIN(v.invocation_id) AS first_run
FROM report_violations v
JOIN report_warn_codes USING (code)
WHERE v.lint_id = $lint
GROUP BY v.code
ORDER BY v.code
