-- completion_range: the first and last completion time of the runs of report_state judged now
-- that completed by the end of nightly $nightly's ingest (until: its ingests.finished_at; NULL
-- for no nightly, or one without a finished ingest: every run counts), and how many completed
-- after it (after): a completion time in the future, a clock's error or an agent's, would
-- otherwise anchor the by-completion trend there and leave every other run out of its window.
WITH bound AS (
    SELECT max(i.finished_at) AS until
    FROM nightlies n JOIN ingests i ON i.ingest_id = n.ingest_id
    WHERE n.nightly_id = $nightly
),
judged AS (
    SELECT s.completed_at, coalesce(s.completed_at > b.until, false) AS late
    FROM report_state s CROSS JOIN bound b
    WHERE s.g_status IS NOT NULL OR s.s_status IS NOT NULL
)
SELECT MIN(completed_at) FILTER (WHERE NOT late) AS first, MAX(completed_at) FILTER (WHERE NOT late) AS last,
       COUNT(*) FILTER (WHERE late) AS after, (SELECT until FROM bound) AS until
FROM judged
