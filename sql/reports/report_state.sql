-- report_state: one row per run a nightly judged or whose baseline found it failing, with its
-- verdicts and change class (the view nightly_changes, docs/schema.md, read as the CTE
-- report_changes: reports/data.py state_sql), its agent, mode and
-- completion, the distinct violation codes and number of violations of the nightly's passes, and
-- for a failing run the first nightly of its failing streak and the UTC day that nightly started (the
-- baseline's nightly_failing row when the run failed there too, else this nightly: the table
-- nightly_failing, docs/schema.md). reports/data.py build_state creates the temp table
-- report_state from it, which every other report query reads.
-- $nightly: the nightly; $baseline: its baseline nightly (NULL: none); $lint, $verify: its lint
-- and verify passes (nightly_passes).
WITH codes AS (
    SELECT invocation_id, STRING_AGG(DISTINCT code, ' ' ORDER BY code) AS codes,
           COUNT(*) AS violations
    FROM report_violations
    WHERE lint_id = $lint OR lint_id = $verify
    GROUP BY invocation_id
),
state AS (
SELECT c.invocation_id,
       c.g_status, c.gb_status, c.s_status, c.sb_status,
       c.g_summary, c.gb_summary, c.s_summary, c.sb_summary,
       c.g_fail, c.gb_fail, c.s_fail, c.sb_fail,
       r.agent_id, r.grounding_mode, r.completed_at, r.missing, r.withheld, r.ingest_id,
       c.failing, c.base_failing, c.change, c.verdict_changed,
       COALESCE(k.codes, '') AS codes,
       COALESCE(k.violations, 0) AS violations,
       CASE WHEN c.failing THEN COALESCE(b.since_nightly_id, $nightly) END AS since_nightly_id
FROM report_changes c
LEFT JOIN runs r ON r.invocation_id = c.invocation_id
LEFT JOIN codes k ON k.invocation_id = c.invocation_id
LEFT JOIN (SELECT invocation_id, since_nightly_id FROM nightly_failing WHERE nightly_id = $baseline) b
       ON b.invocation_id = c.invocation_id
WHERE c.nightly_id = $nightly
)
SELECT s.*, CAST(CAST(n.started_at AS DATE) AS VARCHAR) AS since_date
FROM state s LEFT JOIN nightlies n ON n.nightly_id = s.since_nightly_id
