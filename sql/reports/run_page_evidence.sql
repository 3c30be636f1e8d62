-- run_page_evidence: the evidence items of the runs of report_batch, with their computed hashes,
-- in order. No parameters.
SELECT e.invocation_id, e.ord, e.source_id, e.content_hash, e.canonicalisation, e.snapshot_ref,
       e.computed_hash, e.canonical_error, e.content_type
FROM evidence e JOIN report_batch b USING (invocation_id)
ORDER BY e.ord
