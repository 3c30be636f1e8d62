-- trend_by_day: per UTC day of run completion (the latest $days days, newest first), the runs
-- of report_state judged now, those failing and those new.
-- $days: how many days.
SELECT CAST(completed_at AS DATE) AS day, COUNT(*) AS runs,
       COUNT(*) FILTER (WHERE failing) AS failing,
       COUNT(*) FILTER (WHERE change = 'new') AS new
FROM report_state
WHERE g_status IS NOT NULL OR s_status IS NOT NULL
GROUP BY ALL
ORDER BY day DESC NULLS LAST
LIMIT $days
