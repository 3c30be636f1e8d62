-- trend_agents_by_nightly: per nightly of $nightlies (a list of nightly ids) and agent of $agents
-- (a list of agent ids; the runs without an agent too when $null_agent), the runs its lint or
-- verify pass judged and those failing either check (the table nightly_agent_counts).
SELECT nightly_id, agent_id, runs, failing
FROM nightly_agent_counts
WHERE nightly_id IN (SELECT UNNEST($nightlies))
  AND (agent_id IN (SELECT UNNEST($agents)) OR (agent_id IS NULL AND $null_agent))
