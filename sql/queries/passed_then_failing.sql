-- title: Runs recorded as passed that fail today
-- description: Runs whose grounding.txt or sources.txt recorded a pass but whose latest lint or
--   verify does not pass, with today's codes. A run the workbench passed and groundwork now
--   fails means the stored files changed after the fact, or the rules did.
-- param: since (date, default 1970-01-01) — only runs completed on or after this date
SELECT
    invocation_id,
    agent_id,
    grounding_mode,
    completed_at,
    recorded_lint_status,
    lint_status,
    lint_codes,
    recorded_verify_status,
    verify_status,
    verify_codes
FROM run_summary
WHERE ((recorded_lint_status = 'passed' AND lint_status <> 'passed')
    OR (recorded_verify_status = 'passed' AND verify_status <> 'passed'))
  AND (completed_at >= $since OR completed_at IS NULL)
ORDER BY completed_at, invocation_id
