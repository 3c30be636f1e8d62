-- completion_range: the first and last completion time of the runs of report_state judged now.
SELECT MIN(completed_at) AS first, MAX(completed_at) AS last
FROM report_state
WHERE g_status IS NOT NULL OR s_status IS NOT NULL
