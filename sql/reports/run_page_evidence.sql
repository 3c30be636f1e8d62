-- run_page_evidence: the evidence items of the runs of report_batch, with their computed hashes,
-- in order. No parameters.
-- The batch's rows are picked by rowid, from a scan of invocation_id alone: a join with report_batch
-- read every column of every row (spans, evidence: ~0.1-0.2 s CPU per batch at 100,000 runs).
SELECT e.invocation_id, e.ord, e.source_id, e.content_hash, e.canonicalisation, e.snapshot_ref,
       e.computed_hash, e.canonical_error, e.content_type
FROM evidence e
WHERE e.rowid IN (SELECT rowid FROM evidence WHERE invocation_id IN (SELECT invocation_id FROM report_batch))
ORDER BY e.ord
