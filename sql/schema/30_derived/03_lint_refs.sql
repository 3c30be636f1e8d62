-- Derived relation 3 of 13 (groundwork/checks/derived.py: the files of this folder, in
-- file name order, each after what it reads). One CREATE OR REPLACE VIEW, then its documentation.
CREATE OR REPLACE VIEW lint_refs AS
SELECT p.invocation_id, lint_runs.run_key, p.ord, p.kind, p.source_id, p.content_hash, p.value_json,
       -- the one character a VARCHAR puts in a lone surrogate's place: U+FFFD, written as itself
       CASE WHEN p.kind = 'ref' AND instr(p.source_id, '�') > 0 THEN p.value_json END AS ref_json
FROM payload_refs p JOIN lint_runs USING (invocation_id);
COMMENT ON VIEW lint_refs IS 'Everything the grounded_on walk found (docs/rules.md#grounded-references), in discovery order: kind ref, malformed or not_list.';
COMMENT ON COLUMN lint_refs.invocation_id IS 'The run.';
COMMENT ON COLUMN lint_refs.run_key IS 'lint_runs.run_key of the run.';
COMMENT ON COLUMN lint_refs.ord IS '0-based position in file / discovery / list order.';
COMMENT ON COLUMN lint_refs.kind IS 'ref, malformed or not_list.';
COMMENT ON COLUMN lint_refs.source_id IS 'str() of the source id (the string None when absent).';
COMMENT ON COLUMN lint_refs.content_hash IS 'str() of the content hash (the string None when absent).';
COMMENT ON COLUMN lint_refs.value_json IS 'Raw JSON of the element or value, for repr.';
COMMENT ON COLUMN lint_refs.ref_json IS 'value_json of a reference whose source_id holds U+FFFD (maybe a lone surrogate the VARCHAR could not hold), else NULL: a message reprs the source id from it (docs/rules.md#repr).';
