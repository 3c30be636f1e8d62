-- failing_keys: the runs of report_state with a run page, by invocation id: the failing ones and
-- those with a finding of severity warn in nightly $nightly's lint pass $lint (listed under the
-- fleet report's warnings); with what their page is made from (ingest, whether its folder is
-- missing, verdicts, texts, violation codes, and the change class it shows under "Since last night").
-- $nightly: the nightly; $lint: its lint pass.
SELECT invocation_id, ingest_id, missing, g_status, g_summary, s_status, s_summary, codes, change
FROM report_state
WHERE failing OR invocation_id IN (
    SELECT v.invocation_id FROM report_violations v
    JOIN nightly_severities s ON s.code = v.code AND s.nightly_id = $nightly AND s.severity = 'warn'
    WHERE v.lint_id = $lint)
ORDER BY invocation_id
