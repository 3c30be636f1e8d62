-- code: G0
-- title: Every other span is in the invocation's trace, descends from invoke_agent and sets no conductor key
-- kind: rule
-- step: 2
-- modes: all
-- needs_succeeded: false
-- order: ord, check_no
-- docs/rules.md#g0_tree, file order; per span first the trace/descent check, then the conductor keys.
-- A span "descends" when its span_id is the id of some descendant (the workbench compares ids).
-- Runs with an invalid mode are left out: step 3 discards these findings.
-- A child of the root (parent_id = the root's id) is a descendant itself, so only the other
-- spans need the look-up.
WITH checked AS (
    SELECT s.*, j.root_trace_id, j.root_span_id
    FROM lint_spans s
    JOIN lint_judged j USING (run_key)
    WHERE j.mode_valid AND s.ord <> j.root_ord
)
SELECT c.invocation_id, c.ord, 0 AS check_no,
       CASE WHEN c.trace_id <> c.root_trace_id THEN 'foreign_trace' ELSE 'not_descendant' END AS problem,
       c.name_json, c.span_id, c.trace_id, c.root_trace_id,
       CAST(NULL AS STRING) AS conductor_keys
FROM checked c
WHERE c.trace_id <> c.root_trace_id
   OR (c.parent_id IS DISTINCT FROM c.root_span_id
       AND NOT EXISTS (SELECT 1 FROM lint_tree d WHERE d.run_key = c.run_key AND d.span_id = c.span_id))
UNION ALL
SELECT c.invocation_id, c.ord, 1 AS check_no, 'conductor_keys' AS problem,
       c.name_json, c.span_id, c.trace_id, c.root_trace_id,
       concat_ws(', ',
                 CASE WHEN c.dd_grounding_mode IS NOT NULL THEN 'dd.grounding_mode' END,
                 CASE WHEN c.dd_input_hash IS NOT NULL THEN 'dd.input_hash' END,
                 CASE WHEN c.dd_outcome IS NOT NULL THEN 'dd.outcome' END) AS conductor_keys
FROM checked c
WHERE c.dd_grounding_mode IS NOT NULL OR c.dd_input_hash IS NOT NULL OR c.dd_outcome IS NOT NULL
