-- trend_by_nightly: the latest $nights finished nightlies and the current one, newest first:
-- their passes, runs linted and verified, failing, and the counts of nightly_changes they
-- recorded (nightlies.new_failing, resolved, still_failing).
-- $nightly: the current nightly; $nights: how many.
SELECT n.nightly_id, COALESCE(n.finished_at, n.started_at) AS at, n.lint_id, n.verify_id,
       l.runs_checked AS linted, l.runs_failed AS lint_failed, l.ruleset_hash,
       v.runs_checked AS verified, v.runs_failed AS verify_failed,
       n.runs_failing, n.new_failing, n.resolved, n.still_failing
FROM nightlies n
LEFT JOIN lints l ON l.lint_id = n.lint_id
LEFT JOIN lints v ON v.lint_id = n.verify_id
WHERE n.exit_status IN (0, 1) OR n.nightly_id = $nightly
ORDER BY n.nightly_id DESC
LIMIT $nights
