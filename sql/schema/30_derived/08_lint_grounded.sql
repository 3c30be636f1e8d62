-- Derived relation 8 of 13 (groundwork/checks/derived.py: the files of this folder, in
-- file name order, each after what it reads). One CREATE OR REPLACE VIEW, then its documentation.
CREATE OR REPLACE VIEW lint_grounded AS
SELECT invocation_id, run_key, ord, source_id, content_hash, ref_json
FROM lint_refs WHERE kind = 'ref';
COMMENT ON VIEW lint_grounded IS 'The list `grounded` of docs/rules.md#derived-relations: well-formed (source_id, content_hash) references in discovery order.';
COMMENT ON COLUMN lint_grounded.invocation_id IS 'The run.';
COMMENT ON COLUMN lint_grounded.run_key IS 'lint_runs.run_key of the run.';
COMMENT ON COLUMN lint_grounded.ord IS '0-based position in file / discovery / list order.';
COMMENT ON COLUMN lint_grounded.source_id IS 'str() of the source id (the string None when absent).';
COMMENT ON COLUMN lint_grounded.content_hash IS 'str() of the content hash (the string None when absent).';
COMMENT ON COLUMN lint_grounded.ref_json IS 'Raw JSON of the reference when its source_id holds U+FFFD (maybe a lone surrogate the VARCHAR could not hold), else NULL: a message reprs the source id from it (docs/rules.md#repr).';
