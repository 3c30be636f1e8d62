-- failing_keys: the failing runs of report_state by invocation id, with what their run page is
-- made from (ingest, whether its folder is missing, verdicts, texts, violation codes, and the
-- change class it shows under "Since last night"). No parameters.
SELECT invocation_id, ingest_id, missing, g_status, g_summary, s_status, s_summary, codes, change
FROM report_state
WHERE failing
ORDER BY invocation_id
