-- run_page_spans: the spans of the runs of report_batch, by run and order in the file.
-- No parameters.
-- The batch's rows are picked by rowid, from a scan of invocation_id alone: a join with report_batch
-- read every column of every row (spans, evidence: ~0.1-0.2 s CPU per batch at 100,000 runs).
SELECT t.invocation_id, t.ord, t.line_no, t.name, t.span_id, t.parent_id, t.trace_id,
       t.start_time, t.end_time, t.dd_agent_id, t.dd_source_id, t.dd_content_hash, t.dd_model_id
FROM spans t
WHERE t.rowid IN (SELECT rowid FROM spans WHERE invocation_id IN (SELECT invocation_id FROM report_batch))
ORDER BY t.invocation_id, t.ord
