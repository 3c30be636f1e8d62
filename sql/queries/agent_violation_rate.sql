-- title: Agents by violation rate
-- description: Per agent, over the runs completed in [since, until): how many runs, how many fail
--   today's lint or source check, the failure rate and the most frequent violation codes.
--   Runs without completed_at or never checked are counted in runs but not as failed.
-- param: since (date, default 1970-01-01) — first completion date included
-- param: until (date, default 9999-12-31) — first completion date excluded
WITH scope AS (
    SELECT *
    FROM run_summary
    WHERE completed_at >= $since AND completed_at < $until
), code_counts AS (
    SELECT s.agent_id, v.code, COUNT(*) AS n
    FROM violation_messages v
    JOIN scope s ON s.invocation_id = v.invocation_id
    GROUP BY s.agent_id, v.code
), top_codes AS (
    SELECT agent_id, STRING_AGG(code || ' (' || CAST(n AS VARCHAR) || ')', ', ' ORDER BY n DESC, code) AS codes
    FROM code_counts
    GROUP BY agent_id
), per_agent AS (
    SELECT
        agent_id,
        COUNT(*) AS runs,
        COUNT(*) FILTER (WHERE lint_status <> 'passed') AS lint_failed,
        COUNT(*) FILTER (WHERE verify_status <> 'passed') AS verify_failed,
        COUNT(*) FILTER (WHERE lint_status <> 'passed' OR verify_status <> 'passed') AS failed,
        SUM(lint_violation_count + verify_violation_count) AS violations
    FROM scope
    GROUP BY agent_id
)
SELECT
    a.agent_id,
    a.runs,
    a.failed,
    ROUND(CAST(a.failed AS DOUBLE) / a.runs, 3) AS violation_rate,
    a.lint_failed,
    a.verify_failed,
    a.violations,
    t.codes
FROM per_agent a
LEFT JOIN top_codes t ON t.agent_id IS NOT DISTINCT FROM a.agent_id
ORDER BY violation_rate DESC, a.runs DESC, a.agent_id
