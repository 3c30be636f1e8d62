-- agent_counts_from_history: per nightly of $nightlies (a list of nightly ids) and agent, the runs
-- its lint or verify pass judged and those failing either check (failed, unlintable or
-- unverifiable), recomputed from the passes' verdicts (every run of them: slow at scale). The rows
-- of nightly_agent_counts (docs/schema.md) for nightlies recorded before it existed; a nightly's
-- own are counted from report_state (nightly_agent_counts.sql), which gives the same.
WITH p AS (
    SELECT nightly_id, lint_id, verify_id FROM nightlies WHERE nightly_id IN (SELECT UNNEST($nightlies))
),
v AS (
    SELECT p.nightly_id, x.invocation_id, x.status <> 'passed' AS bad
    FROM p JOIN lint_verdicts x ON x.lint_id = p.lint_id
    UNION ALL
    SELECT p.nightly_id, x.invocation_id, x.status <> 'passed'
    FROM p JOIN verify_verdicts x ON x.lint_id = p.verify_id
),
judged AS (SELECT nightly_id, invocation_id, bool_or(bad) AS failing FROM v GROUP BY ALL)
SELECT j.nightly_id, r.agent_id, COUNT(*) AS runs, COUNT(*) FILTER (WHERE j.failing) AS failing
FROM judged j JOIN runs r USING (invocation_id)
GROUP BY ALL
