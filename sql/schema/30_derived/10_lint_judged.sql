-- Derived relation 10 of 13 (groundwork/checks/derived.py: the files of this folder, in
-- file name order, each after what it reads). One CREATE OR REPLACE VIEW, then its documentation.
CREATE OR REPLACE VIEW lint_judged AS
SELECT r.*, t.root_ord, t.root_span_id, t.root_trace_id, t.root_mode, t.root_mode_json,
       t.root_mode_is_string, t.input_hash,
       -- docs/rules.md#early-stops: past step 3 the workbench reads the evidence (steps 6-7), then in
       -- the mode rules the delegations (delegation mode only) and the outcome; step 1 (not here:
       -- no single root) and step 3 (mode_valid) stop before any of them.
       CASE WHEN r.mode_valid
            THEN coalesce(r.evidence_problem,
                          CASE WHEN r.mode = 'delegation' THEN r.delegations_problem END,
                          r.outcome_problem)
       END AS crash_reason
FROM lint_runs r JOIN lint_root t USING (run_key)
WHERE NOT EXISTS (SELECT 1 FROM lint_cycles c WHERE c.run_key = r.run_key);
COMMENT ON VIEW lint_judged IS 'Runs that reach docs/rules.md#g0_tree: lintable, exactly one root, no reachable cycle. (input_sid, input_hash) is the input pair; crash_reason says whether the workbench crashes past step 3 (docs/rules.md#early-stops).';
COMMENT ON COLUMN lint_judged.invocation_id IS 'The run.';
COMMENT ON COLUMN lint_judged.run_key IS 'lint_runs.run_key of the run.';
COMMENT ON COLUMN lint_judged.mode IS 'str() of envelope.grounding_mode (the string None when absent or null).';
COMMENT ON COLUMN lint_judged.mode_valid IS 'mode is one of retrieval, input_only, none, delegation (docs/rules.md#g0_mode).';
COMMENT ON COLUMN lint_judged.mode_label IS 'Report mode: mode when the declared value is truthy, else NULL (printed unknown mode).';
COMMENT ON COLUMN lint_judged.declared_json IS 'Raw JSON of envelope.grounding_mode (null when absent), for repr.';
COMMENT ON COLUMN lint_judged.succeeded IS 'outcome is an object whose status is the string succeeded (docs/rules.md#derived-relations).';
COMMENT ON COLUMN lint_judged.payload_type IS 'JSON type of the payload; NULL when absent or null.';
COMMENT ON COLUMN lint_judged.payload_has_schema_class IS 'Payload is an object with a schema_class key.';
COMMENT ON COLUMN lint_judged.payload_schema_class_json IS 'Raw JSON of payload.schema_class (NULL when absent), for repr.';
COMMENT ON COLUMN lint_judged.payload_has_grounded_on IS 'Payload is an object with a root grounded_on key.';
COMMENT ON COLUMN lint_judged.evidence_count IS 'Number of evidence elements (0 for absent/null/falsy evidence).';
COMMENT ON COLUMN lint_judged.input_sid IS 'Source id of the input pair: input:<str(envelope.invocation_id)>.';
COMMENT ON COLUMN lint_judged.outcome_problem IS 'runs.outcome_problem: why the linter crashes where it reads the outcome (NULL: it does not).';
COMMENT ON COLUMN lint_judged.evidence_problem IS 'runs.evidence_problem: why the linter crashes where it reads the evidence (NULL: it does not).';
COMMENT ON COLUMN lint_judged.delegations_problem IS 'runs.delegations_problem: why the linter crashes where it reads the delegations (NULL: it does not).';
COMMENT ON COLUMN lint_judged.root_ord IS 'ord of the single invoke_agent span.';
COMMENT ON COLUMN lint_judged.root_span_id IS 'span_id of the root.';
COMMENT ON COLUMN lint_judged.root_trace_id IS 'trace_id of the root: the invocation''s trace.';
COMMENT ON COLUMN lint_judged.root_mode IS 'str() of the root''s dd.grounding_mode (NULL when absent).';
COMMENT ON COLUMN lint_judged.root_mode_json IS 'Raw JSON of the root''s dd.grounding_mode (NULL when absent), for repr.';
COMMENT ON COLUMN lint_judged.root_mode_is_string IS 'The root''s dd.grounding_mode is a JSON string.';
COMMENT ON COLUMN lint_judged.input_hash IS 'str() of the root''s dd.input_hash (the string None when absent): the input pair''s hash.';
COMMENT ON COLUMN lint_judged.crash_reason IS 'Why the workbench linter crashes on this run once past step 3: the first envelope value it reads that it cannot (evidence, then in delegation mode delegations, then outcome; docs/rules.md#early-stops); NULL when step 3 stops it (invalid mode) or it reads them all. Such a run is unlintable.';
