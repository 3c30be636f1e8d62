-- failing_keys: the failing runs of report_state by invocation id, with what their run page is
-- made from (ingest, verdicts, texts, violation codes). No parameters.
SELECT invocation_id, ingest_id, g_status, g_summary, s_status, s_summary, codes
FROM report_state
WHERE failing
ORDER BY invocation_id
