-- state_same_passes: report_state (report_state.sql's columns, in its order) of a nightly whose
-- passes are its baseline's, from the rows the baseline kept (report_store.state, reports/data.py
-- build_state), when they were built under the same key (the passes as recorded, the runs, the
-- finding severities: reports/sections.py key). Each run is then judged as the baseline judged
-- it, against the same verdicts: the baseline's verdicts, agent, mode, codes and failing streak
-- stand, every failing run is 'still' failing, none changed its verdict, and the rows of runs
-- the passes did not judge (gone from the baseline's comparison) are left out, as
-- changes_same_passes.sql leaves them out. The same rows as report_state.sql over
-- changes_same_passes (tests/reports/test_state_kept.py).
SELECT invocation_id,
       g_status, g_status AS gb_status, s_status, s_status AS sb_status,
       g_summary, g_summary AS gb_summary, s_summary, s_summary AS sb_summary,
       g_fail, g_fail AS gb_fail, s_fail, s_fail AS sb_fail,
       agent_id, grounding_mode, completed_at, missing, withheld, ingest_id,
       failing, failing AS base_failing, CASE WHEN failing THEN 'still' END AS change, false AS verdict_changed,
       codes, violations, since_nightly_id, since_date
FROM report_store.state
WHERE g_status IS NOT NULL OR s_status IS NOT NULL
