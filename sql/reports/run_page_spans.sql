-- run_page_spans: the spans of the runs of report_batch, by run and order in the file.
-- No parameters.
-- The batch's rows are picked by rowid, from a scan of invocation_id alone: a join with report_batch
-- read every column of every row (spans, evidence: ~0.1-0.2 s CPU per batch at 100,000 runs).
-- A time in UTC outside the years 1-9999 (valid ISO 8601 with an offset, e.g.
-- 9999-12-31T23:59:59-01:00) comes back from DuckDB as a string, not a datetime: the page shows
-- such a time as unknown (no bar), as it does a missing one.
SELECT t.invocation_id, t.ord, t.line_no, t.name, t.span_id, t.parent_id, t.trace_id,
       CASE WHEN year(t.start_time) BETWEEN 1 AND 9999 THEN t.start_time END AS start_time,
       CASE WHEN year(t.end_time) BETWEEN 1 AND 9999 THEN t.end_time END AS end_time,
       t.dd_agent_id, t.dd_source_id, t.dd_content_hash, t.dd_model_id
FROM spans t
WHERE t.rowid IN (SELECT rowid FROM spans WHERE invocation_id IN (SELECT invocation_id FROM report_batch))
ORDER BY t.invocation_id, t.ord
