-- Derived relation 7 of 13 (groundwork/checks/derived.py: the files of this folder, in
-- file name order, each after what it reads). One CREATE OR REPLACE VIEW, then its documentation.
CREATE OR REPLACE VIEW lint_delegations AS
SELECT d.invocation_id, lint_runs.run_key, d.ord, d.delegated_invocation_id, d.content_hash
FROM delegations d JOIN lint_runs USING (invocation_id);
COMMENT ON VIEW lint_delegations IS 'Object entries of envelope.delegations of lintable runs.';
COMMENT ON COLUMN lint_delegations.invocation_id IS 'The run.';
COMMENT ON COLUMN lint_delegations.run_key IS 'lint_runs.run_key of the run.';
COMMENT ON COLUMN lint_delegations.ord IS '0-based position in file / discovery / list order.';
COMMENT ON COLUMN lint_delegations.delegated_invocation_id IS 'str() of the child invocation id.';
COMMENT ON COLUMN lint_delegations.content_hash IS 'str() of the content hash (the string None when absent).';
