-- Derived relation 11 of 13 (groundwork/checks/derived.py: the files of this folder, in
-- file name order, each after what it reads). One CREATE OR REPLACE VIEW, then its documentation.
CREATE OR REPLACE VIEW lint_retrieved AS
SELECT DISTINCT invocation_id, run_key, source_id, content_hash
FROM lint_tree WHERE name = 'retrieval';
COMMENT ON VIEW lint_retrieved IS 'The set `retrieved` of docs/rules.md#derived-relations: (str(dd.source_id), str(dd.content_hash)) over retrieval descendants.';
COMMENT ON COLUMN lint_retrieved.invocation_id IS 'The run.';
COMMENT ON COLUMN lint_retrieved.run_key IS 'lint_runs.run_key of the run.';
COMMENT ON COLUMN lint_retrieved.source_id IS 'str() of the source id (the string None when absent).';
COMMENT ON COLUMN lint_retrieved.content_hash IS 'str() of the content hash (the string None when absent).';
