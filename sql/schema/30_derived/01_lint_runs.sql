-- Derived relation 1 of 13 (groundwork/checks/derived.py: the files of this folder, in
-- file name order, each after what it reads). One CREATE OR REPLACE VIEW, then its documentation.
CREATE OR REPLACE VIEW lint_runs AS
SELECT invocation_id,
       row_number() OVER (ORDER BY coalesce(grounding_mode, 'None'), invocation_id) AS run_key,
       coalesce(grounding_mode, 'None')                              AS mode,
       coalesce(grounding_mode, 'None') IN ('retrieval', 'input_only', 'none', 'delegation') AS mode_valid,
       CASE WHEN grounding_mode_truthy THEN grounding_mode END        AS mode_label,
       coalesce(grounding_mode_json, 'null')                          AS declared_json,
       coalesce(succeeded, false)                                     AS succeeded,
       payload_type,
       coalesce(payload_has_schema_class, false)                      AS payload_has_schema_class,
       payload_schema_class_json,
       coalesce(payload_has_grounded_on, false)                       AS payload_has_grounded_on,
       coalesce(evidence_count, 0)                                    AS evidence_count,
       'input:' || coalesce(envelope_invocation_id, 'None')           AS input_sid,
       outcome_problem,
       evidence_problem,
       delegations_problem
FROM runs r
WHERE lintable
   OR (EXISTS (SELECT 1 FROM ingest_issues i
               WHERE i.invocation_id = r.invocation_id AND i.kind = 'cycle'
                 AND i.effect IN ('unlintable', 'unlintable+unverifiable'))
       AND NOT EXISTS (SELECT 1 FROM ingest_issues i
                       WHERE i.invocation_id = r.invocation_id AND i.kind <> 'cycle'
                         AND i.effect IN ('unlintable', 'unlintable+unverifiable')));
COMMENT ON VIEW lint_runs IS 'Runs whose files the rules can read: lintable runs (including those with envelope values the linter crashes on only where it reads them: lint_judged.crash_reason decides, docs/rules.md#early-stops), plus runs ingest marked unlintable only for a span-id cycle (so GW1 can name it; lint_judged leaves them out). Envelope values of docs/rules.md#derived-relations, docs/rules.md#lint-order the rules need.';
COMMENT ON COLUMN lint_runs.invocation_id IS 'The run.';
COMMENT ON COLUMN lint_runs.run_key IS 'Integer key of the run, unique within one derivation (its row number in (mode, invocation_id) order, so the runs of one mode have neighbouring keys: lint_store keeps its tables in run_key order, and a rule reading one mode''s rows skips the row groups of the others; in that copy runs derived again later get keys above the kept ones). Rules join on it: cheaper than invocation_id.';
COMMENT ON COLUMN lint_runs.mode IS 'str() of envelope.grounding_mode (the string None when absent or null).';
COMMENT ON COLUMN lint_runs.mode_valid IS 'mode is one of retrieval, input_only, none, delegation (docs/rules.md#g0_mode).';
COMMENT ON COLUMN lint_runs.mode_label IS 'Report mode: mode when the declared value is truthy, else NULL (printed unknown mode).';
COMMENT ON COLUMN lint_runs.declared_json IS 'Raw JSON of envelope.grounding_mode (null when absent), for repr.';
COMMENT ON COLUMN lint_runs.succeeded IS 'outcome is an object whose status is the string succeeded (docs/rules.md#derived-relations).';
COMMENT ON COLUMN lint_runs.payload_type IS 'JSON type of the payload; NULL when absent or null.';
COMMENT ON COLUMN lint_runs.payload_has_schema_class IS 'Payload is an object with a schema_class key.';
COMMENT ON COLUMN lint_runs.payload_schema_class_json IS 'Raw JSON of payload.schema_class (NULL when absent), for repr.';
COMMENT ON COLUMN lint_runs.payload_has_grounded_on IS 'Payload is an object with a root grounded_on key.';
COMMENT ON COLUMN lint_runs.evidence_count IS 'Number of evidence elements (0 for absent/null/falsy evidence).';
COMMENT ON COLUMN lint_runs.input_sid IS 'Source id of the input pair: input:<str(envelope.invocation_id)>.';
COMMENT ON COLUMN lint_runs.outcome_problem IS 'runs.outcome_problem: why the linter crashes where it reads the outcome (NULL: it does not).';
COMMENT ON COLUMN lint_runs.evidence_problem IS 'runs.evidence_problem: why the linter crashes where it reads the evidence (NULL: it does not).';
COMMENT ON COLUMN lint_runs.delegations_problem IS 'runs.delegations_problem: why the linter crashes where it reads the delegations (NULL: it does not).';
