-- Derived relation 5 of 13 (groundwork/checks/derived.py: the files of this folder, in
-- file name order, each after what it reads). One CREATE OR REPLACE VIEW, then its documentation.
CREATE OR REPLACE VIEW lint_evidence AS
SELECT e.invocation_id, lint_runs.run_key, e.ord, e.source_id, e.source_id_json, e.content_hash,
       e.canonicalisation_json, e.content_type, e.computed_hash, e.canonical_error
FROM evidence e JOIN lint_runs USING (invocation_id);
COMMENT ON VIEW lint_evidence IS 'Evidence elements of lintable runs in order; (source_id, content_hash) are the evidence pairs of docs/rules.md#derived-relations.';
COMMENT ON COLUMN lint_evidence.invocation_id IS 'The run.';
COMMENT ON COLUMN lint_evidence.run_key IS 'lint_runs.run_key of the run.';
COMMENT ON COLUMN lint_evidence.ord IS '0-based position in file / discovery / list order.';
COMMENT ON COLUMN lint_evidence.source_id IS 'str() of the source id (the string None when absent).';
COMMENT ON COLUMN lint_evidence.source_id_json IS 'Raw JSON of source_id (null when absent), for repr.';
COMMENT ON COLUMN lint_evidence.content_hash IS 'str() of the content hash (the string None when absent).';
COMMENT ON COLUMN lint_evidence.canonicalisation_json IS 'Raw JSON of canonicalisation (null when absent), for repr.';
COMMENT ON COLUMN lint_evidence.content_type IS 'JSON type of content; NULL when absent or null (E1 skips those).';
COMMENT ON COLUMN lint_evidence.computed_hash IS 'Hash of content under its canonicalisation; NULL when not an object or hashing failed.';
COMMENT ON COLUMN lint_evidence.canonical_error IS 'Hashing error text (E1).';
