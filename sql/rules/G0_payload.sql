-- code: G0
-- title: A payload is an object with schema_class and grounded_on at its root
-- kind: rule
-- step: 5
-- modes: all
-- needs_succeeded: false
-- order: check_no
-- docs/rules.md#g0_payload: key presence only; the two "lacks" checks are independent.
SELECT invocation_id, 0 AS check_no, 'not_object' AS problem,
       CAST(NULL AS STRING) AS schema_class_json
FROM lint_judged
WHERE mode_valid AND payload_type IS NOT NULL AND payload_type <> 'object'
UNION ALL
SELECT invocation_id, 1, 'lacks_schema_class', NULL
FROM lint_judged
WHERE mode_valid AND payload_type = 'object' AND NOT payload_has_schema_class
UNION ALL
SELECT invocation_id, 2, 'lacks_grounded_on', payload_schema_class_json
FROM lint_judged
WHERE mode_valid AND payload_type = 'object' AND NOT payload_has_grounded_on
