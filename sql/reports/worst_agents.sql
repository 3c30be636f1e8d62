-- worst_agents: the $top agents with the most failing runs in report_state (ties: higher failure
-- rate, then id): runs judged, failing, new, violations, and each agent's most frequent rule code.
-- $top: how many (the passes' violations are report_pass_violations: reports/data.py build_state).
WITH a AS (
    SELECT agent_id, COUNT(*) AS runs,
           COUNT(*) FILTER (WHERE failing) AS failing,
           COUNT(*) FILTER (WHERE change = 'new') AS new,
           SUM(violations) AS violations
    FROM report_state
    WHERE g_status IS NOT NULL OR s_status IS NOT NULL
    GROUP BY agent_id
), c AS (
    SELECT agent_id, code, COUNT(*) AS n,
           ROW_NUMBER() OVER (PARTITION BY agent_id ORDER BY COUNT(*) DESC, code) AS rk
    FROM report_pass_violations
    GROUP BY agent_id, code
)
SELECT a.agent_id, a.runs, a.failing, a.new, a.violations,
       ROUND(100.0 * a.failing / a.runs, 1) AS failing_pct,
       c.code AS top_code, c.n AS top_code_violations
FROM a LEFT JOIN c ON c.agent_id IS NOT DISTINCT FROM a.agent_id AND c.rk = 1
WHERE a.failing > 0
ORDER BY a.failing DESC, a.failing / a.runs DESC, a.agent_id NULLS LAST
LIMIT $top
