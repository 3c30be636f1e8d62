-- run_page_payload_refs: the grounded_on entries (payload_refs) of the runs of report_batch, in
-- order. No parameters.
-- The batch's rows are picked by rowid, from a scan of invocation_id alone: a join with report_batch
-- read every column of every row (spans, evidence: ~0.1-0.2 s CPU per batch at 100,000 runs).
SELECT r.invocation_id, r.ord, r.path, r.kind, r.source_id, r.content_hash, r.value_json
FROM payload_refs r
WHERE r.rowid IN (SELECT rowid FROM payload_refs WHERE invocation_id IN (SELECT invocation_id FROM report_batch))
ORDER BY r.ord
