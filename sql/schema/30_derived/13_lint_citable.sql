-- Derived relation 13 of 13 (groundwork/checks/derived.py: the files of this folder, in
-- file name order, each after what it reads). One CREATE OR REPLACE VIEW, then its documentation.
CREATE OR REPLACE VIEW lint_citable AS
SELECT invocation_id, run_key, input_sid AS source_id, input_hash AS content_hash
FROM lint_judged WHERE mode = 'delegation'
UNION ALL
SELECT d.invocation_id, d.run_key, 'invocation:' || coalesce(d.delegated_invocation_id, 'None'), coalesce(d.content_hash, 'None')
FROM lint_delegations d JOIN lint_judged j USING (run_key)
WHERE j.mode = 'delegation';
COMMENT ON VIEW lint_citable IS 'The set `citable` of docs/rules.md#derived-relations for delegation-mode runs: the input pair and one pair per recorded delegation (a pair may repeat).';
COMMENT ON COLUMN lint_citable.invocation_id IS 'The run.';
COMMENT ON COLUMN lint_citable.run_key IS 'lint_runs.run_key of the run.';
COMMENT ON COLUMN lint_citable.source_id IS 'str() of the source id (the string None when absent).';
COMMENT ON COLUMN lint_citable.content_hash IS 'str() of the content hash (the string None when absent).';
