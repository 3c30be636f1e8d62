-- grounding_drift_same: one row: runs the lint pass judged whose recorded grounding.txt is
-- byte-identical to today's text (same), and runs without a recorded grounding.txt (unrecorded).
SELECT COUNT(*) FILTER (WHERE r.recorded_grounding IS NOT NULL AND st.g_summary || CHR(10) = r.recorded_grounding) AS same,
       COUNT(*) FILTER (WHERE r.recorded_grounding IS NULL) AS unrecorded
FROM report_state st JOIN runs r ON r.invocation_id = st.invocation_id
WHERE st.g_status IS NOT NULL
