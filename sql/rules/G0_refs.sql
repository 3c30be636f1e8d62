-- code: G0
-- title: Every grounded_on value is a list of objects with string source_id and content_hash
-- kind: rule
-- step: 6
-- modes: all
-- needs_succeeded: false
-- order: ord
-- docs/rules.md#g0_refs over the walk of docs/rules.md#grounded-references (done by ingest into payload_refs).
SELECT f.invocation_id, f.ord, f.kind AS problem, f.value_json
FROM lint_refs f
JOIN lint_judged j USING (run_key)
WHERE j.mode_valid AND f.kind IN ('malformed', 'not_list')
