-- sources_drift: every run the verify pass judged, its recorded sources.txt against today's text
-- classified: unrecorded (no sources.txt), unjudged (no text today), same (byte-identical),
-- withheld (the stored envelope is the conductor's withheld one: the workbench checked the
-- evidence the agent returned, the stored envelope has none, docs/rules.md#withheld-envelopes),
-- verdict (passed vs FAILED differ), text (same verdict, other text). reports/data.py makes it the
-- temp view report_sources_drift, which sources_drift_counts and sources_drift_examples read.
SELECT st.invocation_id, st.agent_id, st.failing AS has_page,
       CASE
           WHEN r.recorded_sources IS NULL THEN 'unrecorded'
           WHEN st.s_summary IS NULL THEN 'unjudged'
           WHEN st.s_summary || CHR(10) = r.recorded_sources THEN 'same'
           WHEN COALESCE(r.withheld, false) THEN 'withheld'
           WHEN (POSITION('; FAILED' IN r.recorded_sources) > 0) <> (st.s_status <> 'passed') THEN 'verdict'
           ELSE 'text'
       END AS class,
       r.recorded_sources AS recorded, st.s_summary || CHR(10) AS today
FROM report_state st JOIN runs r ON r.invocation_id = st.invocation_id
WHERE st.s_status IS NOT NULL
