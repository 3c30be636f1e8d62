-- run_texts: the runs of report_state whose grounding.txt / sources.txt the report writes under
-- runs/<slug>/ (wanted): every failing run, and every other run whose text today (summary +
-- newline) differs from the one recorded in the archive; with both texts and the source-check
-- verdict. Not $scoped: the wanted runs. $scoped: only the runs whose texts, verdicts or failing
-- may differ from the baseline nightly's (report_state's baseline columns), or that were reloaded
-- after ingest $since_ingest (the baseline's: their recorded texts may have changed), wanted or not;
-- for every other run the report directory already holds what the baseline nightly wrote.
WITH c AS (
    SELECT invocation_id, g_summary, s_summary, s_status, failing
    FROM report_state
    WHERE NOT $scoped
       OR g_status IS DISTINCT FROM gb_status OR s_status IS DISTINCT FROM sb_status
       OR g_summary IS DISTINCT FROM gb_summary OR s_summary IS DISTINCT FROM sb_summary
       OR failing IS DISTINCT FROM base_failing OR ingest_id > $since_ingest OR ingest_id IS NULL
)
SELECT * FROM (
    SELECT c.invocation_id, c.g_summary, c.s_summary, c.s_status,
           (c.failing
            OR (c.g_summary IS NOT NULL AND c.g_summary || CHR(10) IS DISTINCT FROM r.recorded_grounding)
            OR (c.s_summary IS NOT NULL AND c.s_summary || CHR(10) IS DISTINCT FROM r.recorded_sources)) AS wanted
    FROM c LEFT JOIN runs r ON r.invocation_id = c.invocation_id
) WHERE $scoped OR wanted
