-- Derived relation 2 of 13 (groundwork/checks/derived.py: the files of this folder, in
-- file name order, each after what it reads). One CREATE OR REPLACE VIEW, then its documentation.
CREATE OR REPLACE VIEW lint_spans AS
SELECT s.invocation_id, lint_runs.run_key, s.ord, s.line_no, s.name, s.name_json, s.span_id, s.trace_id, s.parent_id,
       s.start_time, s.end_time,
       s.start_workbench_ns AS start_key, s.end_workbench_ns AS end_key,
       coalesce(s.dd_source_id, 'None')    AS source_id,
       coalesce(s.dd_content_hash, 'None') AS content_hash,
       s.dd_grounding_mode, s.dd_grounding_mode_json, s.dd_grounding_mode_is_string,
       s.dd_input_hash, s.dd_outcome
FROM spans s JOIN lint_runs USING (invocation_id);
COMMENT ON VIEW lint_spans IS 'Span records of lintable runs in file order; source_id/content_hash are str() of the attributes, the string None when absent (docs/rules.md#derived-relations).';
COMMENT ON COLUMN lint_spans.invocation_id IS 'The run.';
COMMENT ON COLUMN lint_spans.run_key IS 'lint_runs.run_key of the run.';
COMMENT ON COLUMN lint_spans.ord IS '0-based position in file / discovery / list order.';
COMMENT ON COLUMN lint_spans.line_no IS '1-based line of spans.jsonl.';
COMMENT ON COLUMN lint_spans.name IS 'str() of the span name.';
COMMENT ON COLUMN lint_spans.name_json IS 'Raw JSON of the span name, for repr.';
COMMENT ON COLUMN lint_spans.span_id IS 'Span id without 0x.';
COMMENT ON COLUMN lint_spans.trace_id IS 'Trace id without 0x.';
COMMENT ON COLUMN lint_spans.parent_id IS 'Parent span id without 0x; NULL when falsy.';
COMMENT ON COLUMN lint_spans.start_time IS 'Span start (UTC, microseconds).';
COMMENT ON COLUMN lint_spans.end_time IS 'Span end (UTC, microseconds).';
COMMENT ON COLUMN lint_spans.start_key IS 'spans.start_workbench_ns: the workbench''s float-nanosecond start (G1 compares these).';
COMMENT ON COLUMN lint_spans.end_key IS 'spans.end_workbench_ns: the workbench''s float-nanosecond end.';
COMMENT ON COLUMN lint_spans.source_id IS 'str() of the source id (the string None when absent).';
COMMENT ON COLUMN lint_spans.content_hash IS 'str() of the content hash (the string None when absent).';
COMMENT ON COLUMN lint_spans.dd_grounding_mode IS 'str() of attribute dd.grounding_mode; NULL when the key is absent.';
COMMENT ON COLUMN lint_spans.dd_grounding_mode_json IS 'Raw JSON of attribute dd.grounding_mode (NULL when absent).';
COMMENT ON COLUMN lint_spans.dd_grounding_mode_is_string IS 'Attribute dd.grounding_mode is a JSON string.';
COMMENT ON COLUMN lint_spans.dd_input_hash IS 'str() of attribute dd.input_hash; NULL when the key is absent.';
COMMENT ON COLUMN lint_spans.dd_outcome IS 'str() of attribute dd.outcome; NULL when the key is absent.';
