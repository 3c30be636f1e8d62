-- trend_by_completion: per slot of $width (an interval, e.g. '1 hour') of run completion, from
-- $since to $last (completion_range), the runs of report_state judged now, those failing and those new, newest first.
SELECT time_bucket(CAST($width AS INTERVAL), completed_at) AS slot, COUNT(*) AS runs,
       COUNT(*) FILTER (WHERE failing) AS failing,
       COUNT(*) FILTER (WHERE change = 'new') AS new
FROM report_state
WHERE (g_status IS NOT NULL OR s_status IS NOT NULL) AND completed_at BETWEEN $since AND $last
GROUP BY ALL
ORDER BY slot DESC
