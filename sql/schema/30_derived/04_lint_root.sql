-- Derived relation 4 of 13 (groundwork/checks/derived.py: the files of this folder, in
-- file name order, each after what it reads). One CREATE OR REPLACE VIEW, then its documentation.
CREATE OR REPLACE VIEW lint_root AS
SELECT s.invocation_id,
       one.run_key,
       s.ord                          AS root_ord,
       s.span_id                      AS root_span_id,
       s.trace_id                     AS root_trace_id,
       s.dd_grounding_mode            AS root_mode,
       s.dd_grounding_mode_json       AS root_mode_json,
       coalesce(s.dd_grounding_mode_is_string, false) AS root_mode_is_string,
       coalesce(s.dd_input_hash, 'None') AS input_hash
FROM spans s  -- only runs of lint_spans pass the join with one, so these are lint_spans rows
JOIN (SELECT invocation_id, run_key FROM lint_spans WHERE name = 'invoke_agent'
      GROUP BY invocation_id, run_key HAVING count(*) = 1) one USING (invocation_id)
WHERE s.name = 'invoke_agent';
COMMENT ON VIEW lint_root IS 'The single invoke_agent span of runs that have exactly one (docs/rules.md#g0_roots).';
COMMENT ON COLUMN lint_root.invocation_id IS 'The run.';
COMMENT ON COLUMN lint_root.run_key IS 'lint_runs.run_key of the run.';
COMMENT ON COLUMN lint_root.root_ord IS 'ord of the single invoke_agent span.';
COMMENT ON COLUMN lint_root.root_span_id IS 'span_id of the root.';
COMMENT ON COLUMN lint_root.root_trace_id IS 'trace_id of the root: the invocation''s trace.';
COMMENT ON COLUMN lint_root.root_mode IS 'str() of the root''s dd.grounding_mode (NULL when absent).';
COMMENT ON COLUMN lint_root.root_mode_json IS 'Raw JSON of the root''s dd.grounding_mode (NULL when absent), for repr.';
COMMENT ON COLUMN lint_root.root_mode_is_string IS 'The root''s dd.grounding_mode is a JSON string.';
COMMENT ON COLUMN lint_root.input_hash IS 'str() of the root''s dd.input_hash (the string None when absent): the input pair''s hash.';
