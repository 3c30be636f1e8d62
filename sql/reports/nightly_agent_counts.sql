-- nightly_agent_counts: per agent, the runs of report_state the nightly's lint or verify pass
-- judged and those failing either check (failed, unlintable or unverifiable; a finding of
-- severity error does not count here): the nightly's rows of nightly_agent_counts.
-- $nightly: the nightly (the rows' nightly_id).
SELECT $nightly AS nightly_id, agent_id, COUNT(*) AS runs,
       COUNT(*) FILTER (WHERE COALESCE(g_status <> 'passed', false) OR COALESCE(s_status <> 'passed', false)) AS failing
FROM report_state
WHERE (g_status IS NOT NULL OR s_status IS NOT NULL) AND ingest_id IS NOT NULL
GROUP BY agent_id
