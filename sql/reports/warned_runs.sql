-- warned_runs: per finding code of severity warn (report_warn_codes), the first $per_code runs
-- (by invocation id) of lint pass $lint with that finding: the fleet report lists them with a
-- link to their run page (a warned run has one, failing or not).
-- $lint: the nightly's lint pass; $per_code: runs listed per code.
SELECT code, invocation_id
FROM (
    SELECT DISTINCT v.code, v.invocation_id
    FROM report_violations v
    JOIN report_warn_codes USING (code)
    WHERE v.lint_id = $lint
)
QUALIFY row_number() OVER (PARTITION BY code ORDER BY invocation_id) <= $per_code
ORDER BY code, invocation_id
