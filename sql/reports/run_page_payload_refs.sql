-- run_page_payload_refs: the grounded_on entries (payload_refs) of the runs of report_batch, in
-- order. No parameters.
SELECT r.invocation_id, r.ord, r.path, r.kind, r.source_id, r.content_hash, r.value_json
FROM payload_refs r JOIN report_batch b USING (invocation_id)
ORDER BY r.ord
