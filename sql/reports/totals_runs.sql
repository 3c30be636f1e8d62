-- totals_runs: one row of run counts for the fleet report and the nightly's metrics: runs in the
-- warehouse and missing, runs judged by each check and their verdicts, and the change classes
-- (new / still / resolved / gone) of report_state.
SELECT
    (SELECT COUNT(*) FROM runs) AS runs_total,
    (SELECT COUNT(*) FROM runs WHERE missing) AS runs_missing,
    COUNT(*) FILTER (WHERE g_status IS NOT NULL) AS runs_linted,
    COUNT(*) FILTER (WHERE g_status = 'passed') AS lint_passed,
    COUNT(*) FILTER (WHERE g_status = 'failed') AS lint_failed,
    COUNT(*) FILTER (WHERE g_status = 'unlintable') AS lint_unlintable,
    COUNT(*) FILTER (WHERE s_status IS NOT NULL) AS runs_verified,
    COUNT(*) FILTER (WHERE s_status = 'passed') AS verify_passed,
    COUNT(*) FILTER (WHERE s_status = 'failed') AS verify_failed,
    COUNT(*) FILTER (WHERE s_status = 'unverifiable') AS verify_unverifiable,
    COUNT(*) FILTER (WHERE failing) AS runs_failing,
    COUNT(*) FILTER (WHERE change = 'new') AS new_failing,
    COUNT(*) FILTER (WHERE change = 'still') AS still_failing,
    COUNT(*) FILTER (WHERE change = 'still' AND verdict_changed) AS still_failing_changed,
    COUNT(*) FILTER (WHERE change = 'resolved') AS resolved,
    COUNT(*) FILTER (WHERE change = 'gone') AS gone
FROM report_state
