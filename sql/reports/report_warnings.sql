-- report_warnings: per finding code of severity warn in nightly $nightly (nightly_severities),
-- the runs of its lint pass $lint with that finding and the findings, by code.
-- $nightly: the nightly; $lint: its lint pass.
SELECT v.code, COUNT(DISTINCT v.invocation_id) AS runs, COUNT(*) AS findings,
       MIN(v.invocation_id) AS first_run
FROM report_violations v
JOIN nightly_severities s ON s.code = v.code AND s.nightly_id = $nightly AND s.severity = 'warn'
WHERE v.lint_id = $lint
GROUP BY v.code
ORDER BY v.code
