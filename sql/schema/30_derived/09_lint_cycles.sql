-- Derived relation 9 of 13 (groundwork/checks/derived.py: the files of this folder, in
-- file name order, each after what it reads). One CREATE OR REPLACE VIEW, then its documentation.
CREATE OR REPLACE VIEW lint_cycles AS
SELECT s.invocation_id, t.run_key, t.ord, s.line_no, s.name_json, s.span_id
FROM (SELECT run_key, min(ord) AS ord FROM lint_tree WHERE cycle GROUP BY run_key) t
JOIN lint_spans s ON s.run_key = t.run_key AND s.ord = t.ord;
COMMENT ON VIEW lint_cycles IS 'Runs whose span tree has a span-id cycle reachable from the root: the workbench linter never returns (docs/rules.md#gw1). ord/span_id name the first span record that closes a cycle.';
COMMENT ON COLUMN lint_cycles.invocation_id IS 'The run.';
COMMENT ON COLUMN lint_cycles.run_key IS 'lint_runs.run_key of the run.';
COMMENT ON COLUMN lint_cycles.ord IS '0-based position in file / discovery / list order.';
COMMENT ON COLUMN lint_cycles.line_no IS '1-based line of spans.jsonl.';
COMMENT ON COLUMN lint_cycles.name_json IS 'Raw JSON of the span name, for repr.';
COMMENT ON COLUMN lint_cycles.span_id IS 'Span id without 0x.';
