-- trend_agents_by_nightly: per nightly of $nightlies (a list of nightly ids) and agent of $agents
-- (a list of agent ids; the runs without an agent too when $null_agent), the runs its lint or
-- verify pass judged and those failing either check (failed, unlintable or unverifiable).
WITH p AS (
    SELECT nightly_id, lint_id, verify_id FROM nightlies WHERE nightly_id IN (SELECT UNNEST($nightlies))
),
mine AS (
    SELECT invocation_id, agent_id FROM runs
    WHERE agent_id IN (SELECT UNNEST($agents)) OR (agent_id IS NULL AND $null_agent)
),
v AS (
    SELECT p.nightly_id, x.invocation_id, x.status <> 'passed' AS bad
    FROM p JOIN lint_verdicts x ON x.lint_id = p.lint_id
    WHERE x.invocation_id IN (SELECT invocation_id FROM mine)
    UNION ALL
    SELECT p.nightly_id, x.invocation_id, x.status <> 'passed'
    FROM p JOIN verify_verdicts x ON x.lint_id = p.verify_id
    WHERE x.invocation_id IN (SELECT invocation_id FROM mine)
),
judged AS (SELECT nightly_id, invocation_id, bool_or(bad) AS failing FROM v GROUP BY ALL)
SELECT j.nightly_id, m.agent_id, COUNT(*) AS runs, COUNT(*) FILTER (WHERE j.failing) AS failing
FROM judged j JOIN mine m USING (invocation_id)
GROUP BY ALL
