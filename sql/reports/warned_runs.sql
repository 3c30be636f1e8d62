-- warned_runs: per finding code of severity warn in nightly $nightly (nightly_severities), the
-- first $per_code runs (by invocation id) of its lint pass $lint with that finding: the fleet
-- report lists them with a link to their run page (a warned run has one, failing or not).
-- $nightly: the nightly; $lint: its lint pass; $per_code: runs listed per code.
SELECT code, invocation_id
FROM (
    SELECT DISTINCT v.code, v.invocation_id
    FROM report_violations v
    JOIN nightly_severities s ON s.code = v.code AND s.nightly_id = $nightly AND s.severity = 'warn'
    WHERE v.lint_id = $lint
)
QUALIFY row_number() OVER (PARTITION BY code ORDER BY invocation_id) <= $per_code
ORDER BY code, invocation_id
