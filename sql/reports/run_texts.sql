-- run_texts: the runs of report_state whose grounding.txt / sources.txt the report writes under
-- runs/<slug>/: every failing run, and every other run whose text today (summary + newline)
-- differs from the one recorded in the archive; with both texts and the source-check verdict.
-- No parameters.
SELECT st.invocation_id, st.g_summary, st.s_summary, st.s_status
FROM report_state st LEFT JOIN runs r ON r.invocation_id = st.invocation_id
WHERE st.failing
   OR (st.g_summary IS NOT NULL AND st.g_summary || CHR(10) IS DISTINCT FROM r.recorded_grounding)
   OR (st.s_summary IS NOT NULL AND st.s_summary || CHR(10) IS DISTINCT FROM r.recorded_sources)
