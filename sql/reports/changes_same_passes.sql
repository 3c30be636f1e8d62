-- changes_same_passes: the rows of the view nightly_changes (docs/schema.md#nightly_changes) of a
-- nightly whose lint pass is its baseline's, and whose verify pass is its baseline's or none (a
-- nightly with nothing changed: groundwork.checks.current). Each run is then judged by the same
-- verdicts now and in the baseline (and its groundwork findings by the nightly's own severities
-- both times, as the view does), so no run is new, resolved or gone, a failing run is still
-- failing with the same texts, and the view's full joins of each pass with itself are not needed.
-- The same columns and values as the view's rows of the nightly (tests/reports/test_state_same_passes.py).
-- reports/data.py state_sql makes it the CTE report_changes that report_state reads when the
-- passes are the same (else changes_all).
-- $nightly: the nightly; $lint, $verify: its lint and verify passes (NULL: none).
WITH g AS (SELECT invocation_id, status, summary FROM lint_verdicts WHERE lint_id = $lint),
s AS (SELECT invocation_id, status, summary FROM verify_verdicts WHERE lint_id = $verify),
fe AS (
    SELECT DISTINCT m.invocation_id
    FROM lint_violations m
    JOIN nightly_severities e ON e.code = m.code AND e.nightly_id = $nightly AND e.severity = 'error'
    WHERE m.lint_id = $lint
),
flags AS (
    SELECT coalesce(g.invocation_id, s.invocation_id) AS invocation_id,
           g.status AS g_status, s.status AS s_status, g.summary AS g_summary, s.summary AS s_summary,
           coalesce(g.status <> 'passed', false) AS g_fail,
           coalesce(s.status <> 'passed', false) AS s_fail,
           fe.invocation_id IS NOT NULL AS f_fail
    FROM g
    FULL JOIN s ON s.invocation_id = g.invocation_id
    LEFT JOIN fe ON fe.invocation_id = g.invocation_id
)
SELECT CAST($nightly AS INTEGER) AS nightly_id, invocation_id,
       g_status, g_status AS gb_status, s_status, s_status AS sb_status,
       g_summary, g_summary AS gb_summary, s_summary, s_summary AS sb_summary,
       g_fail, g_fail AS gb_fail, s_fail, s_fail AS sb_fail,
       (g_fail OR s_fail OR f_fail) AS failing,
       (g_fail OR s_fail OR f_fail) AS base_failing,
       CASE WHEN g_fail OR s_fail OR f_fail THEN 'still' END AS change,
       false AS verdict_changed,
       f_fail, f_fail AS fb_fail
FROM flags
