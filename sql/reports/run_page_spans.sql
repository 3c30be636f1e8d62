-- run_page_spans: the spans of the runs of report_batch, by run and order in the file.
-- No parameters.
SELECT t.invocation_id, t.ord, t.line_no, t.name, t.span_id, t.parent_id, t.trace_id,
       t.start_time, t.end_time, t.dd_agent_id, t.dd_source_id, t.dd_content_hash, t.dd_model_id
FROM spans t JOIN report_batch b USING (invocation_id)
ORDER BY t.invocation_id, t.ord
